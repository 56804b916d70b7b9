package session

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/zeroclaw-go/zeroclaw/internal/api"
	"github.com/zeroclaw-go/zeroclaw/internal/config"
	"github.com/zeroclaw-go/zeroclaw/internal/cost"
	"github.com/zeroclaw-go/zeroclaw/internal/store"
)

var admin = Owner{Principal: "operator", Admin: true, ConnID: 1}

// env is a Manager over real stores in a temp install root.
type env struct {
	t     *testing.T
	root  string
	chat  *store.ChatStore
	costs *store.CostLedger
	cfg   atomic.Pointer[config.Config]
	m     *Manager
	opts  Options
}

// newEnv starts from the fresh-install config (echo provider, supervised, workspace_only) after mutate.
func newEnv(t *testing.T, mutate func(*config.Config), tweak ...func(*Options)) *env {
	t.Helper()
	root := t.TempDir()
	chat, err := store.OpenChat(t.Context(), filepath.Join(root, "data", "sessions", "sessions.db"))
	if err != nil {
		t.Fatal(err)
	}
	e := &env{t: t, root: root, chat: chat, costs: store.OpenCostLedger(filepath.Join(root, "data", "state", "costs.jsonl"))}
	cfg := config.Default()
	if mutate != nil {
		mutate(cfg)
	}
	e.cfg.Store(cfg)
	e.opts = Options{Chat: chat, Cost: cost.NewTracker(cost.Options{Ledger: e.costs, Config: e.cfg.Load}), Config: e.cfg.Load, InstallRoot: root}
	for _, f := range tweak {
		f(&e.opts)
	}
	e.m = NewManager(e.opts)
	t.Cleanup(func() {
		e.m.Shutdown(context.WithoutCancel(t.Context()))
		e.costs.Close()
		chat.Close()
	})
	return e
}

// restart replaces the Manager with a fresh one on the same stores, as a daemon restart would.
func (e *env) restart() {
	e.m.Shutdown(e.t.Context())
	e.m = NewManager(e.opts)
}

func (e *env) open(o Owner, p api.SessionNewParams) api.SessionNewResult {
	e.t.Helper()
	res, err := e.m.New(e.t.Context(), o, p)
	if err != nil {
		e.t.Fatalf("New: %v", err)
	}
	return res
}

// prompt runs one turn as admin and checks turn_complete is the last event.
func (e *env) prompt(id, text string, s *sink) api.SessionPromptResult {
	e.t.Helper()
	res, err := e.m.Prompt(e.t.Context(), admin, api.SessionPromptParams{SessionID: id, Prompt: text}, s)
	if err != nil {
		e.t.Fatalf("Prompt: %v", err)
	}
	s.checkComplete(e.t, res)
	return res
}

func (e *env) workspace() string { return filepath.Join(e.root, "agents", "default", "workspace") }

func (e *env) costLines() []store.CostRecord {
	e.t.Helper()
	f, err := os.Open(filepath.Join(e.root, "data", "state", "costs.jsonl"))
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		e.t.Fatal(err)
	}
	defer f.Close()
	var out []store.CostRecord
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var r store.CostRecord
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			e.t.Fatalf("costs.jsonl line %q: %v", sc.Text(), err)
		}
		out = append(out, r)
	}
	return out
}

// sink records events; onUpdate, when set, runs synchronously inside Update (it must not block).
type sink struct {
	mu       sync.Mutex
	events   []api.SessionUpdate
	onUpdate func(ev api.SessionUpdate)
	elicit   func(ctx context.Context, p api.ElicitationParams) (api.ElicitationResult, error)
	asked    []api.ElicitationParams
}

func (s *sink) Update(ev api.SessionUpdate) {
	s.mu.Lock()
	s.events = append(s.events, ev)
	f := s.onUpdate
	s.mu.Unlock()
	if f != nil {
		f(ev)
	}
}

func (s *sink) Elicit(ctx context.Context, p api.ElicitationParams) (api.ElicitationResult, error) {
	s.mu.Lock()
	s.asked = append(s.asked, p)
	f := s.elicit
	s.mu.Unlock()
	if f == nil {
		return api.ElicitationResult{}, ErrNoElicitation
	}
	return f(ctx, p)
}

func (s *sink) of(typ string) []api.SessionUpdate {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []api.SessionUpdate
	for _, ev := range s.events {
		if ev.Type == typ {
			out = append(out, ev)
		}
	}
	return out
}

func (s *sink) types() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for _, ev := range s.events {
		out = append(out, ev.Type)
	}
	return out
}

// checkComplete asserts exactly one turn_complete, last, matching the Prompt result and naming the session.
func (s *sink) checkComplete(t *testing.T, res api.SessionPromptResult) {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.events) == 0 {
		t.Fatal("no events")
	}
	n := 0
	for _, ev := range s.events {
		if ev.SessionID != res.SessionID {
			t.Fatalf("event %+v names session %q, want %q", ev, ev.SessionID, res.SessionID)
		}
		if ev.Type == api.UpdateTurnComplete {
			n++
		}
	}
	last := s.events[len(s.events)-1]
	if n != 1 || last.Type != api.UpdateTurnComplete || last.Outcome != res.Outcome || last.Content == nil || *last.Content != res.Content {
		t.Fatalf("turn_complete must be the single last event matching %+v; got %d, last %+v", res, n, last)
	}
}

func (s *sink) reset() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.events = nil
	s.asked = nil
}

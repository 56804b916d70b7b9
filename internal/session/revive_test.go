package session

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/zeroclaw-go/zeroclaw/internal/api"
	"github.com/zeroclaw-go/zeroclaw/internal/config"
)

// An idle session dropped from memory to make room is invisible to its owner: every call that names it brings it
// back from the store (prompt with its history, messages, state, cancel, configure, git_branch, fs/list_dir,
// file targets), while another principal is still refused.
func TestEvictedSessionComesBackOnEveryCall(t *testing.T) {
	e := newEnv(t, nil, func(o *Options) { o.MaxSessions = 2 })
	ctx := t.Context()
	alice := Owner{Principal: "alice", ConnID: 7}
	mallory := Owner{Principal: "mallory", ConnID: 9}
	e.open(alice, api.SessionNewParams{SessionID: "kept"})
	if res, err := e.m.Prompt(ctx, alice, api.SessionPromptParams{SessionID: "kept", Prompt: "first words"}, &sink{}); err != nil || res.Outcome != api.OutcomeCompleted {
		t.Fatalf("first prompt = %+v, %v", res, err)
	}
	fillers := 0
	evict := func(what string) {
		t.Helper()
		for range 2 {
			fillers++
			e.open(admin, api.SessionNewParams{SessionID: fmt.Sprintf("filler-%d", fillers)})
		}
		if slices.Contains(e.m.ActiveIDs(), "kept") {
			t.Fatalf("before %s: kept is still live, the test would prove nothing", what)
		}
	}

	evict("prompt")
	sk := &sink{}
	res, err := e.m.Prompt(ctx, alice, api.SessionPromptParams{SessionID: "kept", Prompt: "second words"}, sk)
	if err != nil || res.Outcome != api.OutcomeCompleted {
		t.Fatalf("prompt on the evicted session = %+v, %v; want completed", res, err)
	}
	sk.checkComplete(t, res)

	evict("messages")
	msgs, err := e.m.Messages(ctx, alice, api.SessionMessagesParams{SessionID: "kept"})
	if err != nil || msgs.Total != 4 || msgs.Messages[0].Content != "first words" || msgs.Messages[2].Content != "second words" {
		t.Fatalf("messages = %+v, %v; want both turns, in order", msgs, err)
	}
	evict("state")
	if st, err := e.m.State(ctx, alice, "kept"); err != nil || st.State != stateIdle {
		t.Fatalf("state = %+v, %v", st, err)
	}
	evict("cancel")
	if _, err := e.m.Cancel(alice, "kept"); !errors.Is(err, ErrNoActiveTurn) {
		t.Fatalf("cancel = %v, want ErrNoActiveTurn (as for a live idle session)", err)
	}
	evict("git_branch")
	if _, err := e.m.GitBranch(ctx, alice, "kept"); err != nil {
		t.Fatalf("git_branch = %v", err)
	}
	evict("fs/list_dir")
	if _, err := e.m.ListDir(ctx, alice, api.FsListDirParams{SessionID: "kept"}); err != nil {
		t.Fatalf("fs/list_dir = %v", err)
	}
	evict("a file target")
	if tg, err := e.m.FileTarget(alice, "kept"); err != nil || tg.SessionID != "kept" || tg.Owner != "alice" {
		t.Fatalf("file target = %+v, %v", tg, err)
	}
	// A file target is memory-only state: the session is no longer dropped to make room (only after the TTL).
	for range 2 {
		fillers++
		e.open(admin, api.SessionNewParams{SessionID: fmt.Sprintf("filler-%d", fillers)})
	}
	if !slices.Contains(e.m.ActiveIDs(), "kept") {
		t.Fatalf("a session holding a file target was dropped to make room: %v", e.m.ActiveIDs())
	}

	// Another principal may not bring it back, nor learn more than that it is not theirs.
	for name, call := range map[string]func() error{
		"prompt": func() error {
			_, err := e.m.Prompt(ctx, mallory, api.SessionPromptParams{SessionID: "filler-1", Prompt: "hi"}, &sink{})
			return err
		},
		"configure": func() error {
			_, err := e.m.Configure(ctx, mallory, "filler-1", api.SessionOverrides{Model: new("m")})
			return err
		},
		"fs/list_dir": func() error {
			_, err := e.m.ListDir(ctx, mallory, api.FsListDirParams{SessionID: "filler-1"})
			return err
		},
	} {
		if err := call(); !errors.Is(err, ErrNotOwned) {
			t.Errorf("mallory %s on the admin's evicted session = %v, want ErrNotOwned", name, err)
		}
	}
	if slices.Contains(e.m.ActiveIDs(), "filler-1") {
		t.Errorf("a refused call left filler-1 live")
	}
	// An id no store knows is still unknown.
	if _, err := e.m.Prompt(ctx, alice, api.SessionPromptParams{SessionID: "never-made", Prompt: "hi"}, &sink{}); !errors.Is(err, ErrNotFound) {
		t.Fatalf("prompt on an unknown id = %v, want ErrNotFound", err)
	}
}

// session/configure overrides live in memory only: a configured session keeps them, because room for new
// sessions is never made by dropping it.
func TestConfiguredSessionIsNotDroppedForRoom(t *testing.T) {
	e := newEnv(t, nil, func(o *Options) { o.MaxSessions = 2 })
	ctx := t.Context()
	e.open(admin, api.SessionNewParams{SessionID: "tuned"})
	e.open(admin, api.SessionNewParams{SessionID: "a"})
	e.open(admin, api.SessionNewParams{SessionID: "b"}) // drops tuned (the least recently used)
	if slices.Contains(e.m.ActiveIDs(), "tuned") {
		t.Fatal("tuned still live")
	}
	temp := 0.5
	if _, err := e.m.Configure(ctx, admin, "tuned", api.SessionOverrides{Temperature: &temp}); err != nil {
		t.Fatalf("configure on the evicted session = %v", err)
	}
	e.open(admin, api.SessionNewParams{SessionID: "c"})
	e.open(admin, api.SessionNewParams{SessionID: "d"})
	if !slices.Contains(e.m.ActiveIDs(), "tuned") {
		t.Fatalf("the configured session was dropped for room: %v", e.m.ActiveIDs())
	}
	res, err := e.m.Configure(ctx, admin, "tuned", api.SessionOverrides{})
	if err != nil || res.Overrides.Temperature == nil || *res.Overrides.Temperature != 0.5 {
		t.Fatalf("overrides after other sessions came and went = %+v, %v", res, err)
	}
}

// Sessions prompted at once all complete, below and above the live-session cap: with [acp] max_sessions at 1,000,
// 1,000 turns are streaming at the same moment (a barrier holds each turn's first chunk until all have one); with
// a cap of 16, 300 prompts on sessions mostly dropped from memory revive them, waiting for room instead of failing.
func TestThousandConcurrentSessions(t *testing.T) {
	for _, tc := range []struct {
		name    string
		n, cap  int  // sessions, [acp] max_sessions
		barrier bool // hold each first chunk until every turn has one
	}{{"all streaming at once", 1000, 1000, true}, {"waiting for room", 300, 16, false}} {
		t.Run(tc.name, func(t *testing.T) {
			n := tc.n
			e := newEnv(t, func(c *config.Config) { c.ACP.MaxSessions = tc.cap })
			ctx := t.Context()
			for i := range n {
				e.open(admin, api.SessionNewParams{SessionID: fmt.Sprintf("s-%04d", i)})
			}
			if got := len(e.m.ActiveIDs()); got != min(n, tc.cap) {
				t.Fatalf("%d live sessions after %d opens, want the cap %d", got, n, min(n, tc.cap))
			}
			var streaming sync.WaitGroup
			streaming.Add(n)
			allStreaming := make(chan struct{})
			go func() { streaming.Wait(); close(allStreaming) }()
			var failed atomic.Int32
			var wg sync.WaitGroup
			for i := range n {
				wg.Go(func() {
					var once sync.Once
					sk := &sink{onUpdate: func(ev api.SessionUpdate) {
						if ev.Type != api.UpdateAgentMessageChunk || !tc.barrier {
							return
						}
						once.Do(func() {
							streaming.Done()
							select {
							case <-allStreaming:
							case <-time.After(2 * time.Minute): // a guard against a hung test, not a timing assertion
							}
						})
					}}
					id := fmt.Sprintf("s-%04d", i)
					res, err := e.m.Prompt(ctx, admin, api.SessionPromptParams{SessionID: id, Prompt: "hello " + id}, sk)
					if err != nil || res.Outcome != api.OutcomeCompleted || res.Content != "hello "+id {
						if failed.Add(1) <= 3 {
							t.Errorf("prompt %s = %+v, %v", id, res, err)
						}
					}
				})
			}
			wg.Wait()
			if tc.barrier {
				select {
				case <-allStreaming:
				default:
					t.Fatal("not every turn streamed at once")
				}
			}
			if f := failed.Load(); f != 0 {
				t.Fatalf("%d of %d prompts failed", f, n)
			}
			if got := len(e.m.ActiveIDs()); got > tc.cap {
				t.Fatalf("%d live sessions, over the cap %d", got, tc.cap)
			}
		})
	}
}

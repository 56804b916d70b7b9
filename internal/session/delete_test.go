package session

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/zeroclaw-go/zeroclaw/internal/api"
	"github.com/zeroclaw-go/zeroclaw/internal/config"
	"github.com/zeroclaw-go/zeroclaw/internal/store"
)

// signalHandler closes seen the first time a record with message msg is logged.
type signalHandler struct {
	msg  string
	seen chan struct{}
}

func (h signalHandler) Enabled(context.Context, slog.Level) bool { return true }
func (h signalHandler) WithAttrs([]slog.Attr) slog.Handler       { return h }
func (h signalHandler) WithGroup(string) slog.Handler            { return h }
func (h signalHandler) Handle(_ context.Context, r slog.Record) error {
	if r.Message == h.msg {
		select {
		case <-h.seen:
		default:
			close(h.seen)
		}
	}
	return nil
}

func fullProfile(c *config.Config) {
	rp := c.RiskProfiles["supervised"]
	rp.Level = config.LevelFull
	c.RiskProfiles["supervised"] = rp
}

// session/delete during a turn: the cancelled turn still writes its last messages (the tool result, the
// state), and those writes must not land after the delete and bring the session back as a stub.
func TestDeleteDuringTurnLeavesNothingBehind(t *testing.T) {
	waiting := signalHandler{msg: "delete: waiting for the running turn", seen: make(chan struct{})}
	e := newEnv(t, fullProfile, func(o *Options) { o.Logger = slog.New(waiting) })
	ctx := t.Context()
	s := e.open(admin, api.SessionNewParams{})

	held, hold := make(chan struct{}), make(chan struct{})
	sk := &sink{onUpdate: func(ev api.SessionUpdate) {
		if ev.Type == api.UpdateToolCall {
			close(held)
			<-hold // the turn stops here, before its tool runs and its result is stored
		}
	}}
	prompted := make(chan error, 1)
	go func() {
		_, err := e.m.Prompt(ctx, admin, api.SessionPromptParams{SessionID: s.SessionID, Prompt: `/tool shell {"command":"true"}`}, sk)
		prompted <- err
	}()
	<-held
	deleted := make(chan error, 1)
	go func() {
		_, err := e.m.Delete(ctx, admin, s.SessionID)
		deleted <- err
	}()
	select {
	case err := <-deleted: // Delete did not wait for the turn it cancelled
		if err != nil {
			t.Fatal(err)
		}
		close(hold)
	case <-waiting.seen:
		close(hold)
		if err := <-deleted; err != nil {
			t.Fatal(err)
		}
	}
	if err := <-prompted; err != nil {
		t.Fatal(err)
	}
	if meta, err := e.chat.Meta(ctx, store.RPCKey(s.SessionID)); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("deleted session came back: %+v, %v", meta, err)
	}
	if rows, err := e.chat.All(ctx, store.RPCKey(s.SessionID)); err != nil || len(rows) != 0 {
		t.Fatalf("deleted session has rows %+v, %v", rows, err)
	}
}

// session/close then session/new with the same id while the closed session's turn is still winding down: the
// revived session's first turn waits for it, so the two turns' messages are not interleaved in the store.
func TestRevivedSessionTurnWaitsForTheClosedOnesTurn(t *testing.T) {
	e := newEnv(t, fullProfile)
	ctx := t.Context()
	s := e.open(admin, api.SessionNewParams{SessionID: "reborn"})

	held, hold := make(chan struct{}), make(chan struct{})
	sk := &sink{onUpdate: func(ev api.SessionUpdate) {
		if ev.Type == api.UpdateToolCall {
			close(held)
			<-hold
		}
	}}
	first := make(chan error, 1)
	go func() {
		_, err := e.m.Prompt(ctx, admin, api.SessionPromptParams{SessionID: s.SessionID, Prompt: `/tool shell {"command":"true"}`}, sk)
		first <- err
	}()
	<-held
	if _, err := e.m.Close(admin, s.SessionID); err != nil {
		t.Fatal(err)
	}
	e.open(admin, api.SessionNewParams{SessionID: "reborn"})
	revived, err := e.m.live("reborn")
	if err != nil {
		t.Fatal(err)
	}
	second := make(chan error, 1)
	go func() {
		_, err := e.m.Prompt(ctx, admin, api.SessionPromptParams{SessionID: "reborn", Prompt: "after"}, &sink{})
		second <- err
	}()
	secondDone := false
	select {
	case err := <-second:
		secondDone = true
		t.Errorf("the revived session ran a turn (%v) while the closed session's turn was still running", err)
	case <-waitUntil(t, func() bool {
		revived.mu.Lock()
		defer revived.mu.Unlock()
		return revived.queued == 1 && revived.active == nil
	}):
	}
	close(hold)
	if err := <-first; err != nil {
		t.Fatal(err)
	}
	if !secondDone {
		if err := <-second; err != nil {
			t.Fatal(err)
		}
	}
	rows, err := e.chat.All(ctx, store.RPCKey("reborn"))
	if err != nil {
		t.Fatal(err)
	}
	var roles []string
	for _, r := range rows {
		roles = append(roles, r.Role)
	}
	if got := strings.Join(roles, ","); got != "user,assistant,tool,user,assistant" {
		t.Fatalf("stored roles %s: the two turns interleaved", got)
	}
}

// waitUntil closes the returned channel once cond holds (polling; it never asserts on time). The poller
// stops at the end of the test.
func waitUntil(t *testing.T, cond func() bool) <-chan struct{} {
	ch := make(chan struct{})
	stop := make(chan struct{})
	t.Cleanup(func() { close(stop) })
	go func() {
		for !cond() {
			select {
			case <-stop:
				return
			case <-time.After(time.Millisecond):
			}
		}
		close(ch)
	}()
	return ch
}

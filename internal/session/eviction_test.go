package session

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/zeroclaw-go/zeroclaw/internal/api"
	"github.com/zeroclaw-go/zeroclaw/internal/clock"
)

// gateHandler is a slog handler that blocks the first record with message msg until release is closed,
// signalling entered when it starts waiting. It lets a test hold a goroutine at a logged point.
type gateHandler struct {
	msg     string
	once    *sync.Once
	entered chan struct{}
	release chan struct{}
}

func (h gateHandler) Enabled(context.Context, slog.Level) bool { return true }
func (h gateHandler) WithAttrs([]slog.Attr) slog.Handler       { return h }
func (h gateHandler) WithGroup(string) slog.Handler            { return h }
func (h gateHandler) Handle(_ context.Context, r slog.Record) error {
	if r.Message != h.msg {
		return nil
	}
	h.once.Do(func() {
		close(h.entered)
		<-h.release
	})
	return nil
}

// funcClock is clock.Clock with its Now replaced.
type funcClock struct {
	clock.Clock
	now func() time.Time
}

func (c funcClock) Now() time.Time { return c.now() }

// A prompt that looked the session up is never left with a dropped session (its approvals unanswerable, the
// turn cancelled by the eviction): the lookup pins it, so a New that needs room while the prompt is between
// lookup and queue waits for it instead of dropping it, and gets the room once the turn has ended.
func TestPromptRacingEvictionIsNotRunOnADroppedSession(t *testing.T) {
	var (
		fakeNow atomic.Int64
		gateNow atomic.Bool
		nowHeld = make(chan struct{})
		nowGo   = make(chan struct{})
		nowOnce sync.Once
		waiting = gateHandler{msg: "live sessions at the limit, none idle: waiting for room", once: &sync.Once{}, entered: make(chan struct{}), release: make(chan struct{})}
	)
	close(waiting.release) // only signal, never hold
	fakeNow.Store(time.Unix(1_700_000_000, 0).UnixNano())
	e := newEnv(t, nil, func(o *Options) {
		o.MaxSessions = 1
		o.Logger = slog.New(waiting)
		o.Clock = funcClock{Clock: clock.Real, now: func() time.Time {
			if gateNow.Load() {
				nowOnce.Do(func() { close(nowHeld); <-nowGo })
			}
			return time.Unix(0, fakeNow.Add(int64(time.Millisecond)))
		}}
	})
	ctx := t.Context()
	e.open(admin, api.SessionNewParams{SessionID: "victim"})

	approvals := make(chan string, 1)
	sk := &sink{onUpdate: func(ev api.SessionUpdate) {
		if ev.Type == api.UpdateApprovalRequest {
			approvals <- ev.RequestID
		}
	}}
	type result struct {
		res api.SessionPromptResult
		err error
	}
	prompted := make(chan result, 1)
	gateNow.Store(true)
	go func() {
		res, err := e.m.Prompt(ctx, admin, api.SessionPromptParams{SessionID: "victim", Prompt: `/tool shell {"command":"true"}`}, sk)
		prompted <- result{res, err}
	}()
	<-nowHeld // Prompt found the live session and is about to enqueue
	gateNow.Store(false)

	opened := make(chan error, 1)
	go func() {
		_, err := e.m.New(ctx, admin, api.SessionNewParams{SessionID: "newcomer"})
		opened <- err
	}()
	<-waiting.entered // New found no room: the looked-up session was not dropped
	if ids := e.m.ActiveIDs(); len(ids) != 1 || ids[0] != "victim" {
		t.Fatalf("live sessions %v while the prompt holds victim, want [victim]", ids)
	}
	close(nowGo) // let the prompt enqueue now

	req := <-approvals // the turn runs on victim, still live and answerable
	if _, err := e.m.Approve(admin, api.SessionApproveParams{SessionID: "victim", RequestID: req, Decision: api.DecisionAllowOnce}); err != nil {
		t.Fatalf("approving the running turn's request = %v", err)
	}
	if r := <-prompted; r.err != nil || r.res.Outcome != api.OutcomeCompleted {
		t.Fatalf("admitted prompt ended %+v, %v; want completed", r.res, r.err)
	}
	if err := <-opened; err != nil {
		t.Fatalf("New(newcomer) after the turn = %v; want the room victim left", err)
	}
	if ids := e.m.ActiveIDs(); len(ids) != 1 || ids[0] != "newcomer" {
		t.Fatalf("live sessions %v, want [newcomer]", ids)
	}
}

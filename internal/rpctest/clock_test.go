package rpctest

import (
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/zeroclaw-go/zeroclaw/internal/agent"
	"github.com/zeroclaw-go/zeroclaw/internal/api"
	"github.com/zeroclaw-go/zeroclaw/internal/clock/clocktest"
	"github.com/zeroclaw-go/zeroclaw/internal/config"
)

// The clock, id source and provider constructor given to the harness reach the daemon's domains: uptime and
// message stamps follow the test's clock, ids come from the test's source, turns build their provider through
// the hook.
func TestInjectedClockIDsAndProvider(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	clk := clocktest.New(t0)
	var n atomic.Int64
	var mu sync.Mutex
	var refs []string
	d := Start(t, WithConfig(agentConfig(echoTOML, "echo.default", "full", "")), WithClock(clk),
		WithNewID(func() string { return fmt.Sprintf("id-%d", n.Add(1)) }),
		WithNewProvider(func(cfg *config.Config, ref string) (agent.Provider, error) {
			mu.Lock()
			refs = append(refs, ref)
			mu.Unlock()
			return agent.NewProvider(cfg, ref)
		}))
	c := dialRC(t, d, "")
	var tuis api.TUIListResult
	c.mustCall(api.MethodTUIList, struct{}{}, &tuis)
	if len(tuis.TUIs) != 1 || tuis.TUIs[0].TUIID != "tui-id-1" || tuis.TUIs[0].ConnectedAt != t0.Format(time.RFC3339) {
		t.Fatalf("tui/list = %+v, want tui-id-1 connected at %s", tuis, t0.Format(time.RFC3339))
	}

	clk.Advance(90 * time.Second)
	var st api.StatusResult
	c.mustCall(api.MethodStatus, struct{}{}, &st)
	if st.UptimeSecs != 90 {
		t.Fatalf("uptime_secs = %d after the clock moved 90 s", st.UptimeSecs)
	}
	s := c.newSession(api.SessionNewParams{})
	if s.SessionID != "id-2" {
		t.Fatalf("session id %q, want id-2 from the injected source", s.SessionID)
	}
	if tr := c.prompt(s.SessionID, "hello", hooks{}); tr.err != nil || tr.result.Content != "hello" {
		t.Fatalf("prompt: %+v %s", tr.result, tr.err)
	}
	msgs := c.messages(s.SessionID)
	want := t0.Add(90 * time.Second).Format(time.RFC3339Nano)
	if len(msgs.Messages) != 2 || msgs.Messages[0].CreatedAt != want || msgs.Messages[1].CreatedAt != want {
		t.Fatalf("messages %+v, want two stamped %s", msgs.Messages, want)
	}
	mu.Lock()
	defer mu.Unlock()
	if !slices.Equal(refs, []string{"echo.default"}) {
		t.Fatalf("provider hook called for %q, want one echo.default turn", refs)
	}
}

// An idle session is dropped from memory once it has been idle for more than 600 s (at the next session/new),
// and comes back with its history; one used within the 600 s stays.
func TestIdleSessionEvictedAfter600s(t *testing.T) {
	t.Parallel()
	clk := clocktest.New(time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC))
	d := Start(t, WithConfig(agentConfig(echoTOML, "echo.default", "full", "")), WithClock(clk))
	c := dialRC(t, d, "")
	live := func() []string {
		var st api.StatusResult
		c.mustCall(api.MethodStatus, struct{}{}, &st)
		return st.SessionIDs
	}
	c.newSession(api.SessionNewParams{SessionID: "old"})
	if tr := c.prompt("old", "keep me", hooks{}); tr.err != nil {
		t.Fatalf("prompt: %s", tr.err)
	}
	clk.Advance(600 * time.Second) // idle for exactly 600 s: not yet past the TTL
	c.newSession(api.SessionNewParams{SessionID: "mid"})
	if got := live(); !slices.Equal(got, []string{"mid", "old"}) {
		t.Fatalf("live after 600 s idle = %v, want [mid old]", got)
	}
	clk.Advance(time.Second)
	c.newSession(api.SessionNewParams{SessionID: "new"})
	if got := live(); !slices.Equal(got, []string{"mid", "new"}) {
		t.Fatalf("live after 601 s idle = %v, want [mid new]: old must be dropped, mid (1 s idle) kept", got)
	}
	back := c.newSession(api.SessionNewParams{SessionID: "old"})
	if back.MessageCount != 2 {
		t.Fatalf("revived old with %d messages, want 2", back.MessageCount)
	}
}

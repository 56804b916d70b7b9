package rpctest

import (
	"bytes"
	"encoding/json"
	"net"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/zeroclaw-go/zeroclaw/internal/api"
	"github.com/zeroclaw-go/zeroclaw/internal/clock/clocktest"
)

// maxStatusAllocs bounds the heap allocations of one status round trip on the daemon's side (2 today: the inbound
// frame and its request; the result is a cached encoding). The client below allocates nothing per round trip (a
// fixed request, a fixed read buffer), so testing.AllocsPerRun counts the daemon's work. It was 17 before the
// status path was cut down (a build-info parse, the session ids collected through iterators, a pool pointer per
// idle wait, the result boxed and encoded each time).
const maxStatusAllocs = 3

// TestStatusRoundTripAllocs: a status round trip over the real socket allocates at most maxStatusAllocs times on
// the daemon's side. Allocation counts are deterministic, unlike timings, so this is what keeps the path lean.
func TestStatusRoundTripAllocs(t *testing.T) {
	d := Start(t)
	c, err := net.Dial("unix", d.Endpoint)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	buf := make([]byte, 64<<10)
	roundTrip := func(req []byte) []byte {
		if _, err := c.Write(req); err != nil {
			t.Fatal(err)
		}
		n := 0
		for {
			m, err := c.Read(buf[n:])
			if err != nil {
				t.Fatal(err)
			}
			n += m
			if n > 0 && buf[n-1] == '\n' {
				return buf[:n]
			}
		}
	}
	if got := roundTrip([]byte(`{"jsonrpc":"2.0","method":"initialize","params":{"protocol_version":1},"id":0}` + "\n")); !bytes.Contains(got, []byte(`"result"`)) {
		t.Fatalf("initialize answered %s", got)
	}
	req := []byte(statusReq)
	if got := roundTrip(req); !bytes.Contains(got, []byte(`"server_version"`)) {
		t.Fatalf("status answered %s", got)
	}
	for range 100 { // warm the pools
		roundTrip(req)
	}
	allocs := testing.AllocsPerRun(500, func() { roundTrip(req) })
	t.Logf("status round trip: %.1f allocations on the daemon's side", allocs)
	if allocs > maxStatusAllocs+raceAllocSlack {
		t.Errorf("status round trip allocates %.1f times on the daemon's side, want at most %d", allocs, maxStatusAllocs+raceAllocSlack)
	}
}

// status is answered from a cached encoding: it must still follow the uptime, the sessions opened and closed,
// and stay byte for byte what encoding the result afresh gives.
func TestStatusCacheFollowsUptimeAndSessions(t *testing.T) {
	clk := clocktest.New(time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC))
	d := Start(t, WithConfig(agentConfig(echoTOML, "echo.default", "full", "")), WithClock(clk))
	c := dialRC(t, d, "")
	status := func() api.StatusResult {
		t.Helper()
		var raw json.RawMessage
		c.mustCall(api.MethodStatus, struct{}{}, &raw)
		var st api.StatusResult
		if err := json.Unmarshal(raw, &st); err != nil {
			t.Fatal(err)
		}
		var again bytes.Buffer
		enc := json.NewEncoder(&again)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(st); err != nil {
			t.Fatal(err)
		}
		if got, want := string(raw), strings.TrimSuffix(again.String(), "\n"); got != want {
			t.Fatalf("status result %s, want %s", got, want)
		}
		return st
	}
	if st := status(); st.UptimeSecs != 0 || st.ActiveSessions != 0 || st.SessionIDs == nil {
		t.Fatalf("at start: %+v", st)
	}
	status() // the cached answer
	clk.Advance(1500 * time.Millisecond)
	if st := status(); st.UptimeSecs != 1 {
		t.Fatalf("uptime_secs = %d after 1.5 s", st.UptimeSecs)
	}
	c.newSession(api.SessionNewParams{SessionID: "b"})
	c.newSession(api.SessionNewParams{SessionID: "a"})
	if st := status(); st.ActiveSessions != 2 || !slices.Equal(st.SessionIDs, []string{"a", "b"}) || st.UptimeSecs != 1 {
		t.Fatalf("with two sessions: %+v", st)
	}
	c.mustCall(api.MethodSessionClose, api.SessionIDParams{SessionID: "b"}, nil)
	if st := status(); st.ActiveSessions != 1 || !slices.Equal(st.SessionIDs, []string{"a"}) {
		t.Fatalf("after closing b: %+v", st)
	}
}

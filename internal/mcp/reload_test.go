package mcp

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/zeroclaw-go/zeroclaw/internal/config"
)

// A reload while a call is in flight: an unchanged server keeps running and the call completes; a changed
// server is replaced and the call in flight on the old one returns (an error, not a hang), and the new one
// serves the next call.
func TestReloadWhileCallInFlight(t *testing.T) {
	srv := builtServer(t, "s")
	m := New(Options{Environ: os.Environ(), BackoffMin: 5 * time.Millisecond, BackoffMax: 50 * time.Millisecond})
	t.Cleanup(m.Close)
	cfgA := config.MCPConfig{Enabled: true, Servers: []config.MCPServerConfig{srv}}
	m.Reconcile(cfgA)
	st := m.ForServers(ctxT(t), []string{"s"}, "")
	if st == nil || len(st.Specs()) == 0 {
		t.Fatalf("not connected: %+v", m.Status())
	}
	inFlight := func() chan string {
		out := make(chan string, 1)
		go func() { out <- call(t, st, "s__sleep", `{"ms":400}`).Output }()
		time.Sleep(100 * time.Millisecond) // let the call reach the server (a later start only shortens the overlap)
		return out
	}
	done := inFlight()
	m.Reconcile(cfgA) // unchanged
	if got := <-done; !strings.Contains(got, "slept") {
		t.Fatalf("a call across an unchanged reload: %q", got)
	}
	changed := srv
	changed.Env = map[string]string{"RELOADED": "1"}
	done = inFlight()
	m.Reconcile(config.MCPConfig{Enabled: true, Servers: []config.MCPServerConfig{changed}})
	select {
	case got := <-done:
		t.Logf("the call on the replaced server: %q", got)
	case <-time.After(30 * time.Second):
		t.Fatal("the call in flight on a replaced server never returned")
	}
	if res := call(t, m.ForServers(ctxT(t), []string{"s"}, ""), "s__echo", `{"text":"new"}`); res.Output != "echo: new" {
		t.Fatalf("the new server: %+v", res)
	}
}

// The reload soak reads /proc (children, fds), so it is built on Linux only.

package mcp

import (
	"fmt"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/zeroclaw-go/zeroclaw/internal/config"
)

// 100 reloads that alternate the servers' config, with calls running all along from several goroutines: no
// panic, every call returns (a result, or an error saying the server is restarting), no call is served by a
// server no longer configured, and afterwards no child, goroutine or fd is left over.
func TestHundredReloadsWithConcurrentCalls(t *testing.T) {
	srv := builtServer(t, "s")
	other := builtServer(t, "t")
	baseG := runtime.NumGoroutine()
	m := New(Options{Environ: os.Environ(), BackoffMin: time.Millisecond, BackoffMax: 5 * time.Millisecond})
	cfgs := []config.MCPConfig{
		{Enabled: true, Servers: []config.MCPServerConfig{srv}},
		{Enabled: true, Servers: []config.MCPServerConfig{withEnv(srv, "GEN", "b"), other}},
	}
	m.Reconcile(cfgs[0])
	if st := m.ForServers(ctxT(t), []string{"s"}, ""); st == nil || len(st.Specs()) == 0 {
		t.Fatalf("not connected: %+v", m.Status())
	}
	fds := fdCount(t)
	stop := make(chan struct{})
	var calls, ok, refused atomic.Int64
	var wg sync.WaitGroup
	var bad sync.Map
	for g := range 4 {
		wg.Go(func() {
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				st := m.ForServers(ctxT(t), []string{"s", "t"}, "")
				text := fmt.Sprintf("g%d-%d", g, i)
				res := call(t, st, "s__echo", `{"text":"`+text+`"}`)
				calls.Add(1)
				switch {
				case res.Output == "echo: "+text:
					ok.Add(1)
				case res.IsError:
					refused.Add(1)
				default:
					bad.Store(text, res.Output)
				}
			}
		})
	}
	for i := range 100 {
		m.Reconcile(cfgs[i%2])
		time.Sleep(2 * time.Millisecond)
	}
	m.Reconcile(cfgs[0])
	waitFor(t, m, "the last config", func() bool { return statusOf(m, "s").State == StateReady })
	time.Sleep(50 * time.Millisecond)
	close(stop)
	wg.Wait() // every call returned
	bad.Range(func(k, v any) bool { t.Errorf("call %v got %q", k, v); return true })
	if ok.Load() == 0 {
		t.Fatalf("no call succeeded in %d (%d refused)", calls.Load(), refused.Load())
	}
	if len(m.Status()) != 1 {
		t.Fatalf("servers after the last reload: %+v", m.Status())
	}
	var got int
	for range 40 {
		if got = fdCount(t); got <= fds {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if got > fds {
		t.Errorf("fds grew from %d to %d", fds, got)
	}
	m.Close()
	if kids := children(t); len(kids) != 0 {
		t.Fatalf("children after close: %v", kids)
	}
	for range 100 {
		if runtime.NumGoroutine() <= baseG+2 {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > baseG+2 {
		buf := make([]byte, 1<<16)
		t.Fatalf("goroutines %d, %d before:\n%s", n, baseG, buf[:runtime.Stack(buf, true)])
	}
	t.Logf("%d calls: %d served, %d refused during reloads", calls.Load(), ok.Load(), refused.Load())
}

func withEnv(c config.MCPServerConfig, k, v string) config.MCPServerConfig {
	env := map[string]string{k: v}
	for ek, ev := range c.Env {
		env[ek] = ev
	}
	c.Env = env
	return c
}

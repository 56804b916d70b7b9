package rpctest

import (
	"encoding/json"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/zeroclaw-go/zeroclaw/internal/api"
)

// The scenario on the wire, with the shipped defaults ([acp] max_sessions 64): 1,000 sessions opened
// over 20 connections, then all 1,000 prompted at once (each connection sends its 50 prompts before reading).
// Before, 936 failed "session: not found" (the idle sessions dropped to make room were gone); now every one
// completes with its own answer, and the live set stays at the cap.
func TestThousandSessionsPromptedAtOnceOverTheWire(t *testing.T) {
	const conns, per = 20, 50
	d := Start(t, WithConfig(agentConfig(echoTOML, "echo.default", "supervised", "")))
	clients := make([]*Client, conns)
	for i := range clients {
		clients[i] = d.Dial(t)
		clients[i].Initialize()
		for j := range per {
			sid := fmt.Sprintf("many-%02d-%02d", i, j)
			id := fmt.Sprintf("new-%d", j)
			clients[i].Request(api.MethodSessionNew, api.SessionNewParams{SessionID: sid}, id)
			if r := clients[i].Result(id); r["session_id"] != sid {
				t.Fatalf("session/new %s = %v", sid, r)
			}
		}
	}
	var wg sync.WaitGroup
	errs := make(chan string, conns*per)
	for i, c := range clients {
		wg.Go(func() {
			for j := range per {
				sid := fmt.Sprintf("many-%02d-%02d", i, j)
				c.Request(api.MethodSessionPrompt, api.SessionPromptParams{SessionID: sid, Prompt: "hello " + sid}, fmt.Sprintf("p-%d", j))
			}
			for done := 0; done < per; {
				f := c.Frame()
				if f.Method != "" {
					continue
				}
				done++
				var r api.SessionPromptResult
				if f.Error != nil || json.Unmarshal(f.Result, &r) != nil || r.Outcome != api.OutcomeCompleted || !strings.HasPrefix(r.Content, "hello many-") {
					errs <- f.Raw
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	n := 0
	for e := range errs {
		if n++; n <= 3 {
			t.Errorf("prompt failed: %s", e)
		}
	}
	if n > 0 {
		t.Fatalf("%d of %d prompts failed", n, conns*per)
	}
	var st struct {
		ActiveSessions int `json:"active_sessions"`
	}
	clients[0].Request("status", map[string]any{}, "st")
	raw, _ := json.Marshal(clients[0].Result("st"))
	if err := json.Unmarshal(raw, &st); err != nil || st.ActiveSessions > 64 {
		t.Fatalf("status %s: %d live sessions, over the default cap 64", raw, st.ActiveSessions)
	}
}

// The heap a live idle session holds in the daemon (its actor state, lock, maps), measured between 200 and 400
// sessions opened and prompted once, with [acp] max_sessions high enough that none is dropped. The daemon runs
// in the test process, so the growth of the heap in use after GCs is its own.
func TestLiveSessionMemory(t *testing.T) {
	const n = 200
	d := Start(t, WithConfig(agentConfig(echoTOML, "echo.default", "supervised", "\n[acp]\nmax_sessions = 1000\n")))
	c := d.Dial(t)
	c.Initialize()
	opened := 0
	open := func() {
		for range n {
			sid := fmt.Sprintf("mem-%03d", opened)
			opened++
			c.Request(api.MethodSessionNew, api.SessionNewParams{SessionID: sid}, "n")
			c.Result("n")
			c.Request(api.MethodSessionPrompt, api.SessionPromptParams{SessionID: sid, Prompt: "hi"}, "p")
			c.Result("p")
		}
	}
	heap := func() uint64 {
		var m runtime.MemStats
		runtime.GC()
		runtime.GC()
		runtime.ReadMemStats(&m)
		return m.HeapAlloc
	}
	open()
	h0 := heap()
	open()
	h1 := heap()
	per := (int64(h1) - int64(h0)) / n
	t.Logf("heap per live idle session: %d B", per)
	if per > 8<<10 {
		t.Errorf("a live idle session holds %d B of heap, want at most 8 KiB", per)
	}
}

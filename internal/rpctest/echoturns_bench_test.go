//go:build unix

package rpctest

import (
	"fmt"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/zeroclaw-go/zeroclaw/internal/api"
)

// BenchmarkEchoTurns4 runs echo turns on 4 sessions at once, as zcbench's appends row does (each turn stores the
// prompt and the answer, auto-saves the prompt to memory, and answers):
//
//	go test -run '^$' -bench EchoTurns4 -benchtime 400x ./internal/rpctest/
//
// ns/op is wall time per turn; cpu-ns/turn is the process's CPU time (daemon and clients, all in-process) per
// turn, which a machine loaded by other work disturbs less. Memories and history grow with b.N, so compare runs
// of equal -benchtime.
func BenchmarkEchoTurns4(b *testing.B) {
	d := Start(b, WithConfig(agentConfig("[providers.models.echo.default]\nmodel = \"echo\"\n", "echo.default", "full", "")))
	const k = 4
	clients := make([]*rc, k)
	sids := make([]string, k)
	for i := range clients {
		clients[i] = dialRC(b, d, "")
		sids[i] = clients[i].newSession(api.SessionNewParams{AgentAlias: "a"}).SessionID
	}
	var n atomic.Int64
	cpu := func() time.Duration {
		var ru syscall.Rusage
		if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
			b.Fatal(err)
		}
		return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	cpu0 := cpu()
	b.ResetTimer()
	var wg sync.WaitGroup
	for w := range k {
		wg.Go(func() {
			for i := 0; n.Add(1) <= int64(b.N); i++ {
				if t := clients[w].prompt(sids[w], fmt.Sprintf("w%d a%d go", w, i), hooks{}); t.result.Outcome != "completed" {
					b.Errorf("outcome %q", t.result.Outcome)
					return
				}
			}
		})
	}
	wg.Wait()
	b.ReportMetric(float64((cpu()-cpu0).Nanoseconds())/float64(b.N), "cpu-ns/turn")
}

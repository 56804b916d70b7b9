package rpctest

import (
	"bytes"
	"fmt"
	"testing"
	"time"

	"github.com/zeroclaw-go/zeroclaw/internal/api"
	"github.com/zeroclaw-go/zeroclaw/internal/provider"
)

// BenchmarkTurn measures what the daemon adds to a streamed answer, side by side with the provider alone in the
// same run, against one fake OpenAI SSE server that streams N text chunks (one flushed SSE event each):
//
//	go test -run '^$' -bench BenchmarkTurn -benchtime 200x ./internal/rpctest/
//
//	BenchmarkTurn/chunks=N/provider_only   provider.New(...).Stream straight to the fake server
//	BenchmarkTurn/chunks=N/daemon          session/prompt over the real socket, reading every event up to the
//	                                       prompt's response (a fresh session per iteration, made and closed off
//	                                       the clock)
//
// Custom metrics: ns/chunk (wall time of a turn divided by its chunks), ttfc-ns (prompt sent to first text
// chunk received), events/s (frames of the turn delivered to the reading client per second; provider_only
// counts emitted chunks). Daemon overhead per chunk is daemon ns/chunk minus provider_only ns/chunk; the
// daemon's time-to-first-chunk includes its store writes for the user message and the history load.
func BenchmarkTurn(b *testing.B) {
	for _, n := range []int{16, 256} {
		deltas := make([]string, n)
		for i := range deltas {
			deltas[i] = fmt.Sprintf("tok%d ", i)
		}
		body := openAIText(10, n, deltas...)
		srv := newLLM(b, stream(ctSSE, body))

		b.Run(fmt.Sprintf("chunks=%d/provider_only", n), func(b *testing.B) {
			p, err := provider.New(provider.Settings{Family: provider.FamilyOpenAI, Alias: "fake", URI: srv.URL, APIKey: "sk-test", Model: "m"})
			if err != nil {
				b.Fatal(err)
			}
			req := provider.Request{Messages: []provider.Message{{Role: provider.RoleUser, Content: "go"}}}
			var ttfc, total time.Duration
			chunks, turns := 0, 0
			for b.Loop() {
				turns++
				start := time.Now()
				first := true
				_, err := p.Stream(b.Context(), req, func(ev provider.Event) {
					if ev.Type != provider.EventText {
						return
					}
					if first {
						ttfc += time.Since(start)
						first = false
					}
					chunks++
				})
				total += time.Since(start)
				if err != nil {
					b.Fatal(err)
				}
			}
			report(b, n, turns, chunks, chunks, ttfc, total)
		})

		b.Run(fmt.Sprintf("chunks=%d/daemon", n), func(b *testing.B) {
			d := Start(b, WithConfig(agentConfig(fakeProviderTOML("openai", srv.URL), "openai.fake", "full", "")))
			c := dialRC(b, d, "")
			r := c.Reader() // the client's own buffered reader: newSession reads through it too
			var ttfc, total time.Duration
			chunks, events, turns := 0, 0, 0
			sid := ""
			for b.Loop() {
				turns++
				b.StopTimer()
				if sid != "" { // stay under the live-session limit
					c.mustCall(api.MethodSessionClose, api.SessionIDParams{SessionID: sid}, nil)
				}
				sid = c.newSession(api.SessionNewParams{}).SessionID
				b.StartTimer()
				start := time.Now()
				id := c.send(api.MethodSessionPrompt, api.SessionPromptParams{SessionID: sid, Prompt: "go"})
				respID := []byte(`"id":"` + id + `"`)
				first := true
				for {
					line, err := r.ReadSlice('\n')
					if err != nil {
						b.Fatalf("%v after %d events", err, events)
					}
					if !bytes.HasPrefix(line, []byte(`{"jsonrpc":"2.0","method"`)) && bytes.Contains(line, respID) {
						if !bytes.Contains(line, []byte(`"outcome":"completed"`)) {
							b.Fatalf("turn did not complete: %s", line)
						}
						break
					}
					events++
					if bytes.Contains(line, []byte(`"type":"agent_message_chunk"`)) {
						if first {
							ttfc += time.Since(start)
							first = false
						}
						chunks++
					}
				}
				total += time.Since(start)
			}
			report(b, n, turns, chunks, events, ttfc, total)
		})
	}
}

func report(b *testing.B, n, turns, chunks, events int, ttfc, total time.Duration) {
	b.Helper()
	if turns == 0 || chunks != n*turns {
		b.Fatalf("received %d chunks over %d turns, want %d each", chunks, turns, n)
	}
	b.ReportMetric(float64(total.Nanoseconds())/float64(chunks), "ns/chunk")
	b.ReportMetric(float64(ttfc.Nanoseconds())/float64(turns), "ttfc-ns")
	b.ReportMetric(float64(events)/total.Seconds(), "events/s")
}

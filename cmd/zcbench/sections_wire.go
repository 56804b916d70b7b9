package main

import (
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// benchConnections: RSS with 1,000 initialized idle connections, and per connection.
func benchConnections(b *bench) error {
	before, err := rssKB(b.d.pid(), "VmRSS:")
	if err != nil {
		return err
	}
	const n = 1000
	conns := make([]*client, n)
	var firstErr error
	var mu sync.Mutex
	var wg sync.WaitGroup
	sem := make(chan struct{}, 32)
	for i := range conns {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			c, _, err := dialInit(b.in.sock)
			mu.Lock()
			defer mu.Unlock()
			if err != nil && firstErr == nil {
				firstErr = fmt.Errorf("connection %d: %w", i, err)
			}
			conns[i] = c
		}()
	}
	wg.Wait()
	defer func() {
		for _, c := range conns {
			if c != nil {
				c.Close()
			}
		}
	}()
	if firstErr != nil {
		return firstErr
	}
	time.Sleep(b.dur(time.Second))
	after, err := rssKB(b.d.pid(), "VmRSS:")
	if err != nil {
		return err
	}
	b.res.add("connections", "RSS with 1,000 idle initialized connections", "MB", noTarget(), float64(after)/1024)
	b.res.add("connections", "RSS per idle connection", "KB", maxValue(12, "≤ 12 KB"), float64(after-before)/n)
	return nil
}

const statusRequest = `{"jsonrpc":"2.0","method":"status","id":1}` + "\n"

// roundTrips does n status round trips on c (raw request bytes, one line back each) and returns each one's time.
func roundTrips(c *client, n int) ([]time.Duration, error) {
	req := []byte(statusRequest)
	r := c.Reader()
	out := make([]time.Duration, 0, n)
	_ = c.Conn().SetReadDeadline(time.Now().Add(timeout))
	defer c.Conn().SetReadDeadline(time.Time{})
	for range n {
		start := time.Now()
		if err := c.Write(req); err != nil {
			return nil, err
		}
		line, err := r.ReadSlice('\n')
		if err != nil {
			return nil, err
		}
		if !strings.Contains(string(line), `"result"`) {
			return nil, fmt.Errorf("status answered %s", line)
		}
		out = append(out, time.Since(start))
	}
	return out, nil
}

// throughput runs k clients doing back-to-back status round trips against sock for d and returns round trips
// per second. init says whether the clients initialize first (the daemon needs it, the echo floor does not).
func throughput(sock string, k int, d time.Duration, init bool) (float64, error) {
	clients := make([]*client, k)
	for i := range clients {
		var err error
		if init {
			clients[i], _, err = dialInit(sock)
		} else {
			clients[i], err = dial(sock)
		}
		if err != nil {
			return 0, err
		}
		defer clients[i].Close()
	}
	var total atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, k)
	start := time.Now()
	deadline := start.Add(d)
	for _, c := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for time.Now().Before(deadline) {
				if _, err := roundTrips(c, 16); err != nil {
					errs <- err
					return
				}
				total.Add(16)
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	close(errs)
	if err := <-errs; err != nil {
		return 0, err
	}
	return float64(total.Load()) / elapsed.Seconds(), nil
}

// benchStatus: status round trip p50/p99 with one client, and throughput at 1, 16, 64 clients, each beside the
// raw NDJSON echo server.
func benchStatus(b *bench) error {
	c, _, err := dialInit(b.in.sock)
	if err != nil {
		return err
	}
	defer c.Close()
	f, err := dial(b.echo)
	if err != nil {
		return err
	}
	defer f.Close()
	n := b.n(5000)
	if _, err := roundTrips(c, n/10); err != nil { // warm up both
		return err
	}
	if _, err := roundTrips(f, n/10); err != nil {
		return err
	}
	// Daemon and floor alternate in rounds, so a change in the shared machine's load falls on both.
	const rounds = 4
	var dt, ft []time.Duration
	for range rounds {
		dr, err := roundTrips(c, n/rounds)
		if err != nil {
			return err
		}
		fr, err := roundTrips(f, n/rounds)
		if err != nil {
			return err
		}
		dt, ft = append(dt, dr...), append(ft, fr...)
	}
	d, fl := durations(dt, time.Microsecond), durations(ft, time.Microsecond)
	b.res.addFloor("status", "round trip p50, 1 client", "µs", maxRatio(1.2), percentile(d, 50), percentile(fl, 50))
	b.res.addFloor("status", "round trip p99, 1 client", "µs", maxRatio(1.2), percentile(d, 99), percentile(fl, 99))
	for _, k := range []int{1, 16, 64} {
		var dd, ff float64
		for range rounds {
			d, err := throughput(b.in.sock, k, b.dur(time.Second)/rounds, true)
			if err != nil {
				return err
			}
			f, err := throughput(b.echo, k, b.dur(time.Second)/rounds, false)
			if err != nil {
				return err
			}
			dd, ff = dd+d/rounds, ff+f/rounds
		}
		b.res.addFloor("status", fmt.Sprintf("throughput, %d client%s", k, map[bool]string{true: "s"}[k > 1]), "req/s", minRatio(0.85), dd, ff)
	}
	return nil
}

// benchStreaming: a turn streamed from the fake OpenAI-compatible server through the daemon to one reader,
// beside reading that server directly: events/s on a 256-chunk turn, time to first chunk and the whole turn on
// a 16-chunk turn; the daemon's overhead is the difference of the medians.
func benchStreaming(b *bench) error {
	const sec = "streaming"
	if ok, why := b.has("session/new", "session/prompt"); !ok {
		for _, r := range []string{"events/s to one reader, 256-chunk turn", "time to first chunk, 16-chunk turn", "daemon overhead per 16-chunk turn", "first chunk after the provider's", "daemon CPU per 16-chunk turn (prompt sent to its response)"} {
			b.res.na(sec, r, "", noTarget(), why)
		}
		return nil
	}
	c, _, err := dialInit(b.in.sock)
	if err != nil {
		return err
	}
	defer c.Close()
	hc := &http.Client{Timeout: timeout}
	var promptCPU time.Duration // the daemon's CPU time over the measured prompts of the last daemonTurns
	daemonTurns := func(chunks, n int) ([]turn, error) {
		var out []turn
		promptCPU = 0
		for i := range n + 2 { // the first two warm up
			sid, err := c.newSession(map[string]any{"agent_alias": "sse"})
			if err != nil {
				return nil, err
			}
			before, err := cpuTime(b.d.pid())
			if err != nil {
				return nil, err
			}
			t, err := c.prompt(sid, fmt.Sprintf("chunks=%d go", chunks))
			if err != nil {
				return nil, err
			}
			after, err := cpuTime(b.d.pid())
			if err != nil {
				return nil, err
			}
			if i >= 2 {
				promptCPU += after - before
			}
			if t.outcome != "completed" || t.chunks != chunks {
				return nil, fmt.Errorf("turn %d: outcome %q with %d chunks, want completed with %d", i, t.outcome, t.chunks, chunks)
			}
			if err := c.callInto("session/close", map[string]any{"session_id": sid}, nil); err != nil {
				return nil, err
			}
			if i >= 2 {
				out = append(out, t)
			}
		}
		return out, nil
	}
	directTurns := func(chunks, n int) ([]turn, error) {
		var out []turn
		for i := range n + 2 {
			t, err := readSSEDirect(hc, b.sseURL, chunks)
			if err != nil {
				return nil, err
			}
			if t.chunks != chunks {
				return nil, fmt.Errorf("direct read got %d chunks, want %d", t.chunks, chunks)
			}
			if i >= 2 {
				out = append(out, t)
			}
		}
		return out, nil
	}
	eventsPerSec := func(ts []turn) float64 {
		var ev int
		var tot time.Duration
		for _, t := range ts {
			ev += t.events
			tot += t.total
		}
		return float64(ev) / tot.Seconds()
	}
	big, err := daemonTurns(256, b.n(20))
	if err != nil {
		return err
	}
	bigD, err := directTurns(256, b.n(20))
	if err != nil {
		return err
	}
	b.res.addFloor(sec, "events/s to one reader, 256-chunk turn", "events/s", noTarget(), eventsPerSec(big), eventsPerSec(bigD))
	small, err := daemonTurns(16, b.n(50))
	if err != nil {
		return err
	}
	b.res.add(sec, "daemon CPU per 16-chunk turn (prompt sent to its response)", "ms", noTarget(),
		float64(promptCPU)/float64(len(small))/float64(time.Millisecond))
	smallD, err := directTurns(16, b.n(50))
	if err != nil {
		return err
	}
	pick := func(ts []turn, f func(turn) time.Duration) []float64 {
		out := make([]float64, len(ts))
		for i, t := range ts {
			out[i] = float64(f(t)) / float64(time.Millisecond)
		}
		return out
	}
	ttfc := func(t turn) time.Duration { return t.ttfc }
	total := func(t turn) time.Duration { return t.total }
	dTTFC, fTTFC := median(pick(small, ttfc)), median(pick(smallD, ttfc))
	dTot, fTot := median(pick(small, total)), median(pick(smallD, total))
	b.res.addFloor(sec, "time to first chunk, 16-chunk turn", "ms", noTarget(), dTTFC, fTTFC)
	b.res.addFloor(sec, "whole 16-chunk turn", "ms", noTarget(), dTot, fTot)
	b.res.add(sec, "daemon overhead per 16-chunk turn", "ms", maxValue(0.5, "≤ 0.5 ms"), dTot-fTot)
	b.res.add(sec, "first chunk after the provider's", "ms", maxValue(0.3, "≤ 0.3 ms"), dTTFC-fTTFC)
	return nil
}

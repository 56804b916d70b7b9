package main

import (
	"encoding/json"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/zeroclaw-go/zeroclaw/internal/rpctest/ndjson"
)

// benchLoad: 2,000 connection attempts against a daemon with the default connection limit (512) while 8
// existing clients keep doing status round trips. Every attempt is answered: the first ones served, the rest
// refused with -32004; the existing clients' latency before and during the storm; RSS at the peak and after
// the storm's connections left.
func benchLoad(b *bench) error {
	const sec = "load"
	in, err := newInstall(installOptions{})
	if err != nil {
		return err
	}
	defer in.remove()
	d, err := startDaemon(b.bin, in)
	if err != nil {
		return err
	}
	defer d.stop()
	const existing, attempts, limit = 8, 2000, 512
	clients := make([]*client, existing)
	for i := range clients {
		if clients[i], _, err = dialInit(in.sock); err != nil {
			return err
		}
		defer clients[i].Close()
	}
	time.Sleep(b.dur(time.Second))
	baseline, err := rssKB(d.pid(), "VmRSS:")
	if err != nil {
		return err
	}

	// The existing clients measure round trips until stop, each latency tagged with the phase it fell in.
	var phase atomic.Int32 // 0 before, 1 during the storm, 2 after
	var mu sync.Mutex
	lat := map[int32][]time.Duration{}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	errs := make(chan error, existing)
	for _, c := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				p := phase.Load()
				ts, err := roundTrips(c, 1)
				if err != nil {
					errs <- err
					return
				}
				mu.Lock()
				lat[p] = append(lat[p], ts[0])
				mu.Unlock()
				time.Sleep(2 * time.Millisecond)
			}
		}()
	}
	time.Sleep(b.dur(time.Second))
	busy, err := rssKB(d.pid(), "VmRSS:") // the existing clients' own steady state, before the storm
	if err != nil {
		return err
	}

	// The storm: 2,000 attempts, 64 at a time; served connections are kept open until the storm ends.
	phase.Store(1)
	var served, refused, other atomic.Int64
	var firstOther atomic.Value
	var held []*client
	var heldMu sync.Mutex
	var peak atomic.Int64
	sampleDone := make(chan struct{})
	go func() { // RSS sampled every 20 ms through the storm
		defer close(sampleDone)
		for {
			if kb, err := rssKB(d.pid(), "VmRSS:"); err == nil && int64(kb) > peak.Load() {
				peak.Store(int64(kb))
			}
			if phase.Load() != 1 {
				return
			}
			time.Sleep(20 * time.Millisecond)
		}
	}()
	sem := make(chan struct{}, 64)
	var storm sync.WaitGroup
	for range attempts {
		storm.Add(1)
		sem <- struct{}{}
		go func() {
			defer storm.Done()
			defer func() { <-sem }()
			c, err := dial(in.sock)
			if err != nil {
				other.Add(1)
				firstOther.CompareAndSwap(nil, "dial: "+err.Error())
				return
			}
			if err := c.Write([]byte(ndjson.InitializeRequest + "\n")); err != nil {
				// A refused connection may be closed before the request is written: read its frame anyway.
				_ = err
			}
			line, err := c.Recv(timeout)
			if err != nil {
				c.Close()
				other.Add(1)
				firstOther.CompareAndSwap(nil, "recv: "+err.Error())
				return
			}
			var f ndjson.Frame
			_ = json.Unmarshal([]byte(line), &f)
			switch {
			case f.Error == nil && f.Result != nil:
				served.Add(1)
				heldMu.Lock()
				held = append(held, c)
				heldMu.Unlock()
			case f.Error != nil && f.Error.Code == -32004:
				refused.Add(1)
				c.Close()
			default:
				other.Add(1)
				firstOther.CompareAndSwap(nil, "frame: "+line)
				c.Close()
			}
		}()
	}
	storm.Wait()
	phase.Store(2)
	<-sampleDone
	for _, c := range held {
		c.Close()
	}
	time.Sleep(b.dur(3 * time.Second)) // the daemon notices the closes and its garbage collector runs
	after, err := rssKB(d.pid(), "VmRSS:")
	if err != nil {
		return err
	}
	close(stop)
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		return fmt.Errorf("an existing client failed during the storm: %w", err)
	}

	want := float64(limit - existing)
	b.res.add(sec, "of 2,000 attempts: served", "conns", exactly(want, fmt.Sprintf("= %d (512 less the 8 existing)", limit-existing)), float64(served.Load()))
	b.res.add(sec, "of 2,000 attempts: refused with -32004", "conns", exactly(attempts-want, fmt.Sprintf("= %d", attempts-limit+existing)), float64(refused.Load()))
	b.res.add(sec, "of 2,000 attempts: anything else", "conns", exactly(0, "= 0"), float64(other.Load()))
	if v := firstOther.Load(); v != nil {
		b.res.note(sec, "of 2,000 attempts: anything else", fmt.Sprint("first: ", v))
	}
	ms := func(ds []time.Duration, p float64) float64 { return percentile(durations(ds, time.Microsecond), p) }
	mu.Lock()
	b.res.add(sec, "existing clients' status p50 before", "µs", noTarget(), ms(lat[0], 50))
	b.res.add(sec, "existing clients' status p50 during", "µs", noTarget(), ms(lat[1], 50))
	b.res.add(sec, "existing clients' status p99 during", "µs", noTarget(), ms(lat[1], 99))
	mu.Unlock()
	b.res.add(sec, "RSS before", "MB", noTarget(), float64(baseline)/1024)
	b.res.add(sec, "RSS peak during", "MB", maxValue(float64(baseline)/1024+limit*12.0/1024+8, "≤ before + 512×12 KB + 8 MB"), float64(peak.Load())/1024)
	// What the storm left is measured against the same conditions: the existing clients are busy both just
	// before the storm and 3 s after it; "before" predates their load, which they keep up throughout.
	b.res.add(sec, "RSS 3 s after they left, above before", "MB", noTarget(), float64(after-baseline)/1024)
	b.res.add(sec, "RSS just before the storm (existing clients busy)", "MB", noTarget(), float64(busy)/1024)
	b.res.add(sec, "RSS 3 s after they left, above just before the storm", "MB", maxValue(2, "≤ 2 MB"), float64(after-busy)/1024)
	return nil
}

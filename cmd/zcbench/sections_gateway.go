package main

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// benchGateway: requests/s of the gateway's /health beside a bare net/http server answering the same bytes.
// The daemon's config names a loopback port; nothing listening there means the gateway is not built yet.
func benchGateway(b *bench) error {
	const sec, row = "gateway", "GET /health, 16 clients"
	url := fmt.Sprintf("http://127.0.0.1:%d/health", b.gwPort)
	hc := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
	resp, err := hc.Get(url)
	if err != nil {
		if errors.Is(err, syscall.ECONNREFUSED) {
			b.res.na(sec, row, "req/s", minRatio(0.8), "not built yet: nothing listens on the configured [gateway] port")
			return nil
		}
		return fmt.Errorf("gateway probe: %w", err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b.res.na(sec, row, "req/s", minRatio(0.8), fmt.Sprintf("GET /health answered %d", resp.StatusCode))
		return nil
	}
	// The floor is a bare net/http server in a process of its own (zcbench re-executed), as the daemon's gateway
	// is, answering the same bytes; daemon and floor alternate in rounds.
	floor, floorURL, err := startHTTPFloor(b.tmp, resp.Header.Get("Content-Type"), body)
	if err != nil {
		return err
	}
	defer floor.stop()
	rate := func(u string) (float64, error) {
		var n atomic.Int64
		var wg sync.WaitGroup
		errs := make(chan error, 16)
		start := time.Now()
		d := b.dur(time.Second)
		for range 16 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for time.Since(start) < d {
					r, err := hc.Get(u)
					if err != nil {
						errs <- err
						return
					}
					io.Copy(io.Discard, r.Body)
					r.Body.Close()
					n.Add(1)
				}
			}()
		}
		wg.Wait()
		close(errs)
		if err := <-errs; err != nil {
			return 0, err
		}
		return float64(n.Load()) / time.Since(start).Seconds(), nil
	}
	var gs, fs []float64
	for range 3 {
		g, err := rate(url)
		if err != nil {
			return err
		}
		f, err := rate(floorURL + "/health")
		if err != nil {
			return err
		}
		gs, fs = append(gs, g), append(fs, f)
	}
	g, f := percentile(gs, 50), percentile(fs, 50)
	b.res.addFloor(sec, row, "req/s", minRatio(0.8), g, f)
	return nil
}

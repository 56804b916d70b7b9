package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"math"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"
)

// The soak run: the real daemon on a fresh install, driven for a long time by every kind of client at once
// (echo turns over many sessions, some with a 1 MB file uploaded first; scheduled jobs; memory writes; SOP runs;
// gateway HTTP and /ws/chat turns; connections opened and closed; a config change every few minutes; the
// operator's doctor, backup and logs), sampled every interval. After the run it checks, as the chaos run does,
// that every acknowledged write is stored, and gives a verdict on the samples after the warm-up.

// soakConfig is the run's flags.
type soakConfig struct {
	bin         string
	duration    time.Duration
	sample      time.Duration
	out         string
	warmup      float64 // fraction of the run before the criteria apply
	sessions    int     // chat sessions the socket turn workers go round
	pause       time.Duration
	reloadEvery time.Duration
	opsEvery    time.Duration
	rssSlope    float64 // MB/hour
	fdBand      float64
	grBand      float64
	maxWAL      int64
	maxDisk     int64
	seed        uint64
	keep        bool
	prefill     int // turns taken flat out before the clock starts, to age the install
}

// soakSample is one sample of the daemon and its install.
type soakSample struct {
	T          float64          `json:"t_s"` // seconds since the daemon started serving
	RSSKB      int              `json:"rss_kb"`
	AnonKB     int              `json:"anon_kb"` // Anonymous: of /proc/PID/smaps_rollup
	FDs        int              `json:"fds"`
	Goroutines int              `json:"goroutines"`  // go_goroutines of GET /metrics
	GoHeapKB   int              `json:"go_heap_kb"`  // go_memstats_heap_inuse_bytes of GET /metrics: the Go heap's share of the anonymous memory
	DiskBytes  int64            `json:"disk_bytes"`  // allocated blocks of every file of the install
	DiskByDir  map[string]int64 `json:"disk_by_dir"` // the same by directory, two levels under ~/.zeroclaw
	Stores     map[string]int64 `json:"stores"`      // data-relative path of each *.db → bytes
	WALs       map[string]int64 `json:"wals"`        // data-relative path of each *.db-wal → bytes
	Turns      int              `json:"turns_acked"`
	Readings   int              `json:"readings"` // once-a-second readings the process series are the medians of
}

// criterion is one line of the verdict.
type criterion struct {
	Name  string `json:"name"`
	Value string `json:"value"`
	Bound string `json:"bound"`
	OK    bool   `json:"ok"`
}

type soakReport struct {
	Command    string         `json:"command"`
	Started    time.Time      `json:"started"`
	Duration   string         `json:"duration"`
	Sample     string         `json:"sample"`
	Machine    machine        `json:"machine"`
	Seed       uint64         `json:"seed"`
	Activity   map[string]int `json:"activity"`
	Errors     map[string]int `json:"errors"`
	Criteria   []criterion    `json:"criteria"`
	Violations []string       `json:"violations"`
	Samples    []soakSample   `json:"samples"`
	warmup     float64
}

func runSoak(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("zcbench soak", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var c soakConfig
	fs.StringVar(&c.bin, "bin", "", "zeroclaw binary (default: build it with go build)")
	fs.DurationVar(&c.duration, "duration", 5*time.Minute, "how long the clients drive the daemon")
	fs.DurationVar(&c.sample, "sample", time.Minute, "sampling interval")
	fs.StringVar(&c.out, "out", "", "directory for samples.csv, soak.json, soak.md and one SVG per series (default: none)")
	fs.Float64Var(&c.warmup, "warmup", 0.2, "fraction of the run, from its start, left out of the verdict")
	fs.IntVar(&c.sessions, "sessions", 32, "chat sessions the socket turn workers take turns on")
	fs.DurationVar(&c.pause, "pause", 250*time.Millisecond, "pause between two steps of one turn worker")
	fs.DurationVar(&c.reloadEvery, "reload-every", 3*time.Minute, "interval of the config changes (config/set, then zeroclaw config reload)")
	fs.DurationVar(&c.opsEvery, "ops-every", time.Minute, "interval of the operator's tools (doctor, backup, logs in turn)")
	fs.Float64Var(&c.rssSlope, "rss-slope", 0.1, "the most RSS may grow after the warm-up, in MB/hour (least squares)")
	fs.Float64Var(&c.fdBand, "fd-band", 32, "open fds are flat when max-min <= this and the fitted trend across the window <= half of it")
	fs.Float64Var(&c.grBand, "goroutine-band", 64, "goroutines are flat when max-min <= this and the fitted trend across the window <= half of it")
	fs.Int64Var(&c.maxWAL, "max-wal", 64<<20, "bound on every -wal file, in bytes, at every sample")
	fs.Int64Var(&c.maxDisk, "max-disk", 1<<30, "bound on the install's disk use, in bytes, at every sample ([storage] max_disk_bytes does not exist yet)")
	fs.Uint64Var(&c.seed, "seed", 0, "RNG seed of the payloads (default: from the clock; printed)")
	fs.IntVar(&c.prefill, "prefill", 0, "turns taken flat out on the socket before the run's clock starts, so that the stores start larger than SQLite's caches and mmap window (an aged install); they are checked with the rest")
	fs.BoolVar(&c.keep, "keep", false, "keep the install (its HOME is printed) after the run, to look at its files")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if c.duration <= 0 || c.sample <= 0 || c.sample > c.duration || c.warmup < 0 || c.warmup >= 1 || c.sessions < 1 || c.sessions > 10000 {
		fmt.Fprintln(stderr, "zcbench soak: -duration and -sample must be positive with -sample <= -duration, -warmup in [0, 1), -sessions in [1, 10000]")
		return 2
	}
	if c.seed == 0 {
		c.seed = uint64(time.Now().UnixNano())
	}
	path, cleanup, err := binary(ctx, c.bin, stderr)
	if err != nil {
		fmt.Fprintln(stderr, "zcbench soak:", err)
		return 2
	}
	defer cleanup()
	c.bin = path
	fmt.Fprintf(stdout, "zcbench soak: %s, a sample every %s, seed %d\n", c.duration, c.sample, c.seed)
	rep, err := soak(ctx, c, stdout)
	if err != nil {
		fmt.Fprintln(stderr, "zcbench soak:", err)
		return 2
	}
	rep.Command = "go run ./cmd/zcbench soak " + strings.Join(args, " ")
	var table strings.Builder
	writeSoakTable(&table, rep)
	fmt.Fprint(stdout, table.String())
	if c.out != "" {
		if err := writeSoakOut(c.out, rep, table.String(), c); err != nil {
			fmt.Fprintln(stderr, "zcbench soak:", err)
			return 2
		}
	}
	var failed []string
	for _, cr := range rep.Criteria {
		if !cr.OK {
			failed = append(failed, cr.Name)
		}
	}
	if len(failed) > 0 {
		fmt.Fprintf(stdout, "zcbench soak: FAILED: %s\n", strings.Join(failed, ", "))
		return 1
	}
	fmt.Fprintf(stdout, "zcbench soak: every criterion holds (%d)\n", len(rep.Criteria))
	return 0
}

// soakRun is one soak: the chaos harness's ledger and worker loop (without its kills), the gateway's port and
// the activity counters.
type soakRun struct {
	h      *chaos
	c      soakConfig
	gwPort int
	hc     *http.Client

	wsTurns atomic.Int64 // numbers the /ws/chat turns' prompts

	readMu   sync.Mutex
	readings []reading // since the last sample

	mu       sync.Mutex
	activity map[string]int // what the clients did, by kind
	errs     map[string]int // what failed, by kind and error
}

func (s *soakRun) count(kind string) {
	s.mu.Lock()
	s.activity[kind]++
	s.mu.Unlock()
}

func (s *soakRun) fail(kind string, err error) {
	msg := err.Error()
	if len(msg) > 400 {
		msg = msg[:400]
	}
	s.mu.Lock()
	s.errs[kind+": "+msg]++
	s.mu.Unlock()
}

func soak(ctx context.Context, c soakConfig, log io.Writer) (*soakReport, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	in, err := newInstall(installOptions{gatewayPort: port, shellJobs: true, pollSecs: pollSecs, sops: true})
	if err != nil {
		return nil, err
	}
	if c.keep {
		fmt.Fprintln(log, "soak: the install is kept: HOME="+in.home)
	} else {
		defer in.remove()
	}
	d, err := startDaemon(c.bin, in)
	if err != nil {
		return nil, err
	}
	defer func() {
		if d != nil {
			d.kill()
		}
	}()
	s := &soakRun{c: c, gwPort: port, activity: map[string]int{}, errs: map[string]int{},
		hc: &http.Client{Timeout: timeout, Transport: &http.Transport{DisableKeepAlives: true}}}
	h := &chaos{bin: c.bin, in: in, log: log, led: newLedger(), seed: c.seed, stopped: make(chan struct{})}
	s.h = h
	if err := s.waitGateway(); err != nil {
		return nil, err
	}
	rep := &soakReport{Started: time.Now().UTC(), Duration: c.duration.String(), Sample: c.sample.String(),
		Machine: describeMachine(), Seed: c.seed}
	rep.Machine.LoadBefore = loadavg()

	if c.prefill > 0 {
		began := time.Now()
		if err := s.prefill(c.prefill); err != nil {
			return nil, fmt.Errorf("prefill: %w", err)
		}
		fmt.Fprintf(log, "soak: prefilled %d turns in %s\n", c.prefill, time.Since(began).Round(time.Second))
	}
	rng := rand.New(rand.NewPCG(c.seed, c.seed^0x9e3779b97f4a7c15))
	// Turn workers: on the socket over many sessions, with uploads, and on /ws/chat.
	const chatWorkers = 4
	for w := range chatWorkers {
		h.spawn(&paced{&soakChat{s: s, w: w, n: c.sessions}, c.pause, h})
	}
	h.spawn(&paced{&soakUpload{s: s, rng: rand.New(rand.NewPCG(rng.Uint64(), 3))}, 10 * c.pause, h})
	h.spawn(&paced{&memoryWorker{h: h}, 5 * c.pause, h})
	h.spawn(&paced{&cronWorker{h: h, rng: rand.New(rand.NewPCG(rng.Uint64(), 2))}, 20 * c.pause, h})
	h.spawn(&paced{&sopWorker{h: h}, 50 * c.pause, h})
	h.spawn(&paced{&configWorker{h: h}, c.reloadEvery, h})
	h.spawn(&paced{&soakChurn{s: s}, c.pause / 2, h})
	s.goLoop(func() error { return s.httpStep() }, c.pause/2)
	s.goLoop(func() error { return s.wsStep() }, c.pause)
	s.goLoop(func() error { return s.opsStep() }, c.opsEvery)

	s.h.wg.Add(1)
	go s.readEverySecond(d.pid())
	// Samples: the first at once, then every interval until the end of the run, and one at its end.
	start := time.Now()
	deadline := start.Add(c.duration)
	take := func() error {
		smp, err := s.sample(d.pid(), time.Since(start).Seconds())
		if err != nil {
			return err
		}
		rep.Samples = append(rep.Samples, smp)
		if c.out != "" { // the samples so far, in case the run is cut short
			if err := os.MkdirAll(c.out, 0o755); err == nil {
				_ = os.WriteFile(filepath.Join(c.out, "samples.csv"), []byte(samplesCSV(rep.Samples)), 0o644)
			}
		}
		fmt.Fprintf(log, "soak: %6.0fs rss %.1f MB anon %.1f MB go heap %.1f MB fds %d goroutines %d disk %.1f MB turns %d\n", smp.T,
			float64(smp.RSSKB)/1024, float64(smp.AnonKB)/1024, float64(smp.GoHeapKB)/1024, smp.FDs, smp.Goroutines, float64(smp.DiskBytes)/(1<<20), smp.Turns)
		return nil
	}
	var sampleErr error
	if sampleErr = take(); sampleErr == nil {
		for next := start.Add(c.sample); ctx.Err() == nil; next = next.Add(c.sample) {
			if next.After(deadline) {
				next = deadline
			}
			select {
			case <-time.After(time.Until(next)):
			case <-ctx.Done():
			case <-d.done:
			}
			if ctx.Err() != nil {
				break
			}
			if sampleErr = take(); sampleErr != nil || !next.Before(deadline) {
				break
			}
		}
	}
	close(h.stopped)
	h.wg.Wait()
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	rep.Machine.LoadAfter = loadavg()
	up := sampleErr == nil
	if !up {
		h.violate("the daemon did not stay up: %v: %s", sampleErr, lastLines(d.stderr.String(), 5))
	}

	// Nothing acknowledged is lost: the chaos run's checks, on the daemon that served the whole run.
	if up {
		h.led.mu.Lock()
		settle := time.Until(h.led.maxDue.Add(2*pollSecs*time.Second + time.Second))
		h.led.mu.Unlock()
		if settle > 0 {
			time.Sleep(min(settle, 30*time.Second))
		}
		if err := h.check(); err != nil {
			h.violate("the checks after the run could not run: %v", err)
		}
		if err := d.stop(); err != nil {
			h.violate("the daemon did not stop cleanly after the run: %v", err)
		}
		d = nil
	}
	rep.Violations = h.violations
	s.mu.Lock()
	rep.Activity, rep.Errors = s.activity, s.errs
	s.mu.Unlock()
	h.led.do(func() {
		acked := 0
		for _, t := range h.led.turns {
			if t.acked {
				acked++
			}
		}
		rep.Activity["turns sent"] = len(h.led.turns)
		rep.Activity["turns acknowledged"] = acked
		rep.Activity["memories stored"] = len(h.led.memories)
		rep.Activity["jobs scheduled"] = len(h.led.cronAcked)
		rep.Activity["SOP runs"] = len(h.led.sopRuns)
		rep.Activity["config sets"] = h.led.configSets
		for k, v := range h.led.rpcErrors {
			rep.Errors["JSON-RPC "+k] += v
		}
		for k, v := range h.led.connErrs {
			rep.Errors["connection cut: "+k] += v
		}
	})
	rep.warmup = c.warmup
	rep.Criteria = verdict(rep, c, up)
	return rep, nil
}

// verdict applies the criteria to the samples after the warm-up.
func verdict(rep *soakReport, c soakConfig, up bool) []criterion {
	xs := make([]float64, len(rep.Samples))
	for i, smp := range rep.Samples {
		xs[i] = smp.T
	}
	from := afterWarmup(xs, c.warmup)
	win := xs[from:]
	series := func(f func(soakSample) float64) []float64 {
		out := make([]float64, 0, len(rep.Samples)-from)
		for _, smp := range rep.Samples[from:] {
			out = append(out, f(smp))
		}
		return out
	}
	var out []criterion
	out = append(out, criterion{Name: "daemon up", Value: fmt.Sprintf("%d samples", len(rep.Samples)), Bound: "served the whole run", OK: up})

	rss := series(func(s soakSample) float64 { return float64(s.RSSKB) / 1024 })
	m, _, ok := slope(win, rss)
	perHour := m * 3600
	out = append(out, criterion{Name: "RSS slope", Value: fmt.Sprintf("%+.3f MB/hour (standard error %.3f) over %d samples", perHour, slopeSE(win, rss)*3600, len(win)),
		Bound: fmt.Sprintf("≤ %g MB/hour (least squares, after the warm-up)", c.rssSlope), OK: ok && perHour <= c.rssSlope})
	for _, f := range []struct {
		name string
		band float64
		get  func(soakSample) float64
	}{
		{"open fds flat", c.fdBand, func(s soakSample) float64 { return float64(s.FDs) }},
		{"goroutines flat", c.grBand, func(s soakSample) float64 { return float64(s.Goroutines) }},
	} {
		fl := flat(win, series(f.get))
		out = append(out, criterion{Name: f.name, Value: fmt.Sprintf("%.0f–%.0f, trend %+.1f across %.0f min", fl.Min, fl.Max, fl.Slope*fl.Span, fl.Span/60),
			Bound: fmt.Sprintf("max−min ≤ %g and abs(trend) ≤ %g", f.band, f.band/2), OK: len(win) >= 2 && fl.within(f.band)})
	}
	var maxWAL, maxDisk int64
	walName := ""
	for _, smp := range rep.Samples {
		for k, v := range smp.WALs {
			if v > maxWAL {
				maxWAL, walName = v, k
			}
		}
		maxDisk = max(maxDisk, smp.DiskBytes)
	}
	out = append(out, criterion{Name: "every WAL bounded", Value: fmt.Sprintf("largest %s (%s)", mb(maxWAL), walName),
		Bound: "≤ " + mb(c.maxWAL) + " at every sample", OK: maxWAL <= c.maxWAL})
	out = append(out, criterion{Name: "disk under the budget", Value: "largest " + mb(maxDisk),
		Bound: "≤ " + mb(c.maxDisk) + " at every sample", OK: maxDisk <= c.maxDisk})
	acked := rep.Activity["turns acknowledged"]
	out = append(out, criterion{Name: "nothing acknowledged lost", Value: fmt.Sprintf("%d violations; %d turns acknowledged of %d sent", len(rep.Violations), acked, rep.Activity["turns sent"]),
		Bound: "0 violations (the chaos run's checks)", OK: len(rep.Violations) == 0 && acked > 0})
	nerr := 0
	for _, v := range rep.Errors {
		nerr += v
	}
	out = append(out, criterion{Name: "no client error", Value: fmt.Sprint(nerr), Bound: "0 (nothing kills the daemon in a soak)", OK: nerr == 0})
	return out
}

func mb(b int64) string { return fmt.Sprintf("%.1f MB", float64(b)/(1<<20)) }

// waitGateway waits until the gateway answers /health (it binds after the socket).
func (s *soakRun) waitGateway() error {
	url := fmt.Sprintf("http://127.0.0.1:%d/health", s.gwPort)
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		resp, err := s.hc.Get(url)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the gateway on port %d did not answer /health within 30 s: %v", s.gwPort, err)
		}
	}
}

// sample reads the daemon's memory, fds and goroutines, and the install's files.
func (s *soakRun) sample(pid int, t float64) (soakSample, error) {
	smp := soakSample{T: t, Stores: map[string]int64{}, WALs: map[string]int64{}, DiskByDir: map[string]int64{}}
	r, err := s.read(pid)
	if err != nil {
		return smp, err
	}
	// The process series are the medians of the once-a-second readings since the last sample (this reading
	// with them): one reading is a moment of a sawtooth (a GC cycle, a burst of connections, file pages the
	// kernel dropped and faults back in on a shared machine); the median of the interval is where it sat.
	s.readMu.Lock()
	rs := append(s.readings, r)
	s.readings = nil
	s.readMu.Unlock()
	med := func(f func(reading) int) int {
		xs := make([]float64, len(rs))
		for i, r := range rs {
			xs[i] = float64(f(r))
		}
		return int(median(xs))
	}
	smp.RSSKB = med(func(r reading) int { return r.rss })
	smp.AnonKB = med(func(r reading) int { return r.anon })
	smp.FDs = med(func(r reading) int { return r.fds })
	smp.Goroutines = med(func(r reading) int { return r.goroutines })
	smp.GoHeapKB = med(func(r reading) int { return r.heap })
	smp.Readings = len(rs)
	data := filepath.Join(s.h.in.root, "data")
	_ = filepath.WalkDir(s.h.in.home, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return nil
		}
		fi, err := d.Info()
		if err != nil {
			return nil
		}
		used := allocated(fi)
		smp.DiskBytes += used
		if rel, err := filepath.Rel(s.h.in.root, filepath.Dir(p)); err == nil {
			parts := strings.SplitN(filepath.ToSlash(rel), "/", 3)
			smp.DiskByDir[strings.Join(parts[:min(2, len(parts))], "/")] += used
		}
		rel, err := filepath.Rel(data, p)
		if err != nil || strings.HasPrefix(rel, "..") {
			return nil
		}
		rel = filepath.ToSlash(rel)
		switch {
		case strings.HasSuffix(rel, ".db"):
			smp.Stores[rel] = fi.Size()
		case strings.HasSuffix(rel, ".db-wal"):
			smp.WALs[strings.TrimSuffix(rel, "-wal")] = fi.Size()
		}
		return nil
	})
	s.h.led.do(func() {
		for _, r := range s.h.led.turns {
			if r.acked {
				smp.Turns++
			}
		}
	})
	return smp, nil
}

// reading is one look at the process.
type reading struct{ rss, anon, fds, goroutines, heap int }

func (s *soakRun) read(pid int) (reading, error) {
	var r reading
	var err error
	if r.rss, err = rssKB(pid, "VmRSS:"); err != nil {
		return r, err
	}
	if r.anon, err = smapsAnon(pid); err != nil {
		return r, err
	}
	fds, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	if err != nil {
		return r, err
	}
	r.fds = len(fds)
	r.goroutines, r.heap, err = s.runtimeMetrics()
	return r, err
}

// readEverySecond reads the process once a second until the run stops, for sample's medians.
func (s *soakRun) readEverySecond(pid int) {
	defer s.h.wg.Done()
	for {
		select {
		case <-s.h.stopped:
			return
		case <-time.After(time.Second):
		}
		if r, err := s.read(pid); err == nil {
			s.readMu.Lock()
			if len(s.readings) < 100000 {
				s.readings = append(s.readings, r)
			}
			s.readMu.Unlock()
		}
	}
}

// smapsAnon is the Anonymous: line of /proc/PID/smaps_rollup, in kB.
func smapsAnon(pid int) (int, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/smaps_rollup", pid))
	if err != nil {
		return 0, err
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "Anonymous:"); ok {
			var kb int
			_, err := fmt.Sscanf(strings.TrimSpace(v), "%d kB", &kb)
			return kb, err
		}
	}
	return 0, fmt.Errorf("no Anonymous: in /proc/%d/smaps_rollup", pid)
}

// runtimeMetrics is go_goroutines and go_memstats_heap_inuse_bytes (in kB) from the gateway's /metrics.
func (s *soakRun) runtimeMetrics() (goroutines, heapKB int, err error) {
	resp, err := s.hc.Get(fmt.Sprintf("http://127.0.0.1:%d/metrics", s.gwPort))
	if err != nil {
		return 0, 0, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 4<<20))
	if err != nil {
		return 0, 0, err
	}
	g, err := parseMetric(string(body), "go_goroutines")
	if err != nil {
		return 0, 0, err
	}
	h, err := parseMetric(string(body), "go_memstats_heap_inuse_bytes")
	return int(g), int(h / 1024), err
}

// parseMetric finds an unlabelled sample in a Prometheus text exposition.
func parseMetric(text, name string) (float64, error) {
	for _, l := range strings.Split(text, "\n") {
		if v, ok := strings.CutPrefix(l, name+" "); ok {
			var n float64
			if _, err := fmt.Sscanf(strings.TrimSpace(v), "%g", &n); err != nil {
				return 0, fmt.Errorf("%s %q: %w", name, v, err)
			}
			return n, nil
		}
	}
	return 0, errors.New("/metrics has no " + name + " sample")
}

// paced is a worker whose every step is followed by a pause (the soak drives the daemon steadily, not flat out).
type paced struct {
	worker
	pause time.Duration
	h     *chaos
}

func (p *paced) step(c *client) error {
	err := p.worker.step(c)
	select {
	case <-time.After(p.pause):
	case <-p.h.stopped:
	}
	return err
}

// goLoop runs f every pause until the run stops.
func (s *soakRun) goLoop(f func() error, pause time.Duration) {
	s.h.wg.Add(1)
	go func() {
		defer s.h.wg.Done()
		for !s.h.done() {
			_ = f()
			select {
			case <-time.After(pause):
			case <-s.h.stopped:
			}
		}
	}()
}

// soakChat takes turns on the socket on n sessions in turn (created on the first connection, resumed after).
type soakChat struct {
	s    *soakRun
	w, n int
	i    int
}

func (sc *soakChat) sid(k int) string { return fmt.Sprintf("soak-chat-%d-%d", sc.w, k) }

func (sc *soakChat) connect(c *client) error {
	for k := range sc.n {
		if _, err := c.newSession(map[string]any{"agent_alias": "default", "session_id": sc.sid(k)}); err != nil {
			return err
		}
	}
	return nil
}

func (sc *soakChat) step(c *client) error {
	sc.i++
	return sc.s.turn(c, sc.sid(sc.i%sc.n), fmt.Sprintf("soak chat w%d turn %d end", sc.w, sc.i), "socket turn")
}

// prefill takes n turns on 4 connections at once, over the chat sessions the turn workers use later.
func (s *soakRun) prefill(n int) error {
	var next atomic.Int64
	errs := make(chan error, 4)
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, _, err := dialInit(s.h.in.sock)
			if err != nil {
				errs <- err
				return
			}
			defer c.Close()
			sc := &soakChat{s: s, w: w, n: s.c.sessions}
			if err := sc.connect(c); err != nil {
				errs <- err
				return
			}
			for i := next.Add(1); i <= int64(n); i = next.Add(1) {
				if err := s.turn(c, sc.sid(int(i)%sc.n), fmt.Sprintf("soak prefill turn %d end", i), "prefill turn"); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	return <-errs
}

// turn takes one recorded turn on the socket.
func (s *soakRun) turn(c *client, sid, text, kind string) error {
	rec := &turnRec{session: sid, mode: "chat"}
	s.h.led.do(func() { s.h.led.turns[text] = rec })
	t, err := c.prompt(sid, text)
	if err != nil {
		s.fail(kind, err)
		return err
	}
	if t.outcome != "completed" {
		err := fmt.Errorf("outcome %q", t.outcome)
		s.fail(kind, err)
		return err
	}
	s.h.led.do(func() { rec.acked = true })
	s.count(kind)
	return nil
}

// soakUpload uploads a 1 MB file through file/upload/begin|chunk|commit, then takes a turn whose prompt carries
// its marker. The files come from a pool of 8 (uploads are stored by content, so the disk holds 8 of them however
// long the run): each upload still goes through every chunk, the hash and the store's dedup check.
type soakUpload struct {
	s    *soakRun
	rng  *rand.Rand
	pool [][]byte
	i    int
}

const soakUploadBytes = 1 << 20

func (su *soakUpload) connect(c *client) error {
	if su.pool == nil {
		for range 8 {
			b := make([]byte, soakUploadBytes)
			for i := range b {
				b[i] = byte(su.rng.Uint32())
			}
			su.pool = append(su.pool, b)
		}
	}
	_, err := c.newSession(map[string]any{"agent_alias": "default", "session_id": "soak-upload"})
	return err
}

func (su *soakUpload) step(c *client) error {
	su.i++
	data := su.pool[su.i%len(su.pool)]
	_, path, err := upload(c, "soak-upload", "soak.bin", data)
	if err != nil {
		su.s.fail("upload", err)
		return err
	}
	su.s.count("1 MB upload")
	l := su.s.h.led
	h := sha256.Sum256(data)
	sum := hex.EncodeToString(h[:])
	l.do(func() { l.uploadsSent[sum] = true; l.uploadsAcked[path] = sum })
	return su.s.turn(c, "soak-upload", fmt.Sprintf("soak upload turn %d end\n[Document: soak.bin] %s", su.i, path), "turn with a 1 MB upload")
}

// soakChurn opens a connection, initializes, asks status and closes, every step.
type soakChurn struct{ s *soakRun }

func (sc *soakChurn) connect(*client) error { return nil }

func (sc *soakChurn) step(*client) error {
	c, _, err := dialInit(sc.s.h.in.sock)
	if err == nil {
		err = c.callInto("status", map[string]any{}, nil)
		c.Close()
	}
	if err != nil {
		sc.s.fail("socket churn", err)
		return nil // the worker's own connection is fine: keep it
	}
	sc.s.count("socket connect, status, close")
	return nil
}

// httpStep is one gateway request on a new connection: /health, /metrics and /api/status in turn.
func (s *soakRun) httpStep() error {
	s.mu.Lock()
	n := s.activity["gateway HTTP request"]
	s.mu.Unlock()
	path := []string{"/health", "/metrics", "/health"}[n%3]
	resp, err := s.hc.Get(fmt.Sprintf("http://127.0.0.1:%d%s", s.gwPort, path))
	if err == nil {
		_, err = io.Copy(io.Discard, io.LimitReader(resp.Body, 8<<20))
		resp.Body.Close()
		if err == nil && resp.StatusCode != http.StatusOK {
			err = fmt.Errorf("GET %s: %s", path, resp.Status)
		}
	}
	if err != nil {
		s.fail("gateway HTTP", err)
		return err
	}
	s.count("gateway HTTP request")
	return nil
}

// wsStep opens /ws/chat, takes three turns on the session it starts and closes: a new session each time.
func (s *soakRun) wsStep() error {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	conn, _, err := websocket.Dial(ctx, fmt.Sprintf("ws://127.0.0.1:%d/ws/chat?agent=default", s.gwPort),
		&websocket.DialOptions{Subprotocols: []string{"zeroclaw.v1"}})
	if err != nil {
		s.fail("/ws/chat", err)
		return err
	}
	defer conn.CloseNow()
	conn.SetReadLimit(1 << 20)
	var start struct {
		Type      string `json:"type"`
		SessionID string `json:"session_id"`
	}
	if err := wsRead(ctx, conn, &start); err != nil || start.Type != "session_start" || start.SessionID == "" {
		err = fmt.Errorf("first frame %+v: %v", start, err)
		s.fail("/ws/chat", err)
		return err
	}
	s.count("/ws/chat connection")
	for range 3 {
		n := s.wsTurns.Add(1)
		text := fmt.Sprintf("soak ws %s turn %d end", start.SessionID, n)
		rec := &turnRec{session: start.SessionID, mode: "chat"}
		s.h.led.do(func() { s.h.led.turns[text] = rec })
		b, _ := json.Marshal(map[string]any{"type": "message", "content": text})
		if err := conn.Write(ctx, websocket.MessageText, b); err != nil {
			s.fail("/ws/chat", err)
			return err
		}
		for {
			var f struct {
				Type string `json:"type"`
				Code string `json:"code"`
			}
			if err := wsRead(ctx, conn, &f); err != nil {
				s.fail("/ws/chat", err)
				return err
			}
			if f.Type == "error" || f.Type == "aborted" {
				err := fmt.Errorf("%s %s", f.Type, f.Code)
				s.fail("/ws/chat", err)
				return err
			}
			if f.Type == "done" {
				break
			}
		}
		s.h.led.do(func() { rec.acked = true })
		s.count("/ws/chat turn")
	}
	return conn.Close(websocket.StatusNormalClosure, "")
}

func wsRead(ctx context.Context, conn *websocket.Conn, v any) error {
	_, b, err := conn.Read(ctx)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, v)
}

// opsStep runs the operator's next tool: doctor, a backup (checked, then deleted: the archives are not the
// daemon's disk use), logs.
func (s *soakRun) opsStep() error {
	s.mu.Lock()
	n := s.activity["operator: doctor"] + s.activity["operator: backup"] + s.activity["operator: logs"]
	s.mu.Unlock()
	var err error
	tool := []string{"doctor", "backup", "logs"}[n%3]
	switch tool {
	case "doctor":
		err = s.doctor()
	case "backup":
		dir, derr := os.MkdirTemp("", "zcsoak-backup")
		if derr != nil {
			return derr
		}
		arch := filepath.Join(dir, "backup.tar.gz")
		if err = s.h.cli("backup", arch); err == nil {
			if fi, serr := os.Stat(arch); serr != nil || fi.Size() == 0 {
				err = fmt.Errorf("backup wrote no archive: %v", serr)
			}
		}
		os.RemoveAll(dir)
	case "logs":
		err = s.h.cli("logs")
	}
	if err != nil {
		s.fail("operator "+tool, err)
		// Count it anyway, so that the next step runs the next tool.
	}
	s.count("operator: " + tool)
	if tool == "doctor" && err == nil {
		// A config reload through the CLI, after the config/set worker's last change.
		if rerr := s.h.cli("config", "reload"); rerr != nil {
			s.fail("operator config reload", rerr)
		} else {
			s.count("operator: config reload")
		}
	}
	return err
}

// doctor runs zeroclaw doctor --offline; when it fails, the error names the checks that were not ok.
func (s *soakRun) doctor() error {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, s.h.bin, "doctor", "--offline")
	cmd.Env = []string{"HOME=" + s.h.in.home, "PATH=" + os.Getenv("PATH")}
	out, err := cmd.CombinedOutput()
	if err == nil {
		return nil
	}
	var bad []string
	for _, l := range strings.Split(string(out), "\n") {
		if f := strings.Fields(l); len(f) > 0 && f[0] != "ok" && !strings.HasPrefix(l, "zeroclaw doctor:") {
			bad = append(bad, strings.TrimSpace(l))
		}
	}
	if len(bad) == 0 {
		bad = []string{lastLines(string(out), 3)}
	}
	return fmt.Errorf("zeroclaw doctor --offline: %w: %s", err, strings.Join(bad, "; "))
}

// writeSoakTable writes the verdict and the activity as Markdown.
func writeSoakTable(w io.Writer, rep *soakReport) {
	fmt.Fprintf(w, "\n| criterion | measured | bound | |\n|---|---|---|---|\n")
	for _, c := range rep.Criteria {
		mark := "PASS"
		if !c.OK {
			mark = "**FAIL**"
		}
		fmt.Fprintf(w, "| %s | %s | %s | %s |\n", c.Name, c.Value, c.Bound, mark)
	}
	if n := len(rep.Samples); n > 0 {
		first, last := rep.Samples[0], rep.Samples[n-1]
		fmt.Fprintf(w, "\n| series | first sample | last sample | slope after the warm-up |\n|---|---|---|---|\n")
		xs := make([]float64, n)
		for i, smp := range rep.Samples {
			xs[i] = smp.T
		}
		from := afterWarmup(xs, rep.warmup)
		trend := func(f func(soakSample) float64, unit string) string {
			ys := make([]float64, 0, n-from)
			for _, smp := range rep.Samples[from:] {
				ys = append(ys, f(smp))
			}
			m, _, ok := slope(xs[from:], ys)
			if !ok {
				return "—"
			}
			return fmt.Sprintf("%+.3f %s/hour", m*3600, unit)
		}
		row := func(name string, f func(soakSample) float64, format, unit string) {
			fmt.Fprintf(w, "| %s | "+format+" | "+format+" | %s |\n", name, f(first), f(last), trend(f, unit))
		}
		row("RSS", func(s soakSample) float64 { return float64(s.RSSKB) / 1024 }, "%.1f MB", "MB")
		row("anonymous memory", func(s soakSample) float64 { return float64(s.AnonKB) / 1024 }, "%.1f MB", "MB")
		row("Go heap in use", func(s soakSample) float64 { return float64(s.GoHeapKB) / 1024 }, "%.1f MB", "MB")
		row("open fds", func(s soakSample) float64 { return float64(s.FDs) }, "%.0f", "fds")
		row("goroutines", func(s soakSample) float64 { return float64(s.Goroutines) }, "%.0f", "goroutines")
		row("disk", func(s soakSample) float64 { return float64(s.DiskBytes) / (1 << 20) }, "%.1f MB", "MB")
		for _, k := range sortedKeys(last.Stores) {
			fmt.Fprintf(w, "| %s (-wal) | %s (%s) | %s (%s) | |\n", k, mb(first.Stores[k]), mb(first.WALs[k]), mb(last.Stores[k]), mb(last.WALs[k]))
		}
	}
	fmt.Fprintf(w, "\n| activity | count |\n|---|---|\n")
	for _, k := range sortedKeys(rep.Activity) {
		fmt.Fprintf(w, "| %s | %d |\n", k, rep.Activity[k])
	}
	for _, k := range sortedKeys(rep.Errors) {
		fmt.Fprintf(w, "| error: %s | %d |\n", strings.ReplaceAll(k, "|", "\\|"), rep.Errors[k])
	}
	for _, v := range rep.Violations[:min(len(rep.Violations), 20)] {
		fmt.Fprintf(w, "\nVIOLATION: %s\n", v)
	}
}

// writeSoakOut writes soak.json, soak.md, samples.csv and the plots into dir.
func writeSoakOut(dir string, rep *soakReport, table string, c soakConfig) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	b, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "soak.json"), append(b, '\n'), 0o644); err != nil {
		return err
	}
	m := rep.Machine
	head := fmt.Sprintf("- Command: `%s`\n- Started: %s, ran %s, a sample every %s; the first %.0f%% is the warm-up\n"+
		"- Machine: %s/%s, %d CPUs (%s), %s memory, kernel %s, %s; shared with other work\n- Load average (1, 5, 15 min) at the start: %s; at the end: %s\n",
		rep.Command, rep.Started.Format(time.RFC3339), rep.Duration, rep.Sample, c.warmup*100, m.OS, m.Arch, m.CPUs, m.CPU, m.Memory, m.Kernel, m.Go, m.LoadBefore, m.LoadAfter)
	if err := os.WriteFile(filepath.Join(dir, "soak.md"), []byte(head+table), 0o644); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "samples.csv"), []byte(samplesCSV(rep.Samples)), 0o644); err != nil {
		return err
	}
	for name, p := range soakPlots(rep, c) {
		f, err := os.Create(filepath.Join(dir, name+".svg"))
		if err != nil {
			return err
		}
		err = writeSVG(f, p)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// storeNames is every store seen in any sample, sorted.
func storeNames(samples []soakSample) []string {
	seen := map[string]bool{}
	for _, s := range samples {
		for k := range s.Stores {
			seen[k] = true
		}
		for k := range s.WALs {
			seen[k] = true
		}
	}
	return sortedKeys(seen)
}

// samplesCSV is one row per sample: the process series, then each store's size and WAL (empty: no such file).
func samplesCSV(samples []soakSample) string {
	stores := storeNames(samples)
	var b strings.Builder
	b.WriteString("t_s,rss_kb,anon_kb,go_heap_kb,fds,goroutines,disk_bytes,turns_acked")
	for _, k := range stores {
		fmt.Fprintf(&b, ",%s,%s-wal", k, k)
	}
	b.WriteString("\n")
	opt := func(m map[string]int64, k string) string {
		if v, ok := m[k]; ok {
			return fmt.Sprint(v)
		}
		return ""
	}
	for _, s := range samples {
		fmt.Fprintf(&b, "%.1f,%d,%d,%d,%d,%d,%d,%d", s.T, s.RSSKB, s.AnonKB, s.GoHeapKB, s.FDs, s.Goroutines, s.DiskBytes, s.Turns)
		for _, k := range stores {
			fmt.Fprintf(&b, ",%s,%s", opt(s.Stores, k), opt(s.WALs, k))
		}
		b.WriteString("\n")
	}
	return b.String()
}

// soakPlots is one plot per series, by file name (without .svg).
func soakPlots(rep *soakReport, c soakConfig) map[string]plot {
	xs := make([]float64, len(rep.Samples))
	for i, s := range rep.Samples {
		xs[i] = s.T
	}
	warm := 0.0
	if len(xs) > 0 {
		warm = xs[0] + c.warmup*(xs[len(xs)-1]-xs[0])
	}
	one := func(title, unit string, f func(soakSample) float64, bound *float64) plot {
		ys := make([]float64, len(rep.Samples))
		for i, s := range rep.Samples {
			ys[i] = f(s)
		}
		return plot{Title: title, Unit: unit, Xs: xs, Lines: []line{{Name: title, Ys: ys}}, Warmup: warm, Bound: bound}
	}
	walBound, diskBound := float64(c.maxWAL)/(1<<20), float64(c.maxDisk)/(1<<20)
	plots := map[string]plot{
		"rss":        one("RSS", "MB", func(s soakSample) float64 { return float64(s.RSSKB) / 1024 }, nil),
		"anon":       one("anonymous memory", "MB", func(s soakSample) float64 { return float64(s.AnonKB) / 1024 }, nil),
		"goheap":     one("Go heap in use", "MB", func(s soakSample) float64 { return float64(s.GoHeapKB) / 1024 }, nil),
		"fds":        one("open fds", "fds", func(s soakSample) float64 { return float64(s.FDs) }, nil),
		"goroutines": one("goroutines", "goroutines", func(s soakSample) float64 { return float64(s.Goroutines) }, nil),
		"disk":       one("disk use of the install", "MB", func(s soakSample) float64 { return float64(s.DiskBytes) / (1 << 20) }, &diskBound),
		"turns":      one("turns acknowledged", "turns", func(s soakSample) float64 { return float64(s.Turns) }, nil),
	}
	stores := storeNames(rep.Samples)
	sizes := plot{Title: "store sizes", Unit: "MB", Xs: xs, Warmup: warm}
	wals := plot{Title: "WAL sizes", Unit: "MB", Xs: xs, Warmup: warm, Bound: &walBound}
	for _, k := range stores {
		get := func(m func(soakSample) map[string]int64) []float64 {
			ys := make([]float64, len(rep.Samples))
			for i, s := range rep.Samples {
				if v, ok := m(s)[k]; ok {
					ys[i] = float64(v) / (1 << 20)
				} else {
					ys[i] = math.NaN()
				}
			}
			return ys
		}
		sizes.Lines = append(sizes.Lines, line{Name: k, Ys: get(func(s soakSample) map[string]int64 { return s.Stores })})
		wals.Lines = append(wals.Lines, line{Name: k + "-wal", Ys: get(func(s soakSample) map[string]int64 { return s.WALs })})
	}
	// Without a legend too long to read: the ten largest stores at the end.
	sortByLast := func(ls []line) []line {
		slices.SortStableFunc(ls, func(a, b line) int {
			la, lb := lastValue(a.Ys), lastValue(b.Ys)
			switch {
			case la > lb:
				return -1
			case la < lb:
				return 1
			}
			return 0
		})
		return ls[:min(len(ls), len(plotColors))]
	}
	sizes.Lines, wals.Lines = sortByLast(sizes.Lines), sortByLast(wals.Lines)
	plots["stores"], plots["wals"] = sizes, wals
	return plots
}

func lastValue(ys []float64) float64 {
	for i := len(ys) - 1; i >= 0; i-- {
		if !math.IsNaN(ys[i]) {
			return ys[i]
		}
	}
	return 0
}

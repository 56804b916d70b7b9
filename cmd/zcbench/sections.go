package main

import (
	"bufio"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"debug/elf"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// section is one group of rows. Sections run in registry order against the run's daemon; a section whose
// surface the daemon lacks marks its rows "n/a" (found through initialize's capabilities or a probe, never
// assumed), so sections for surfaces still being built (the gateway) can be registered before they exist.
type section struct {
	name string
	run  func(b *bench) error
}

// registry lists the sections zcbench runs; add one to measure a new surface.
var registry = []section{
	{"binary", benchBinary},
	{"startup", benchStartup},
	{"connections", benchConnections},
	{"status", benchStatus},
	{"streaming", benchStreaming},
	{"appends", benchAppends},
	{"uploads", benchUploads},
	{"memory", benchMemory},
	{"migration", benchMigration},
	{"gateway", benchGateway},
	{"load", benchLoad},
}

// sectionNames lists the registry's names for -sections' help.
func sectionNames() string {
	names := make([]string, len(registry))
	for i, s := range registry {
		names[i] = s.name
	}
	return strings.Join(names, ",")
}

// chooseSections is the registry filtered by -sections (empty: all of it), in registry order; startup is
// always kept because it starts the daemon the other sections measure.
func chooseSections(list string) ([]section, error) {
	if strings.TrimSpace(list) == "" {
		return registry, nil
	}
	want := map[string]bool{"startup": true}
	for name := range strings.SplitSeq(list, ",") {
		name = strings.TrimSpace(name)
		known := false
		for _, s := range registry {
			known = known || s.name == name
		}
		if !known {
			return nil, fmt.Errorf("-sections: no section %q (there are %s)", name, sectionNames())
		}
		want[name] = true
	}
	var out []section
	for _, s := range registry {
		if want[s.name] {
			out = append(out, s)
		}
	}
	return out, nil
}

// bench is the state of one run: the daemon every section measures, and the floors beside it.
type bench struct {
	ctx     context.Context
	bin     string
	run     int
	res     *results
	log     io.Writer
	tmp     string // short temp dir for floor sockets and files
	in      *install
	d       *proc
	caps    map[string]bool
	sseURL  string
	gwPort  int
	quick   bool // shorter loops (the test's smoke run)
	echo    string
	sink    string
	servers []*server
}

func (b *bench) logf(format string, args ...any) { fmt.Fprintf(b.log, format+"\n", args...) }

// scale shortens loop counts and durations for a quick run.
func (b *bench) n(full int) int {
	if b.quick {
		return max(1, full/10)
	}
	return full
}

func (b *bench) dur(full time.Duration) time.Duration {
	if b.quick {
		return full / 5
	}
	return full
}

// has reports whether the daemon lists method in its capabilities.
func (b *bench) has(methods ...string) (bool, string) {
	for _, m := range methods {
		if !b.caps[m] {
			return false, "not built yet: initialize lists no " + m
		}
	}
	return true, ""
}

// freePort picks a loopback TCP port that was free a moment ago.
func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// runOnce runs every section once on a fresh install and daemon.
func runOnce(ctx context.Context, bin string, run int, res *results, log io.Writer, quick bool, sections []section) (err error) {
	b := &bench{ctx: ctx, bin: bin, run: run, res: res, log: log, quick: quick}
	if b.tmp, err = os.MkdirTemp("", "zcbf"); err != nil {
		return err
	}
	defer os.RemoveAll(b.tmp)
	sse, url, err := sseServer()
	if err != nil {
		return err
	}
	defer sse.Close()
	b.sseURL = url
	if b.gwPort, err = freePort(); err != nil {
		return err
	}
	echo, echoPath, err := startEchoProcess(b.tmp)
	if err != nil {
		return err
	}
	defer echo.stop()
	sink, sinkPath, err := sinkFloor(b.tmp)
	if err != nil {
		return err
	}
	b.echo, b.sink, b.servers = echoPath, sinkPath, []*server{sink}
	defer func() {
		for _, s := range b.servers {
			s.close()
		}
		if b.d != nil {
			if serr := b.d.stop(); serr != nil && err == nil {
				err = serr
			}
		}
		if b.in != nil {
			b.in.remove()
		}
	}()
	for _, s := range sections {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		start := time.Now()
		if err := s.run(b); err != nil {
			return fmt.Errorf("run %d, section %s: %w", run, s.name, err)
		}
		b.logf("run %d: %s done in %s", run, s.name, time.Since(start).Round(time.Millisecond))
	}
	return nil
}

// benchBinary: the size of the file measured and of the same file stripped.
func benchBinary(b *bench) error {
	fi, err := os.Stat(b.bin)
	if err != nil {
		return err
	}
	const mb = 1 << 20
	b.res.add("binary", "size as built", "MB", noTarget(), float64(fi.Size())/mb)
	if f, err := elf.Open(b.bin); err == nil {
		if f.Section(".symtab") == nil {
			b.res.note("binary", "size as built", "already stripped")
		}
		f.Close()
	}
	strip, err := exec.LookPath("strip")
	if err != nil {
		b.res.na("binary", "size stripped", "MB", maxValue(20, "≤ 20 MB"), "no strip(1) on this machine")
		return nil
	}
	out := filepath.Join(b.tmp, "stripped")
	if msg, err := exec.Command(strip, "-o", out, b.bin).CombinedOutput(); err != nil {
		return fmt.Errorf("strip: %v: %s", err, msg)
	}
	sfi, err := os.Stat(out)
	if err != nil {
		return err
	}
	b.res.add("binary", "size stripped", "MB", maxValue(20, "≤ 20 MB"), float64(sfi.Size())/mb)
	return os.Remove(out)
}

// benchStartup: exec → socket ready on a fresh install and on the same install again; idle RSS. The second
// daemon stays up for the sections after this one.
func benchStartup(b *bench) error {
	in, err := newInstall(installOptions{sseURL: b.sseURL, maxConnections: 1100, gatewayPort: b.gwPort})
	if err != nil {
		return err
	}
	b.in = in
	d, err := startDaemon(b.bin, in)
	if err != nil {
		return err
	}
	fresh, freshServed := d.ready, d.served
	if err := d.stop(); err != nil {
		return err
	}
	if b.d, err = startDaemon(b.bin, in); err != nil {
		return err
	}
	ms := func(t time.Duration) float64 { return float64(t) / float64(time.Millisecond) }
	b.res.add("startup", "exec → socket ready, fresh install", "ms", maxValue(50, "≤ 50 ms"), ms(fresh))
	b.res.add("startup", "exec → socket ready, existing install", "ms", maxValue(50, "≤ 50 ms"), ms(b.d.ready))
	b.res.add("startup", "exec → first status answered, fresh install", "ms", noTarget(), ms(freshServed))
	b.res.add("startup", "exec → first status answered, existing install", "ms", noTarget(), ms(b.d.served))
	c, init, err := dialInit(in.sock)
	if err != nil {
		return err
	}
	b.caps = capabilities(init)
	c.Close()
	time.Sleep(b.dur(time.Second)) // let the start-up garbage settle before reading RSS
	rss, err := rssKB(b.d.pid(), "VmRSS:")
	if err != nil {
		return err
	}
	anon, err := rssKB(b.d.pid(), "RssAnon:")
	if err != nil {
		return err
	}
	b.res.add("startup", "idle RSS", "MB", maxValue(12, "≤ 12 MB"), float64(rss)/1024)
	b.res.add("startup", "idle RSS, anonymous part", "MB", noTarget(), float64(anon)/1024)
	return nil
}

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
		for _, r := range []string{"events/s to one reader, 256-chunk turn", "time to first chunk, 16-chunk turn", "daemon overhead per 16-chunk turn", "first chunk after the provider's"} {
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
	daemonTurns := func(chunks, n int) ([]turn, error) {
		var out []turn
		for i := range n + 2 { // the first two warm up
			sid, err := c.newSession(map[string]any{"agent_alias": "sse"})
			if err != nil {
				return nil, err
			}
			t, err := c.prompt(sid, fmt.Sprintf("chunks=%d go", chunks))
			if err != nil {
				return nil, err
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

// benchAppends: messages made durable per second by the daemon (echo turns on 4 sessions at once: each turn
// appends the prompt and the answer before its response), beside a bare insert loop on a copy of the daemon's
// own sessions.db schema (FTS triggers included) with the same pragmas.
func benchAppends(b *bench) error {
	const sec, row = "appends", "durable appends/s"
	if ok, why := b.has("session/new", "session/prompt"); !ok {
		b.res.na(sec, row, "msg/s", minRatio(0.6), why)
		return nil
	}
	// One session alone first: what one echo turn (two appends and the turn's own work) costs end to end.
	c, _, err := dialInit(b.in.sock)
	if err != nil {
		return err
	}
	sid, err := c.newSession(map[string]any{"agent_alias": "default"})
	if err != nil {
		c.Close()
		return err
	}
	var one []time.Duration
	for i := range b.n(100) {
		t, err := c.prompt(sid, fmt.Sprintf("alone a%d", i))
		if err != nil || t.outcome != "completed" {
			c.Close()
			return fmt.Errorf("echo turn: %v %q", err, t.outcome)
		}
		one = append(one, t.total)
	}
	err = c.callInto("session/close", map[string]any{"session_id": sid}, nil)
	c.Close()
	if err != nil {
		return err
	}
	b.res.add(sec, "echo turn round trip, 1 session, p50", "ms", noTarget(), percentile(durations(one, time.Millisecond), 50))

	const k = 4
	var done atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, k)
	d := b.dur(2 * time.Second)
	start := time.Now()
	for w := range k {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, _, err := dialInit(b.in.sock)
			if err != nil {
				errs <- err
				return
			}
			defer c.Close()
			sid, err := c.newSession(map[string]any{"agent_alias": "default"})
			if err != nil {
				errs <- err
				return
			}
			for i := 0; time.Since(start) < d; i++ {
				t, err := c.prompt(sid, fmt.Sprintf("w%d a%d", w, i))
				if err != nil {
					errs <- err
					return
				}
				if t.outcome != "completed" {
					errs <- fmt.Errorf("echo turn outcome %q", t.outcome)
					return
				}
				done.Add(2)
			}
			errs <- c.callInto("session/close", map[string]any{"session_id": sid}, nil)
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	close(errs)
	for err := range errs {
		if err != nil {
			return err
		}
	}
	rate := float64(done.Load()) / elapsed.Seconds()
	schema, err := copySchema(b.ctx, filepath.Join(b.in.root, "data", "sessions", "sessions.db"))
	if err != nil {
		return err
	}
	if len(schema) == 0 {
		return errors.New("the daemon's sessions.db has no schema to copy")
	}
	bare, err := bareAppends(b.ctx, filepath.Join(b.tmp, fmt.Sprintf("bare-%d.db", b.run)), schema, b.n(2000))
	if err != nil {
		return err
	}
	b.res.addFloor(sec, row, "msg/s", minRatio(0.6), rate, bare)
	b.res.note(sec, row, "daemon: echo turns on 4 sessions, 2 appends a turn, turn work included")
	return nil
}

// benchUploads: an 8 MiB file through file/upload/begin, chunk ×8, commit, beside writing the same bytes raw
// over a Unix socket to a server that stores and fsyncs them. The target row takes the fastest path the daemon
// advertises: binary chunks (our extension, asked for in initialize) when it offers them, else data_b64; a
// second row always measures data_b64, the path of upstream's clients, on a connection that did not ask.
func benchUploads(b *bench) error {
	const sec, row, rowB64 = "uploads", "chunked upload, 8 MiB", "chunked upload, 8 MiB, data_b64"
	if ok, why := b.has("file/upload/begin", "file/upload/chunk", "file/upload/commit"); !ok {
		b.res.na(sec, row, "MiB/s", minRatio(0.7), why)
		return nil
	}
	fast, binary, err := dialUploads(b.in.sock, true)
	if err != nil {
		return err
	}
	defer fast.Close()
	plain, _, err := dialUploads(b.in.sock, false)
	if err != nil {
		return err
	}
	defer plain.Close()
	sid, err := fast.newSession(map[string]any{"agent_alias": "default"})
	if err != nil {
		return err
	}
	defer fast.callInto("session/close", map[string]any{"session_id": sid}, nil)
	const size = 8 << 20
	reps := b.n(5)
	var fastTime, b64Time, fTime time.Duration
	for i := range reps + 1 {
		var t [3]time.Duration
		for j, c := range []*client{fast, plain, nil} {
			data := make([]byte, size)
			rand.Read(data) // fresh bytes: a repeat would be deduplicated
			if c == nil {
				if t[j], err = rawWrite(b.sink, data); err != nil {
					return err
				}
				continue
			}
			if t[j], _, err = uploadWith(c, sid, fmt.Sprintf("bench-%d-%d.bin", i, j), data, c == fast && binary); err != nil {
				return err
			}
		}
		if i > 0 { // the first warms up
			fastTime += t[0]
			b64Time += t[1]
			fTime += t[2]
		}
	}
	mibs := func(t time.Duration) float64 { return float64(reps*size) / (1 << 20) / t.Seconds() }
	b.res.addFloor(sec, row, "MiB/s", minRatio(0.7), mibs(fastTime), mibs(fTime))
	if binary {
		b.res.note(sec, row, "binary chunks (data_len, then the raw bytes; negotiated in initialize)")
	} else {
		b.res.note(sec, row, "data_b64: the daemon offers no binary chunks")
	}
	b.res.addFloor(sec, rowB64, "MiB/s", noTarget(), mibs(b64Time), mibs(fTime))
	b.res.note(sec, rowB64, "base64 in the JSON frame, as upstream's clients send")
	return nil
}

// dialUploads dials and initializes a connection for uploads; asking for binary chunks, it reports whether the
// daemon enabled them.
func dialUploads(sock string, askBinary bool) (*client, bool, error) {
	c, err := dial(sock)
	if err != nil {
		return nil, false, err
	}
	params := map[string]any{"protocol_version": 1}
	if askBinary {
		params["clientCapabilities"] = map[string]any{"binary_upload_chunks": true}
	}
	var res struct {
		Extensions []string `json:"extensions"`
	}
	if err := c.callInto("initialize", params, &res); err != nil {
		c.Close()
		return nil, false, err
	}
	return c, slices.Contains(res.Extensions, "binary_upload_chunks"), nil
}

// upload sends data through the chunked upload methods (data_b64), checks the committed entry and returns the
// time it took and the workspace path the daemon stored the file at.
func upload(c *client, sid, name string, data []byte) (time.Duration, string, error) {
	return uploadWith(c, sid, name, data, false)
}

// uploadWith is upload, with binary chunks when binary (the connection enabled them): each chunk's line carries
// data_len and is followed by the raw bytes.
func uploadWith(c *client, sid, name string, data []byte, binary bool) (time.Duration, string, error) {
	sum := sha256.Sum256(data)
	start := time.Now()
	var begin struct {
		UploadID   string `json:"upload_id"`
		ChunkBytes int    `json:"chunk_bytes"`
	}
	if err := c.callInto("file/upload/begin", map[string]any{"session_id": sid, "size_bytes": len(data),
		"filename": name, "sha256": hex.EncodeToString(sum[:])}, &begin); err != nil {
		return 0, "", err
	}
	if begin.ChunkBytes <= 0 {
		return 0, "", fmt.Errorf("file/upload/begin: chunk_bytes %d", begin.ChunkBytes)
	}
	for off := 0; off < len(data); off += begin.ChunkBytes {
		end := min(off+begin.ChunkBytes, len(data))
		if binary {
			if err := c.binaryChunk(begin.UploadID, off, data[off:end]); err != nil {
				return 0, "", err
			}
			continue
		}
		if err := c.callInto("file/upload/chunk", map[string]any{"upload_id": begin.UploadID, "offset": off,
			"data_b64": base64.StdEncoding.EncodeToString(data[off:end])}, nil); err != nil {
			return 0, "", err
		}
	}
	var commit struct {
		SizeBytes     int    `json:"size_bytes"`
		WorkspacePath string `json:"workspace_path"`
	}
	if err := c.callInto("file/upload/commit", map[string]any{"upload_id": begin.UploadID}, &commit); err != nil {
		return 0, "", err
	}
	if commit.SizeBytes != len(data) {
		return 0, "", fmt.Errorf("file/upload/commit: size_bytes %d, want %d", commit.SizeBytes, len(data))
	}
	return time.Since(start), commit.WorkspacePath, nil
}

// rawWrite sends data to the sink floor and waits for its fsync acknowledgement.
func rawWrite(sock string, data []byte) (time.Duration, error) {
	nc, err := net.DialTimeout("unix", sock, timeout)
	if err != nil {
		return 0, err
	}
	defer nc.Close()
	_ = nc.SetDeadline(time.Now().Add(timeout))
	start := time.Now()
	if _, err := fmt.Fprintf(nc, "%d\n", len(data)); err != nil {
		return 0, err
	}
	if _, err := nc.Write(data); err != nil {
		return 0, err
	}
	ack, err := bufio.NewReader(nc).ReadString('\n')
	if err != nil || ack != "ok\n" {
		return 0, fmt.Errorf("sink answered %q, %v", ack, err)
	}
	return time.Since(start), nil
}

// benchMemory: memory/search round trips over 500 stored memories.
func benchMemory(b *bench) error {
	const sec = "memory"
	if ok, why := b.has("memory/store", "memory/search"); !ok {
		b.res.na(sec, "recall p50", "µs", noTarget(), why)
		b.res.na(sec, "recall p99", "µs", noTarget(), why)
		return nil
	}
	c, _, err := dialInit(b.in.sock)
	if err != nil {
		return err
	}
	defer c.Close()
	words := strings.Fields("alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima mike november oscar papa quebec romeo sierra tango uniform victor whiskey xray yankee zulu")
	n := b.n(500)
	for i := range n {
		content := fmt.Sprintf("fact %d: %s %s %s", i, words[i%len(words)], words[(i*7)%len(words)], words[(i*13)%len(words)])
		if err := c.callInto("memory/store", map[string]any{"key": fmt.Sprintf("bench_%d_%d", b.run, i), "content": content,
			"category": "core", "agent": "default"}, nil); err != nil {
			return err
		}
	}
	var lat []time.Duration
	for i := range b.n(300) {
		q := words[i%len(words)] + " " + words[(i*5)%len(words)]
		start := time.Now()
		var r struct {
			Count int `json:"count"`
		}
		if err := c.callInto("memory/search", map[string]any{"query": q, "agent": "default", "limit": 10}, &r); err != nil {
			return err
		}
		lat = append(lat, time.Since(start))
		if r.Count == 0 {
			return fmt.Errorf("memory/search %q found nothing among %d stored memories", q, n)
		}
	}
	us := durations(lat, time.Microsecond)
	b.res.add(sec, "recall p50", "µs", noTarget(), percentile(us, 50))
	b.res.add(sec, "recall p99", "µs", noTarget(), percentile(us, 99))
	b.res.note(sec, "recall p50", fmt.Sprintf("%d memories", n))
	return nil
}

// benchMigration: legacy data/sessions/*.jsonl files imported at start: messages per second from exec until
// the socket serves and every source is archived.
func benchMigration(b *bench) error {
	const sec, row = "migration", "JSONL import"
	in, err := newInstall(installOptions{})
	if err != nil {
		return err
	}
	defer in.remove()
	dir := filepath.Join(in.root, "data", "sessions")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	files, per := 10, b.n(2000)
	for f := range files {
		var s strings.Builder
		for i := range per {
			role := "user"
			if i%2 == 1 {
				role = "assistant"
			}
			fmt.Fprintf(&s, "{\"role\":%q,\"content\":\"message %d of chat %d: %s\"}\n", role, i, f, strings.Repeat("lorem ipsum ", 6))
		}
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("chat_%d.jsonl", f)), []byte(s.String()), 0o600); err != nil {
			return err
		}
	}
	d, err := startDaemon(b.bin, in)
	if err != nil {
		return err
	}
	defer d.stop()
	for {
		left, _ := filepath.Glob(filepath.Join(dir, "*.jsonl"))
		if len(left) == 0 {
			break
		}
		if time.Since(d.start) > 2*time.Minute {
			return fmt.Errorf("%d legacy files still not imported after 2 minutes", len(left))
		}
		time.Sleep(time.Millisecond)
	}
	elapsed := time.Since(d.start)
	c, _, err := dialInit(in.sock)
	if err != nil {
		return err
	}
	defer c.Close()
	var m struct {
		Total int `json:"total"`
	}
	if err := c.callInto("session/messages", map[string]any{"session_id": "chat_0", "limit": 1}, &m); err != nil {
		return err
	}
	if m.Total != per {
		return fmt.Errorf("chat_0 holds %d messages after the import, want %d", m.Total, per)
	}
	b.res.add(sec, row, "msg/s", noTarget(), float64(files*per)/elapsed.Seconds())
	b.res.note(sec, row, fmt.Sprintf("%d messages in %d files, exec to all archived", files*per, files))
	return nil
}

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

package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/pelletier/go-toml/v2"
)

// The chaos harness: clients write through every durable surface (chat and ACP turns, config, uploads,
// memories, scheduled jobs) while the harness kill -9s and restarts the daemon at moments drawn from a seeded
// RNG. It records every write the daemon acknowledged and, afterwards, checks that each one survived exactly
// once, that config.toml was always a version the daemon acknowledged (or the one in flight), and that no
// temporary or partial file is left. Everything runs on a temporary install over its Unix socket; the run is
// bounded by -duration plus a bounded settle and check phase.

const (
	promptProp  = "agents.default.system_prompt"
	cronLog     = "chaos-cron.log"
	pollSecs    = 5 // the smallest scheduler tick the config accepts
	maxUpload   = 2 << 20
	workerPause = 20 * time.Millisecond
)

// ledger is what the clients sent and what the daemon acknowledged. mu guards every field.
type ledger struct {
	mu sync.Mutex

	turns map[string]*turnRec // prompt text → its turn

	configInflight string // the value of the config/set under way ("" none)
	configAcked    string // the last acknowledged value
	configAll      map[string]bool
	configSets     int

	uploadsSent  map[string]bool   // sha256 hex of every payload whose upload began
	uploadsAcked map[string]string // workspace path → sha256 hex, committed

	memories map[string]string // key → content, acknowledged

	cronAcked map[int]cronRec // chaos job number → job
	cronSent  int
	maxDue    time.Time

	rpcErrors map[string]int // "method code" → count of JSON-RPC errors the clients got
	connErrs  map[string]int // worker kind → calls cut by a broken connection

	ops       map[string]int // operator tool → runs (chaos_ops.go)
	opsFailed map[string]int // operator tool → runs that failed (cut by a kill)
	lockLost  []string       // a tool after which the daemon no longer held an SQLite lock
	backups   []backupRec    // archives taken

	sopRuns []string // SOP runs the daemon acknowledged (chaos_sop.go)
}

type turnRec struct {
	session string
	mode    string // "chat" or "acp"
	acked   bool
}

type cronRec struct {
	id  string
	due time.Time
}

func newLedger() *ledger {
	return &ledger{turns: map[string]*turnRec{}, configAll: map[string]bool{}, uploadsSent: map[string]bool{},
		uploadsAcked: map[string]string{}, memories: map[string]string{}, cronAcked: map[int]cronRec{},
		rpcErrors: map[string]int{}, connErrs: map[string]int{}, ops: map[string]int{}, opsFailed: map[string]int{}}
}

func (l *ledger) do(f func()) {
	l.mu.Lock()
	defer l.mu.Unlock()
	f()
}

// chaos is one chaos run.
type chaos struct {
	bin     string
	in      *install
	log     io.Writer
	led     *ledger
	seed    uint64
	stopped chan struct{} // closed when the clients must stop
	wg      sync.WaitGroup
	// daemonPID is the pid of the daemon serving now, 0 from just before a kill until the restart is up.
	daemonPID atomic.Int64

	violations []string
	kills      int
	passed     int // invariants that held
	configBad  int // violations found in config.toml during the run
	lifeBad    int // restarts that failed, or a final stop that was not clean

	ch *chaosChannels // the chat channels' platforms and traffic (chaos_channels.go)
}

// invariants is how many invariants a run checks (each prints one PASS line when it holds).
const invariants = 13

func (h *chaos) violate(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	h.violations = append(h.violations, msg)
	fmt.Fprintln(h.log, "chaos: VIOLATION:", msg)
}

func (h *chaos) done() bool {
	select {
	case <-h.stopped:
		return true
	default:
		return false
	}
}

// runChaos parses the chaos flags and runs it; exit 0 when every invariant holds, 1 when one does not, 2 on a
// harness error.
func runChaos(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("zcbench chaos", flag.ContinueOnError)
	fs.SetOutput(stderr)
	bin := fs.String("bin", "", "zeroclaw binary (default: build it with go build)")
	duration := fs.Duration("duration", 60*time.Second, "how long the clients write while the daemon is killed")
	seed := fs.Uint64("seed", 0, "RNG seed for the kill schedule and the payloads (default: from the clock; printed)")
	clients := fs.Int("clients", 2, "clients of each kind (chat turns, ACP turns, uploads, memories)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *duration <= 0 || *duration > time.Hour || *clients < 1 || *clients > 16 {
		fmt.Fprintln(stderr, "zcbench chaos: -duration must be in (0, 1h] and -clients in [1, 16]")
		return 2
	}
	if *seed == 0 {
		*seed = uint64(time.Now().UnixNano())
	}
	path, cleanup, err := binary(ctx, *bin, stderr)
	if err != nil {
		fmt.Fprintln(stderr, "zcbench chaos:", err)
		return 2
	}
	defer cleanup()
	fmt.Fprintf(stdout, "zcbench chaos: seed %d (rerun with -seed %d for the same kill schedule and payloads), %s, %d clients of each kind\n",
		*seed, *seed, *duration, *clients)
	h := &chaos{bin: path, log: stdout, led: newLedger(), seed: *seed, stopped: make(chan struct{})}
	if err := h.run(ctx, *duration, *clients); err != nil {
		fmt.Fprintln(stderr, "zcbench chaos:", err)
		return 2
	}
	// The last line is the plain "N passed, N failed" that CI reads as this step's verdict.
	if len(h.violations) > 0 {
		fmt.Fprintf(stdout, "zcbench chaos: %d invariant violation(s); seed %d\n", len(h.violations), *seed)
		fmt.Fprintf(stdout, "chaos: %d passed, %d failed\n", h.passed, max(1, invariants-h.passed))
		return 1
	}
	fmt.Fprintln(stdout, "zcbench chaos: every invariant holds")
	fmt.Fprintf(stdout, "chaos: %d passed, 0 failed\n", h.passed)
	return 0
}

func (h *chaos) run(ctx context.Context, duration time.Duration, clients int) (err error) {
	channels, err := h.startChannels()
	if err != nil {
		return err
	}
	defer h.ch.close()
	if h.in, err = newInstall(installOptions{shellJobs: true, pollSecs: pollSecs, sops: true, channels: channels}); err != nil {
		return err
	}
	defer h.in.remove()
	d, err := startDaemon(h.bin, h.in)
	if err != nil {
		return err
	}
	h.daemonPID.Store(int64(d.pid()))
	defer func() {
		if d != nil {
			d.kill()
		}
	}()
	rng := rand.New(rand.NewPCG(h.seed, h.seed^0x9e3779b97f4a7c15))
	workerSeed := func() uint64 { return rng.Uint64() }
	if err := h.ch.spawnTraffic(workerSeed()); err != nil {
		return err
	}

	for w := range clients {
		h.spawn(&chatWorker{h: h, w: w, mode: "chat"})
		h.spawn(&chatWorker{h: h, w: w, mode: "acp"})
		h.spawn(&uploadWorker{h: h, w: w, rng: rand.New(rand.NewPCG(workerSeed(), 1))})
		h.spawn(&memoryWorker{h: h, w: w})
	}
	h.spawn(&configWorker{h: h})
	h.spawn(&cronWorker{h: h, rng: rand.New(rand.NewPCG(workerSeed(), 2))})
	h.spawn(&sopWorker{h: h})
	h.wg.Add(1)
	go h.opsLoop()

	deadline := time.Now().Add(duration)
	for time.Now().Before(deadline) && ctx.Err() == nil {
		// Mostly a while into the daemon's life; one time in ten right after it came up.
		wait := time.Duration(300+rng.IntN(2200)) * time.Millisecond
		if rng.IntN(10) == 0 {
			wait = time.Duration(rng.IntN(100)) * time.Millisecond
		}
		if until := time.Until(deadline); wait > until {
			wait = until
		}
		select {
		case <-time.After(wait):
		case <-ctx.Done():
		}
		if !time.Now().Before(deadline) || ctx.Err() != nil {
			break
		}
		h.daemonPID.Store(0)
		d.kill()
		d = nil
		h.kills++
		h.checkConfigFile("after kill " + fmt.Sprint(h.kills))
		if d, err = h.restart(); err != nil {
			h.lifeBad++
			h.violate("the daemon did not come back after kill %d: %v", h.kills, err)
			close(h.stopped)
			h.wg.Wait()
			return nil
		}
		h.daemonPID.Store(int64(d.pid()))
	}
	close(h.stopped)
	h.wg.Wait()
	if ctx.Err() != nil {
		return ctx.Err()
	}

	// Settle: every acknowledged job's due time is past by two scheduler ticks, on a daemon that stays up.
	h.led.mu.Lock()
	settle := time.Until(h.led.maxDue.Add(2*pollSecs*time.Second + time.Second))
	h.led.mu.Unlock()
	if settle > 0 {
		fmt.Fprintf(h.log, "chaos: %d kills; letting scheduled jobs fall due (%s)\n", h.kills, settle.Round(time.Second))
		time.Sleep(min(settle, 30*time.Second))
	}
	if err := h.check(); err != nil {
		return err
	}
	h.ch.checkChannels()
	h.checkOps()
	temps := h.tempFiles()
	if err := d.stop(); err != nil {
		h.lifeBad++
		h.violate("the daemon did not stop cleanly after the run: %v", err)
	}
	if h.lifeBad == 0 {
		h.pass("the daemon came back after each of %d kills and stopped cleanly at the end", h.kills)
	}
	d = nil
	h.checkConfigFile("after the final stop")
	if left := h.tempFiles(); len(left) > 0 {
		h.violate("temporary files left after the final stop: %q", left)
	} else {
		h.pass("no temporary files left after the final stop (%d were there after the last restart and a new upload, before the stop)", len(temps))
	}
	h.summary()
	return nil
}

func (h *chaos) pass(format string, args ...any) {
	h.passed++
	fmt.Fprintln(h.log, "chaos: PASS", fmt.Sprintf(format, args...))
}

// worker is one client's loop: connect (initialize and whatever the worker sets up), then steps until the run
// stops. A broken connection (the daemon was killed) reconnects; a JSON-RPC error is counted and the step
// retried with new data.
type worker interface {
	connect(c *client) error
	step(c *client) error
}

func (h *chaos) spawn(w worker) {
	h.wg.Add(1)
	go func() {
		defer h.wg.Done()
		var c *client
		defer func() {
			if c != nil {
				c.Close()
			}
		}()
		for !h.done() {
			if c == nil {
				var err error
				if c, _, err = dialInit(h.in.sock); err != nil {
					c = nil
					time.Sleep(workerPause)
					continue
				}
				if err := w.connect(c); err != nil {
					h.noteErr(w, err)
					c.Close()
					c = nil
					time.Sleep(workerPause)
					continue
				}
			}
			if err := w.step(c); err != nil {
				h.noteErr(w, err)
				var re *rpcError
				if !errors.As(err, &re) {
					c.Close()
					c = nil
				}
				time.Sleep(workerPause)
			}
		}
	}()
}

func (h *chaos) noteErr(w worker, err error) {
	kind := strings.TrimSuffix(strings.TrimPrefix(fmt.Sprintf("%T", w), "*main."), "Worker")
	var re *rpcError
	h.led.do(func() {
		if errors.As(err, &re) {
			h.led.rpcErrors[fmt.Sprintf("%s %d", re.Method, re.Err.Code)]++
		} else {
			h.led.connErrs[kind]++
		}
	})
}

// chatWorker runs echo turns on one session per connection: the chat worker resumes the same session each time,
// the ACP worker opens a new durable ACP session per connection so that many are left to resume.
type chatWorker struct {
	h    *chaos
	w    int
	mode string
	sid  string
	gen  int
	i    int
}

func (cw *chatWorker) connect(c *client) error {
	params := map[string]any{"agent_alias": "default"}
	if cw.mode == "acp" {
		cw.gen++
		cw.sid = fmt.Sprintf("chaos-acp-%d-%d", cw.w, cw.gen)
		params["chat_mode"] = "acp"
	} else {
		cw.sid = fmt.Sprintf("chaos-chat-%d", cw.w)
	}
	params["session_id"] = cw.sid
	_, err := c.newSession(params)
	return err
}

func (cw *chatWorker) step(c *client) error {
	cw.i++
	text := fmt.Sprintf("chaos %s w%d turn %d end", cw.mode, cw.w, cw.i)
	rec := &turnRec{session: cw.sid, mode: cw.mode}
	cw.h.led.do(func() { cw.h.led.turns[text] = rec })
	t, err := c.prompt(cw.sid, text)
	if err != nil {
		return err
	}
	if t.outcome == "completed" {
		cw.h.led.do(func() { rec.acked = true })
	}
	return nil
}

// configWorker sets the default agent's system prompt to a new value each step, one at a time.
type configWorker struct {
	h *chaos
	i int
}

func (cw *configWorker) connect(*client) error { return nil }

func (cw *configWorker) step(c *client) error {
	cw.i++
	v := fmt.Sprintf("chaos prompt %d", cw.i)
	l := cw.h.led
	l.do(func() { l.configInflight = v; l.configAll[v] = true })
	if err := c.callInto("config/set", map[string]any{"prop": promptProp, "value": v}, nil); err != nil {
		return err
	}
	l.do(func() { l.configAcked = v; l.configInflight = ""; l.configSets++ })
	time.Sleep(10 * time.Millisecond)
	return nil
}

// uploadWorker uploads files of random sizes and contents through the chunked upload methods.
type uploadWorker struct {
	h   *chaos
	w   int
	rng *rand.Rand
	sid string
}

func (uw *uploadWorker) connect(c *client) error {
	uw.sid = fmt.Sprintf("chaos-upload-%d", uw.w)
	_, err := c.newSession(map[string]any{"agent_alias": "default", "session_id": uw.sid})
	return err
}

func (uw *uploadWorker) step(c *client) error {
	data := make([]byte, 1+uw.rng.IntN(maxUpload))
	for i := range data {
		data[i] = byte(uw.rng.Uint32())
	}
	sum := sha256.Sum256(data)
	hexSum := hex.EncodeToString(sum[:])
	l := uw.h.led
	l.do(func() { l.uploadsSent[hexSum] = true })
	_, path, err := upload(c, uw.sid, fmt.Sprintf("chaos-%d.bin", uw.w), data)
	if err != nil {
		return err
	}
	l.do(func() { l.uploadsAcked[path] = hexSum })
	return nil
}

// memoryWorker stores memories under fresh keys.
type memoryWorker struct {
	h *chaos
	w int
	i int
}

func (mw *memoryWorker) connect(*client) error { return nil }

func (mw *memoryWorker) step(c *client) error {
	mw.i++
	key := fmt.Sprintf("chaos_%d_%d", mw.w, mw.i)
	content := fmt.Sprintf("chaos memory %d of client %d", mw.i, mw.w)
	if err := c.callInto("memory/store", map[string]any{"key": key, "content": content, "category": "core", "agent": "default"}, nil); err != nil {
		return err
	}
	mw.h.led.do(func() { mw.h.led.memories[key] = content })
	return nil
}

// cronWorker schedules one-shot shell jobs a few seconds ahead; each appends its number to a log in the
// workspace when it runs, so a job run twice shows as its number twice.
type cronWorker struct {
	h   *chaos
	rng *rand.Rand
}

func (cw *cronWorker) connect(*client) error { return nil }

func (cw *cronWorker) step(c *client) error {
	l := cw.h.led
	var n int
	l.do(func() { l.cronSent++; n = l.cronSent })
	due := time.Now().Add(time.Duration(1000+cw.rng.IntN(5000)) * time.Millisecond).UTC()
	var job struct {
		ID string `json:"id"`
	}
	if err := c.callInto("cron/add", map[string]any{"agent": "default", "name": fmt.Sprintf("chaos-%d", n),
		"schedule": map[string]any{"kind": "at", "at": due.Format(time.RFC3339Nano)},
		"command":  fmt.Sprintf("echo chaos-cron-%d >> %s", n, cronLog), "delete_after_run": false}, &job); err != nil {
		return err
	}
	l.do(func() {
		l.cronAcked[n] = cronRec{id: job.ID, due: due}
		if due.After(l.maxDue) {
			l.maxDue = due
		}
	})
	time.Sleep(time.Duration(500+cw.rng.IntN(1000)) * time.Millisecond)
	return nil
}

// checkConfigFile: config.toml parses, and the prompt it holds is the last acknowledged value or the one in
// flight (a set the daemon may have saved without having answered).
func (h *chaos) checkConfigFile(when string) {
	before := len(h.violations)
	defer func() { h.configBad += len(h.violations) - before }()
	b, err := os.ReadFile(h.in.configPath())
	if err != nil {
		h.violate("config.toml unreadable %s: %v", when, err)
		return
	}
	var doc struct {
		Agents map[string]struct {
			SystemPrompt string `toml:"system_prompt"`
		} `toml:"agents"`
	}
	if err := toml.Unmarshal(b, &doc); err != nil {
		h.violate("config.toml does not parse %s: %v", when, err)
		return
	}
	onDisk := doc.Agents["default"].SystemPrompt
	var msg string
	h.led.do(func() {
		msg = checkConfigValue(onDisk, h.led.configAcked, h.led.configInflight)
		if msg == "" {
			// The daemon restarts from what is on disk: a set cut by this kill that landed is the version the
			// next kill must find (or a later one), though its client never saw the answer.
			h.led.configAcked = onDisk
		}
	})
	if msg != "" {
		h.violate("config.toml %s: %s", when, msg)
	}
}

// checkConfigValue says what is wrong with the value on disk given the last acknowledged value and the one in
// flight; "" when nothing is.
func checkConfigValue(onDisk, acked, inflight string) string {
	if onDisk == acked || (inflight != "" && onDisk == inflight) {
		return ""
	}
	return fmt.Sprintf("%s is %q, but the last acknowledged value is %q (in flight: %q)", promptProp, onDisk, acked, inflight)
}

// message is one stored chat message.
type message struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

// history reads a session's whole transcript, page by page.
func history(c *client, sid string) ([]message, error) {
	var all []message
	before := -1
	for {
		params := map[string]any{"session_id": sid, "limit": 1000}
		if before >= 0 {
			params["before_index"] = before
		}
		var page struct {
			Messages []message `json:"messages"`
			Total    int       `json:"total"`
			Start    int       `json:"start"`
		}
		if err := c.callInto("session/messages", params, &page); err != nil {
			return nil, err
		}
		all = append(page.Messages, all...)
		if page.Start <= 0 || len(page.Messages) == 0 {
			if len(all) != page.Total && before < 0 {
				return nil, fmt.Errorf("session/messages %s: %d of %d messages", sid, len(all), page.Total)
			}
			return all, nil
		}
		before = page.Start
	}
}

// checkTurns: every acknowledged turn's prompt and echoed answer are stored exactly once; an unacknowledged
// one at most once. The prompt is matched exactly, the answer by containing the prompt (the echo model repeats
// the user message as the model saw it, which may carry recalled memories). It returns one line per problem.
func checkTurns(turns map[string]*turnRec, histories map[string][]message) []string {
	var out []string
	for _, text := range sortedKeys((turns)) {
		rec := turns[text]
		counts := map[string]int{}
		for _, m := range histories[rec.session] {
			if (m.Role == "user" && m.Content == text) || (m.Role == "assistant" && strings.Contains(m.Content, text)) {
				counts[m.Role]++
			}
		}
		for _, role := range []string{"user", "assistant"} {
			switch n := counts[role]; {
			case rec.acked && n != 1:
				out = append(out, fmt.Sprintf("acknowledged %s turn %q: %d %s messages, want exactly 1", rec.mode, text, n, role))
			case !rec.acked && n > 1:
				out = append(out, fmt.Sprintf("unacknowledged %s turn %q: %d %s messages, want at most 1", rec.mode, text, n, role))
			}
		}
	}
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	return slices.Sorted(maps.Keys(m))
}

// checkCronLog: each job number appears at most once in the log its jobs append to.
func checkCronLog(log string) []string {
	seen := map[string]int{}
	for _, line := range strings.Split(strings.TrimSpace(log), "\n") {
		if line != "" {
			seen[line]++
		}
	}
	var out []string
	for _, line := range sortedKeys((seen)) {
		if seen[line] > 1 {
			out = append(out, fmt.Sprintf("%s ran %d times for one due time", line, seen[line]))
		}
	}
	return out
}

// tempName matches what an interrupted atomic write leaves: atomicfile's ".<name>.tmp-<16 hex>".
var tempName = regexp.MustCompile(`\.tmp-[0-9a-f]{16}$`)

// tempFiles lists the install's temporary files.
func (h *chaos) tempFiles() []string {
	var out []string
	_ = filepath.WalkDir(h.in.root, func(p string, d fs.DirEntry, err error) error {
		if err == nil && tempName.MatchString(d.Name()) {
			rel, _ := filepath.Rel(h.in.root, p)
			out = append(out, rel)
		}
		return nil
	})
	return out
}

func (h *chaos) summary() {
	l := h.led
	l.mu.Lock()
	defer l.mu.Unlock()
	keys := sortedKeys((l.rpcErrors))
	var parts []string
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s ×%d", k, l.rpcErrors[k]))
	}
	var cut []string
	for _, k := range sortedKeys(l.connErrs) {
		cut = append(cut, fmt.Sprintf("%s ×%d", k, l.connErrs[k]))
	}
	fmt.Fprintf(h.log, "chaos: %d kills; calls cut by a kill, by client kind: %s; JSON-RPC errors: %s\n", h.kills,
		strings.Join(cut, ", "), strings.Join(parts, ", "))
	if h.ch != nil {
		fmt.Fprintf(h.log, "chaos: channel traffic: %s\n", h.ch)
	}
}

package logs

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/zeroclaw-go/zeroclaw/internal/clock/clocktest"
)

var t0 = time.Date(2026, 8, 22, 21, 44, 0, 123e6, time.UTC)

type env struct {
	hub  *Hub
	clk  *clocktest.Manual
	path string
	p    Persistence
	n    int
}

func newEnv(t *testing.T, p Persistence, mod ...func(*Options)) *env {
	t.Helper()
	e := &env{clk: clocktest.New(t0), path: filepath.Join(t.TempDir(), "state", "runtime-trace.jsonl"), p: p}
	o := Options{Path: e.path, Persistence: func() Persistence { return e.p }, Clock: e.clk, Version: "test",
		NewID: func() string { e.n++; return fmt.Sprintf("id-%06d", e.n) }}
	for _, m := range mod {
		m(&o)
	}
	e.hub = NewHub(o)
	t.Cleanup(func() { e.hub.Close() })
	return e
}

func (e *env) publish(n int, msg string) {
	for i := range n {
		e.hub.Publish(Entry{Category: CategorySystem, Action: "note", Message: fmt.Sprintf("%s-%d", msg, i)})
	}
}

func fileLines(t *testing.T, path string) []Event {
	t.Helper()
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []Event
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var ev Event
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			t.Fatalf("line %q: %v", sc.Text(), err)
		}
		out = append(out, ev)
	}
	return out
}

func messages(t *testing.T, raw []json.RawMessage) []string {
	t.Helper()
	var out []string
	for _, r := range raw {
		var ev Event
		if err := json.Unmarshal(r, &ev); err != nil {
			t.Fatal(err)
		}
		out = append(out, ev.Message)
	}
	return out
}

// The line is upstream's schema v2, byte for byte in field order, and the file is private.
func TestEventLineShape(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Persistence{Mode: ModeFull})
	e.hub.Publish(Entry{Severity: SeverityWarn, Category: CategoryTool, Action: "invoke", Outcome: OutcomeFailure,
		Message: "shell failed", Zeroclaw: map[string]any{"agent_alias": "default", "duration_ms": 12}, Attributes: map[string]any{"exit": 2}})
	e.hub.Publish(Entry{Category: CategorySystem, Action: "start"})
	raw, err := os.ReadFile(e.path)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"id":"id-000001","@timestamp":"2026-08-22T21:44:00.123Z","severity_number":13,"severity_text":"WARN","event":{"category":"tool","action":"invoke","outcome":"failure"},"service":{"name":"zeroclaw","version":"test"},"zeroclaw":{"agent_alias":"default","duration_ms":12},"message":"shell failed","attributes":{"exit":2},"schema_version":2}
{"id":"id-000002","@timestamp":"2026-08-22T21:44:00.123Z","severity_number":9,"severity_text":"INFO","event":{"category":"system","action":"start"},"service":{"name":"zeroclaw","version":"test"},"zeroclaw":{},"schema_version":2}
`
	if string(raw) != want {
		t.Fatalf("file\n got %s\nwant %s", raw, want)
	}
	st, _ := os.Stat(e.path)
	if st.Mode().Perm() != 0o600 {
		t.Fatalf("mode %v, want 0600", st.Mode().Perm())
	}
}

// Rolling keeps the newest max entries: the file never holds more than max+slack lines, and what the log shows
// (Query) is exactly the newest max, in order, across a reopen.
func TestRollingCap(t *testing.T) {
	t.Parallel()
	for _, slack := range []int{0, 5} {
		t.Run(fmt.Sprintf("slack=%d", slack), func(t *testing.T) {
			e := newEnv(t, Persistence{Mode: ModeRolling, MaxEntries: 10}, func(o *Options) {
				o.rollSlack = func(int) int { return slack }
			})
			for i := range 37 {
				e.publish(1, fmt.Sprintf("m%02d", i))
				if n := len(fileLines(t, e.path)); n > 10+slack {
					t.Fatalf("after %d events the file holds %d lines, over %d", i+1, n, 10+slack)
				}
			}
			page, err := e.hub.Query(Filter{}, 100)
			if err != nil {
				t.Fatal(err)
			}
			got := messages(t, page.Events)
			if len(got) != 10 || got[0] != "m36-0" || got[9] != "m27-0" || !page.AtEnd {
				t.Fatalf("query shows %v (at_end %v), want m36..m27", got, page.AtEnd)
			}
			// A new hub (a restart) appends to the same file and keeps counting from what is there.
			e.hub.Close()
			e2 := newEnv(t, Persistence{Mode: ModeRolling, MaxEntries: 10})
			e2.path, e2.hub = e.path, NewHub(Options{Path: e.path, Persistence: func() Persistence { return e2.p }, Clock: e2.clk})
			e2.publish(25, "after")
			page, _ = e2.hub.Query(Filter{}, 100)
			if got := messages(t, page.Events); len(got) != 10 || got[0] != "after-24" {
				t.Fatalf("after reopen: %v", got)
			}
			if n := len(fileLines(t, e.path)); n > 20 {
				t.Fatalf("file holds %d lines after reopen", n)
			}
		})
	}
}

func TestFullAndNone(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Persistence{Mode: ModeFull, MaxEntries: 3})
	e.publish(50, "f")
	if n := len(fileLines(t, e.path)); n != 50 {
		t.Fatalf("full kept %d lines, want 50", n)
	}
	n := newEnv(t, Persistence{Mode: ModeNone})
	sub := n.hub.Subscribe(nil, "")
	n.publish(3, "x")
	if _, err := os.Stat(n.path); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("none wrote a file: %v", err)
	}
	d, err := sub.Next(context.Background())
	if err != nil || len(d.Frames) != 3 || d.Frames[0].Seq != 1 {
		t.Fatalf("subscriber under none got %+v, %v", d, err)
	}
	if _, err := n.hub.Query(Filter{}, 10); !errors.Is(err, ErrNotPersisted) {
		t.Fatalf("query under none: %v", err)
	}
}

func TestRotating(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Persistence{Mode: ModeRotating, RotateDaily: true, MaxFiles: 1})
	e.publish(3, "day1")
	e.clk.Advance(24 * time.Hour)
	e.publish(2, "day2")
	e.clk.Advance(24 * time.Hour)
	e.publish(1, "day3")
	if got := rotated(e.path); len(got) != 1 {
		t.Fatalf("rotated files %v, want 1", got)
	}
	if cur := fileLines(t, e.path); len(cur) != 1 || cur[0].Message != "day3-0" {
		t.Fatalf("current file %v", cur)
	}
	old := rotated(e.path)
	if l := fileLines(t, old[0]); len(l) != 2 || l[0].Message != "day2-0" {
		t.Fatalf("oldest kept %s holds %v (day1 should be pruned)", old[0], l)
	}
	// Size: a new file once the current reaches max_bytes.
	s := newEnv(t, Persistence{Mode: ModeRotating, MaxBytes: 600})
	s.publish(10, "sized")
	for _, f := range append(rotated(s.path), s.path) {
		st, _ := os.Stat(f)
		if st.Size() > 600+300 {
			t.Fatalf("%s is %d bytes", f, st.Size())
		}
	}
	if len(rotated(s.path)) < 3 {
		t.Fatalf("size rotation made %d files", len(rotated(s.path)))
	}
}

func TestQueryFiltersAndCursors(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Persistence{Mode: ModeFull})
	for i := range 30 {
		sev, cat, out := SeverityInfo, CategorySession, OutcomeSuccess
		if i%3 == 0 {
			sev, cat, out = SeverityError, CategoryTool, OutcomeFailure
		}
		e.hub.Publish(Entry{Severity: sev, Category: cat, Action: []string{"start", "complete"}[i%2], Outcome: out,
			Message: fmt.Sprintf("ev%02d", i), TraceID: fmt.Sprintf("t%d", i%5),
			Zeroclaw: map[string]any{"agent_alias": []string{"a", "b"}[i%2]}, Attributes: map[string]any{"k": fmt.Sprintf("needle%d", i)}})
		e.clk.Advance(time.Second)
	}
	e.hub.Publish(Entry{Category: "internal", Action: "note", Message: "internal"})
	q := func(f Filter, limit int) Page {
		t.Helper()
		p, err := e.hub.Query(f, limit)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	cases := []struct {
		name string
		f    Filter
		want int
	}{
		{"all", Filter{}, 31},
		{"hide_internal", Filter{HideInternal: true}, 30},
		{"severity_min", Filter{SeverityMin: SeverityWarn}, 10},
		{"category", Filter{Category: "TOOL"}, 10},
		{"action", Filter{Action: "start"}, 15},
		{"outcome", Filter{Outcome: "failure"}, 10},
		{"trace_id", Filter{TraceID: "t2"}, 6},
		{"q in attributes", Filter{Q: "NEEDLE2"}, 11}, // 2, 20..29
		{"q in message", Filter{Q: "ev1"}, 10},
		{"since_ts", Filter{SinceTS: timestamp(t0.Add(25 * time.Second))}, 6},
		{"field", Filter{Field: map[string]string{"agent_alias": "b"}}, 15},
	}
	for _, c := range cases {
		if got := len(q(c.f, 100).Events); got != c.want {
			t.Errorf("%s: %d events, want %d", c.name, got, c.want)
		}
	}
	// Byte cursor: pages of 7 walk every event once, newest first.
	var seen []string
	f := Filter{HideInternal: true}
	for range 10 {
		p := q(f, 7)
		seen = append(seen, messages(t, p.Events)...)
		if p.AtEnd {
			break
		}
		f.UntilLineOffset = p.NextLineOffset
	}
	if len(seen) != 30 || seen[0] != "ev29" || seen[29] != "ev00" {
		t.Fatalf("byte-cursor walk: %v", seen)
	}
	// Legacy cursor [timestamp, id].
	p := q(Filter{HideInternal: true}, 10)
	p2 := q(Filter{HideInternal: true, UntilTS: p.NextCursor[0], UntilID: p.NextCursor[1]}, 10)
	if got := messages(t, p2.Events); got[0] != "ev19" || got[9] != "ev10" {
		t.Fatalf("legacy cursor page: %v", got)
	}
	// Get.
	raw, err := e.hub.Get("id-000005")
	if err != nil || !strings.Contains(string(raw), `"message":"ev04"`) {
		t.Fatalf("get: %s %v", raw, err)
	}
	if _, err := e.hub.Get("nope"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("get unknown: %v", err)
	}
}

// A subscriber that stops reading holds nothing: publishing goes on, the hub keeps only its ring, a reading
// subscriber gets every event, and the sleeper is told exactly which range it lost before it resumes in order.
func TestSlowSubscriber(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Persistence{Mode: ModeNone}, func(o *Options) { o.RingFrames = 64 })
	sleeper := e.hub.Subscribe(nil, "")
	reader := e.hub.Subscribe(nil, "")
	ctx := context.Background()
	var got uint64
	for i := range 10000 {
		e.publish(1, "flow")
		if i%50 == 0 {
			for got < e.hub.seq {
				d, err := reader.Next(ctx)
				if err != nil || d.Lag != nil {
					t.Fatalf("reader: %+v %v", d.Lag, err)
				}
				for _, f := range d.Frames {
					if f.Seq != got+1 {
						t.Fatalf("reader got seq %d after %d", f.Seq, got)
					}
					got = f.Seq
				}
			}
		}
		e.hub.mu.Lock()
		n := len(e.hub.ring)
		e.hub.mu.Unlock()
		if n > 64 {
			t.Fatalf("ring holds %d frames", n)
		}
	}
	d, err := sleeper.Next(ctx)
	if err != nil || d.Lag == nil || d.Lag.FromSeq != 1 || d.Lag.ResumeSeq != 10000-64+1 || d.Lag.EpochChanged {
		t.Fatalf("sleeper: lag %+v err %v", d.Lag, err)
	}
	if d.Frames[0].Seq != d.Lag.ResumeSeq {
		t.Fatalf("sleeper resumed at %d, want %d", d.Frames[0].Seq, d.Lag.ResumeSeq)
	}
	// Cursor resume within the ring is lossless; an old epoch is told.
	last := uint64(9990)
	d, _ = e.hub.Subscribe(&last, e.hub.Epoch()).Next(ctx)
	if d.Lag != nil || d.Frames[0].Seq != 9991 || len(d.Frames) != 10 {
		t.Fatalf("resume in ring: %+v, %d frames", d.Lag, len(d.Frames))
	}
	d, _ = e.hub.Subscribe(&last, "old-epoch").Next(ctx)
	if d.Lag == nil || !d.Lag.EpochChanged || d.Lag.ResumeSeq != d.Frames[0].Seq {
		t.Fatalf("old epoch: %+v", d.Lag)
	}
	// Close ends waiting subscribers.
	done := make(chan error, 1)
	go func() {
		for {
			if _, err := reader.Next(ctx); err != nil {
				done <- err
				return
			}
		}
	}()
	e.hub.Close()
	if err := <-done; !errors.Is(err, ErrClosed) {
		t.Fatalf("after close: %v", err)
	}
}

// Secrets never reach an event: message, attributes (nested, typed), attribution and trace ids are scrubbed.
func TestScrub(t *testing.T) {
	t.Parallel()
	const key = "sk-test-SECRET-abcdef123456"
	e := newEnv(t, Persistence{Mode: ModeFull}, func(o *Options) {
		o.Scrub = func(s string) string { return strings.ReplaceAll(s, key, "[redacted]") }
	})
	sub := e.hub.Subscribe(nil, "")
	type nested struct{ Header string }
	e.hub.Publish(Entry{Category: CategoryProvider, Action: "fail", Message: "401 for key " + key, TraceID: key,
		Zeroclaw: map[string]any{"model": key}, Attributes: map[string]any{"h": nested{Header: "Bearer " + key},
			"list": []string{key}, key: 1}})
	raw, _ := os.ReadFile(e.path)
	if bytes.Contains(raw, []byte("SECRET")) || !bytes.Contains(raw, []byte("[redacted]")) {
		t.Fatalf("file holds the secret: %s", raw)
	}
	d, _ := sub.Next(context.Background())
	if bytes.Contains(d.Frames[0].Line, []byte("SECRET")) {
		t.Fatalf("live frame holds the secret: %s", d.Frames[0].Line)
	}
}

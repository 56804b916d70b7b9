package main

import (
	"bytes"
	"context"
	"encoding/xml"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A short soak against the real binary: every kind of client drives the daemon for 20 s and every criterion the
// run can judge in 20 s holds, with the files -out promises. A 20 s run is all warm-up for RSS (its caches and
// heap are still growing), so this run does not judge the RSS slope (-rss-slope is set out of reach); the 5-minute
// soak in .ci/run and the long one in BENCHMARKS.md do, and TestSoakVerdict covers the criterion's arithmetic.
func TestSoakShort(t *testing.T) {
	out := t.TempDir()
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), []string{"soak", "-bin", testBinary, "-duration", "20s", "-sample", "4s",
		"-reload-every", "8s", "-ops-every", "3s", "-rss-slope", "1e9", "-seed", "7", "-out", out}, &stdout, &stderr)
	text := stdout.String()
	if code != 0 {
		t.Fatalf("soak exit code %d:\n%s\n%s", code, text, stderr.String())
	}
	for _, want := range []string{
		"PASS every acknowledged message present exactly once",
		"PASS every acknowledged upload complete at its path",
		"PASS every acknowledged memory stored",
		"PASS no scheduled job ran twice for one due time",
		"| daemon up |", "| open fds flat |", "| goroutines flat |", "| every WAL bounded |", "| disk under the budget |",
		"| nothing acknowledged lost |", "| no client error | 0 |",
		"| /ws/chat turn |", "| turn with a 1 MB upload |", "| socket turn |", "| gateway HTTP request |",
		"| operator: doctor |", "| operator: backup |", "| operator: logs |", "| operator: config reload |",
		"every criterion holds (8)",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("soak output lacks %q:\n%s", want, text)
		}
	}
	for _, name := range []string{"soak.json", "soak.md", "samples.csv", "rss.svg", "anon.svg", "goheap.svg", "fds.svg", "goroutines.svg",
		"disk.svg", "stores.svg", "wals.svg", "turns.svg"} {
		b, err := os.ReadFile(filepath.Join(out, name))
		if err != nil || len(b) == 0 {
			t.Errorf("-out has no %s: %v", name, err)
		}
	}
	csv, _ := os.ReadFile(filepath.Join(out, "samples.csv"))
	lines := strings.Split(strings.TrimSpace(string(csv)), "\n")
	if len(lines) < 6 || !strings.Contains(lines[0], "sessions/sessions.db-wal") {
		t.Errorf("samples.csv has %d lines (want a header and at least 5 samples, one every 4 s of 20) and header %q", len(lines), lines[0])
	}
}

func TestSlope(t *testing.T) {
	xs := []float64{0, 1, 2, 3, 4}
	m, b, ok := slope(xs, []float64{1, 3, 5, 7, 9})
	if !ok || m != 2 || b != 1 {
		t.Errorf("slope of y = 2x+1: %v %v %v", m, b, ok)
	}
	// Noise symmetric about a flat line has no slope.
	if m, _, _ := slope(xs, []float64{5, 6, 4, 6, 5}); math.Abs(m) > 1e-12 {
		t.Errorf("slope of a flat series with symmetric noise: %v", m)
	}
	if _, _, ok := slope([]float64{1}, []float64{1}); ok {
		t.Error("one point has a slope")
	}
	if _, _, ok := slope([]float64{2, 2}, []float64{1, 5}); ok {
		t.Error("points at one x have a slope")
	}
}

func TestSlopeSE(t *testing.T) {
	xs := []float64{0, 1, 2, 3, 4}
	if se := slopeSE(xs, []float64{1, 3, 5, 7, 9}); se != 0 {
		t.Errorf("points on a line: standard error %v, want 0", se)
	}
	// Residuals +1, -1, 0, -1, +1 around y = 0 (slope 0): SE = sqrt(4/3 / 10).
	se := slopeSE(xs, []float64{1, -1, 0, -1, 1})
	if want := math.Sqrt(4.0 / 3 / 10); math.Abs(se-want) > 1e-12 {
		t.Errorf("standard error %v, want %v", se, want)
	}
	if !math.IsNaN(slopeSE(xs[:2], []float64{1, 2})) {
		t.Error("two points have a standard error")
	}
}

func TestFlat(t *testing.T) {
	xs := []float64{0, 60, 120, 180, 240}
	cases := []struct {
		name string
		ys   []float64
		band float64
		want bool
	}{
		{"steady", []float64{80, 82, 79, 81, 80}, 8, true},
		{"a range wider than the band", []float64{80, 95, 79, 81, 80}, 8, false},
		{"a climb inside the band whose trend is more than half of it", []float64{80, 82, 83, 85, 87}, 8, false},
		{"a climb whose trend is under half the band", []float64{80, 81, 81, 82, 83}, 8, true},
	}
	for _, c := range cases {
		f := flat(xs, c.ys)
		if got := f.within(c.band); got != c.want {
			t.Errorf("%s: within(%g) = %v, want %v (%+v)", c.name, c.band, got, c.want, f)
		}
	}
}

func TestAfterWarmup(t *testing.T) {
	xs := []float64{0, 10, 20, 30, 40, 50, 60, 70, 80, 90, 100}
	if i := afterWarmup(xs, 0.2); i != 2 {
		t.Errorf("20%% of 0..100: index %d, want 2", i)
	}
	if i := afterWarmup(xs, 0); i != 0 {
		t.Errorf("no warm-up: index %d", i)
	}
	if i := afterWarmup(nil, 0.2); i != 0 {
		t.Errorf("no samples: index %d", i)
	}
}

// samplesAt makes one sample a minute for n minutes with rss(i) MB.
func samplesAt(n int, rss func(i int) float64) []soakSample {
	var out []soakSample
	for i := range n {
		out = append(out, soakSample{T: float64(i * 60), RSSKB: int(rss(i) * 1024), FDs: 40 + i%3, Goroutines: 50 - i%2,
			DiskBytes: 10 << 20, WALs: map[string]int64{"sessions/sessions.db": 4 << 20}, Stores: map[string]int64{"sessions/sessions.db": 1 << 20}})
	}
	return out
}

func soakDefaults() soakConfig {
	return soakConfig{warmup: 0.2, rssSlope: 0.1, fdBand: 32, grBand: 64, maxWAL: 64 << 20, maxDisk: 1 << 30}
}

func failedCriteria(cs []criterion) []string {
	var out []string
	for _, c := range cs {
		if !c.OK {
			out = append(out, c.Name)
		}
	}
	return out
}

func TestSoakVerdict(t *testing.T) {
	ok := &soakReport{Activity: map[string]int{"turns acknowledged": 10, "turns sent": 10}, Errors: map[string]int{},
		Samples: samplesAt(60, func(i int) float64 {
			if i < 10 {
				return 20 + float64(i) // the warm-up climbs; the criterion leaves it out
			}
			return 30 + 0.2*float64(i%2) // then a sawtooth with no trend
		})}
	if bad := failedCriteria(verdict(ok, soakDefaults(), true)); len(bad) != 0 {
		t.Errorf("a flat run fails %v: %+v", bad, verdict(ok, soakDefaults(), true))
	}

	// 0.5 MB an hour is a leak the criterion catches, though it is only 0.4 MB across the 48 minutes judged.
	leak := *ok
	leak.Samples = samplesAt(60, func(i int) float64 { return 30 + 0.5*float64(i)/60 })
	cs := verdict(&leak, soakDefaults(), true)
	if bad := failedCriteria(cs); len(bad) != 1 || bad[0] != "RSS slope" {
		t.Errorf("a 0.5 MB/hour climb: failed %v, want [RSS slope]", bad)
	}
	if !strings.Contains(cs[1].Value, "+0.500 MB/hour (standard error 0.000)") {
		t.Errorf("RSS slope value %q, want +0.500 MB/hour", cs[1].Value)
	}

	// A WAL past its bound, disk past the budget, a lost turn, a client error, fds that climb: each named.
	bad := *ok
	bad.Samples = samplesAt(60, func(int) float64 { return 30 })
	for i := range bad.Samples {
		bad.Samples[i].FDs = 40 + i // one fd leaked a minute
	}
	bad.Samples[30].WALs = map[string]int64{"memory/brain.db": 65 << 20}
	bad.Samples[40].DiskBytes = 2 << 30
	bad.Violations = []string{"acknowledged chat turn \"x\": 0 user messages, want exactly 1"}
	bad.Errors = map[string]int{"socket turn: EOF": 1}
	cs = verdict(&bad, soakDefaults(), true)
	want := []string{"open fds flat", "every WAL bounded", "disk under the budget", "nothing acknowledged lost", "no client error"}
	if got := failedCriteria(cs); strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("failed %v, want %v", got, want)
	}
	for _, c := range cs {
		if c.Name == "every WAL bounded" && !strings.Contains(c.Value, "memory/brain.db") {
			t.Errorf("the WAL criterion does not name the WAL: %q", c.Value)
		}
	}

	// A daemon that died, or a run in which nothing was acknowledged, fails.
	down := *ok
	down.Activity = map[string]int{}
	if got := failedCriteria(verdict(&down, soakDefaults(), false)); strings.Join(got, ",") != "daemon up,nothing acknowledged lost" {
		t.Errorf("daemon down, nothing acknowledged: failed %v", got)
	}
}

func TestParseMetric(t *testing.T) {
	text := "# HELP go_goroutines Number of goroutines.\n# TYPE go_goroutines gauge\ngo_goroutines 42\ngo_goroutines_x 9\ngo_memstats_heap_inuse_bytes 9.37984e+06\n"
	if n, err := parseMetric(text, "go_goroutines"); err != nil || n != 42 {
		t.Errorf("go_goroutines: %v %v", n, err)
	}
	if n, err := parseMetric(text, "go_memstats_heap_inuse_bytes"); err != nil || n != 9379840 {
		t.Errorf("go_memstats_heap_inuse_bytes: %v %v", n, err)
	}
	if _, err := parseMetric("go_threads 7\n", "go_goroutines"); err == nil {
		t.Error("no go_goroutines sample: no error")
	}
	if _, err := parseMetric("go_goroutines many\n", "go_goroutines"); err == nil {
		t.Error("a bad value: no error")
	}
}

// The SVG is well-formed XML, escapes its text, draws one polyline per line and leaves NaN points out.
func TestWriteSVG(t *testing.T) {
	bound := 5.0
	p := plot{Title: `RSS <script>&"`, Unit: "MB", Xs: []float64{0, 60, 120, 180}, Warmup: 60, Bound: &bound,
		Lines: []line{{Name: "a<b", Ys: []float64{1, 2, math.NaN(), 4}}, {Name: "c", Ys: []float64{3, 3, 3, 3}}}}
	var b bytes.Buffer
	if err := writeSVG(&b, p); err != nil {
		t.Fatal(err)
	}
	s := b.String()
	if strings.Contains(s, "<script>") || strings.Contains(s, "NaN") {
		t.Errorf("unescaped title or a NaN coordinate:\n%s", s)
	}
	dec := xml.NewDecoder(strings.NewReader(s))
	polylines, texts := 0, []string{}
	var pts []string
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("not well-formed XML: %v\n%s", err, s)
		}
		switch e := tok.(type) {
		case xml.StartElement:
			if e.Name.Local == "polyline" {
				polylines++
				for _, a := range e.Attr {
					if a.Name.Local == "points" {
						pts = append(pts, a.Value)
					}
				}
			}
		case xml.CharData:
			texts = append(texts, string(e))
		}
	}
	if polylines != 2 {
		t.Errorf("%d polylines, want 2", polylines)
	}
	if len(pts) > 0 && len(strings.Fields(pts[0])) != 3 {
		t.Errorf("the first line has points %q, want 3 (its NaN left out)", pts[0])
	}
	all := strings.Join(texts, "|")
	for _, want := range []string{`RSS <script>&"`, "a<b", "warm-up", "bound 5", "minutes"} {
		if !strings.Contains(all, want) {
			t.Errorf("the SVG's text lacks %q: %q", want, all)
		}
	}
	// An empty plot is still a document.
	b.Reset()
	if err := writeSVG(&b, plot{Title: "empty"}); err != nil || !strings.HasSuffix(b.String(), "</svg>\n") {
		t.Errorf("empty plot: %v %q", err, b.String())
	}
}

func TestSamplesCSV(t *testing.T) {
	s := samplesCSV([]soakSample{
		{T: 0, RSSKB: 100, Stores: map[string]int64{"a.db": 1}, WALs: map[string]int64{}},
		{T: 10, RSSKB: 110, Stores: map[string]int64{"a.db": 2, "b.db": 3}, WALs: map[string]int64{"b.db": 4}},
	})
	want := "t_s,rss_kb,anon_kb,go_heap_kb,fds,goroutines,disk_bytes,turns_acked,a.db,a.db-wal,b.db,b.db-wal\n" +
		"0.0,100,0,0,0,0,0,0,1,,,\n" +
		"10.0,110,0,0,0,0,0,0,2,,3,4\n"
	if s != want {
		t.Errorf("samplesCSV:\n%s\nwant:\n%s", s, want)
	}
}

package gateway

import (
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
)

// The Prometheus text exposition format 0.0.4, written by hand: the handful of counters, gauges and one
// histogram GET /metrics serves need no client library, and client_golang brought protobuf (~660 KB of code,
// ~2 MB of idle RSS) for a wire format Prometheus no longer asks for first.

// family is one metric family of a scrape: its samples are written under one HELP and TYPE line.
type family struct {
	name, help, typ string
	samples         []sample
}

// sample is one line: name+suffix{labels} value. labels alternate name, value.
type sample struct {
	suffix string
	labels []string
	value  float64
}

func (f *family) add(v float64, labels ...string) {
	f.samples = append(f.samples, sample{labels: labels, value: v})
}

// appendExposition writes fams sorted by name, each family's samples in the order given.
func appendExposition(b []byte, fams []family) []byte {
	// sort.Slice, not slices.SortFunc: a generic sort of this struct shape is its own 15 KB of code.
	sort.Slice(fams, func(i, j int) bool { return fams[i].name < fams[j].name })
	for _, f := range fams {
		if len(f.samples) == 0 {
			continue // as client_golang: a family with no series is not written
		}
		b = append(b, "# HELP "...)
		b = append(b, f.name...)
		b = append(b, ' ')
		b = appendEscaped(b, f.help, false)
		b = append(b, "\n# TYPE "...)
		b = append(b, f.name...)
		b = append(b, ' ')
		b = append(b, f.typ...)
		b = append(b, '\n')
		for _, s := range f.samples {
			b = append(b, f.name...)
			b = append(b, s.suffix...)
			if len(s.labels) > 0 {
				b = append(b, '{')
				for i := 0; i+1 < len(s.labels); i += 2 {
					if i > 0 {
						b = append(b, ',')
					}
					b = append(b, s.labels[i]...)
					b = append(b, `="`...)
					b = appendEscaped(b, s.labels[i+1], true)
					b = append(b, '"')
				}
				b = append(b, '}')
			}
			b = append(b, ' ')
			b = appendFloat(b, s.value)
			b = append(b, '\n')
		}
	}
	return b
}

// appendEscaped escapes a HELP text (\ and newline) or a label value (also ").
func appendEscaped(b []byte, s string, quote bool) []byte {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '\\':
			b = append(b, `\\`...)
		case c == '\n':
			b = append(b, `\n`...)
		case c == '"' && quote:
			b = append(b, `\"`...)
		default:
			b = append(b, c)
		}
	}
	return b
}

func appendFloat(b []byte, v float64) []byte {
	switch {
	case math.IsInf(v, 1):
		return append(b, "+Inf"...)
	case math.IsInf(v, -1):
		return append(b, "-Inf"...)
	case math.IsNaN(v):
		return append(b, "NaN"...)
	}
	return strconv.AppendFloat(b, v, 'g', -1, 64)
}

// value is a float64 updated atomically: a counter or a gauge.
type value struct{ bits atomic.Uint64 }

func (v *value) add(d float64) {
	for {
		old := v.bits.Load()
		if v.bits.CompareAndSwap(old, math.Float64bits(math.Float64frombits(old)+d)) {
			return
		}
	}
}

func (v *value) get() float64 { return math.Float64frombits(v.bits.Load()) }

// vec is a counter per combination of label values. The label values callers pass are bounded (route patterns,
// methods the mux routes, status codes, fixed outcomes), so the map is too.
type vec struct {
	labels []string
	mu     sync.Mutex // guards m
	m      map[string]*vecEntry
}

type vecEntry struct {
	values []string
	v      value
}

func newVec(labels ...string) *vec { return &vec{labels: labels, m: map[string]*vecEntry{}} }

func (c *vec) with(values ...string) *value {
	key := strings.Join(values, "\xff")
	c.mu.Lock()
	e := c.m[key]
	if e == nil {
		e = &vecEntry{values: slices.Clone(values)}
		c.m[key] = e
	}
	c.mu.Unlock()
	return &e.v
}

// entries are the series sorted by label values (client_golang's order).
func (c *vec) entries() []*vecEntry {
	c.mu.Lock()
	out := make([]*vecEntry, 0, len(c.m))
	for _, e := range c.m {
		out = append(out, e)
	}
	c.mu.Unlock()
	slices.SortFunc(out, func(a, b *vecEntry) int { return slices.Compare(a.values, b.values) })
	return out
}

func (c *vec) labelPairs(values []string) []string {
	l := make([]string, 0, 2*len(values))
	for i, v := range values {
		l = append(l, c.labels[i], v)
	}
	return l
}

func (c *vec) family(name, help, typ string) family {
	f := family{name: name, help: help, typ: typ}
	for _, e := range c.entries() {
		f.add(e.v.get(), c.labelPairs(e.values)...)
	}
	return f
}

// histogramVec is a histogram per value of one label.
type histogramVec struct {
	label   string
	buckets []float64
	mu      sync.Mutex // guards m and every histogram's fields
	m       map[string]*histogram
}

type histogram struct {
	counts []uint64 // per bucket, not cumulative; one more for +Inf
	sum    float64
	count  uint64
}

func newHistogramVec(label string, buckets ...float64) *histogramVec {
	return &histogramVec{label: label, buckets: buckets, m: map[string]*histogram{}}
}

func (h *histogramVec) observe(labelValue string, v float64) {
	h.mu.Lock()
	defer h.mu.Unlock()
	s := h.m[labelValue]
	if s == nil {
		s = &histogram{counts: make([]uint64, len(h.buckets)+1)}
		h.m[labelValue] = s
	}
	i, _ := slices.BinarySearch(h.buckets, v) // the first bucket whose upper bound is >= v
	s.counts[i]++
	s.sum += v
	s.count++
}

func (h *histogramVec) family(name, help string) family {
	f := family{name: name, help: help, typ: "histogram"}
	h.mu.Lock()
	defer h.mu.Unlock()
	keys := make([]string, 0, len(h.m))
	for k := range h.m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		s := h.m[k]
		var cum uint64
		for i, n := range s.counts {
			cum += n
			le := "+Inf"
			if i < len(h.buckets) {
				le = string(appendFloat(nil, h.buckets[i]))
			}
			f.samples = append(f.samples, sample{suffix: "_bucket", labels: []string{h.label, k, "le", le}, value: float64(cum)})
		}
		f.samples = append(f.samples, sample{suffix: "_sum", labels: []string{h.label, k}, value: s.sum},
			sample{suffix: "_count", labels: []string{h.label, k}, value: float64(s.count)})
	}
	return f
}

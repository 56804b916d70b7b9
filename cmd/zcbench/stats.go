package main

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"time"
)

// percentile returns the p-th percentile (0..100) of xs by nearest rank; NaN for no samples.
func percentile(xs []float64, p float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	i := int(math.Ceil(p/100*float64(len(s)))) - 1
	return s[max(0, min(i, len(s)-1))]
}

func median(xs []float64) float64 { return percentile(xs, 50) }

// durations converts durations to float64 in unit (e.g. time.Microsecond).
func durations(ds []time.Duration, unit time.Duration) []float64 {
	out := make([]float64, len(ds))
	for i, d := range ds {
		out[i] = float64(d) / float64(unit)
	}
	return out
}

// target is what the issue asks of a metric, checked on the median over runs.
type target struct {
	Text  string `json:"text"`
	kind  string // "max" or "min" on the value, "maxratio" or "minratio" on the ratio, "" for none
	limit float64
}

func maxValue(limit float64, text string) target {
	return target{Text: text, kind: "max", limit: limit}
}
func minValue(limit float64, text string) target {
	return target{Text: text, kind: "min", limit: limit}
}
func maxRatio(limit float64) target {
	return target{Text: fmt.Sprintf("≤ %gx floor", limit), kind: "maxratio", limit: limit}
}
func minRatio(limit float64) target {
	return target{Text: fmt.Sprintf("≥ %gx floor", limit), kind: "minratio", limit: limit}
}
func exactly(limit float64, text string) target { return target{Text: text, kind: "eq", limit: limit} }
func noTarget() target                          { return target{Text: "—"} }

// check reports whether the median value (or ratio) meets the target; nil when there is none.
func (t target) check(value, ratio float64) *bool {
	var ok bool
	switch t.kind {
	case "max":
		ok = value <= t.limit
	case "min":
		ok = value >= t.limit
	case "eq":
		ok = value == t.limit
	case "maxratio":
		ok = ratio <= t.limit
	case "minratio":
		ok = ratio >= t.limit
	default:
		return nil
	}
	return &ok
}

// metric is one row of the table: a value per run, optionally a floor per run measured beside it.
type metric struct {
	Section string    `json:"section"`
	Name    string    `json:"name"`
	Unit    string    `json:"unit"`
	Values  []float64 `json:"values"`
	Floor   []float64 `json:"floor,omitempty"`
	Ratios  []float64 `json:"ratios,omitempty"` // value/floor per run
	Target  target    `json:"target"`
	NA      string    `json:"na,omitempty"` // why the row was not measured
	Note    string    `json:"note,omitempty"`

	// Filled by summarize.
	Median      float64 `json:"median"`
	Min         float64 `json:"min"`
	Max         float64 `json:"max"`
	FloorMedian float64 `json:"floor_median,omitempty"`
	RatioMedian float64 `json:"ratio_median,omitempty"`
	Pass        *bool   `json:"pass,omitempty"`
}

// results collects metrics in the order they were first recorded.
type results struct {
	order []string
	byKey map[string]*metric
}

func newResults() *results { return &results{byKey: map[string]*metric{}} }

func (r *results) get(section, name, unit string, t target) *metric {
	key := section + "\x00" + name
	m, ok := r.byKey[key]
	if !ok {
		m = &metric{Section: section, Name: name, Unit: unit, Target: t}
		r.byKey[key] = m
		r.order = append(r.order, key)
	}
	return m
}

// add records one run's value.
func (r *results) add(section, name, unit string, t target, v float64) {
	m := r.get(section, name, unit, t)
	m.Values = append(m.Values, v)
}

// addFloor records one run's value beside the floor measured in the same run.
func (r *results) addFloor(section, name, unit string, t target, v, floor float64) {
	m := r.get(section, name, unit, t)
	m.Values = append(m.Values, v)
	m.Floor = append(m.Floor, floor)
	m.Ratios = append(m.Ratios, v/floor)
}

// na marks a row as not measurable on this daemon.
func (r *results) na(section, name, unit string, t target, why string) {
	m := r.get(section, name, unit, t)
	m.NA = why
}

func (r *results) note(section, name, note string) {
	if m, ok := r.byKey[section+"\x00"+name]; ok && note != "" && !strings.Contains(m.Note, note) {
		if m.Note != "" {
			m.Note += "; "
		}
		m.Note += note
	}
}

func (r *results) metrics() []*metric {
	out := make([]*metric, 0, len(r.order))
	for _, k := range r.order {
		out = append(out, r.byKey[k])
	}
	return out
}

func (r *results) summarize() {
	for _, m := range r.metrics() {
		if m.NA != "" || len(m.Values) == 0 {
			continue
		}
		m.Median, m.Min, m.Max = median(m.Values), slices.Min(m.Values), slices.Max(m.Values)
		if len(m.Floor) > 0 {
			m.FloorMedian, m.RatioMedian = median(m.Floor), median(m.Ratios)
		}
		m.Pass = m.Target.check(m.Median, m.RatioMedian)
	}
}

// failed counts rows whose target was missed.
func (r *results) failed() int {
	n := 0
	for _, m := range r.metrics() {
		if m.Pass != nil && !*m.Pass {
			n++
		}
	}
	return n
}

// num formats a value with about three significant digits.
func num(v float64) string {
	if math.IsNaN(v) {
		return "—"
	}
	a := math.Abs(v)
	switch {
	case a >= 1000:
		return fmt.Sprintf("%.0f", v)
	case a >= 100:
		return fmt.Sprintf("%.1f", v)
	case a >= 10:
		return fmt.Sprintf("%.2f", v)
	default:
		return fmt.Sprintf("%.3f", v)
	}
}

// writeTable prints the Markdown table.
func (r *results) writeTable(w io.Writer, runs int) {
	fmt.Fprintf(w, "| section | metric | daemon: median (min–max over %d runs) | floor (median) | ratio | target | result |\n", runs)
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|")
	for _, m := range r.metrics() {
		name := m.Name
		if m.Note != "" {
			name += " (" + m.Note + ")"
		}
		if m.NA != "" {
			fmt.Fprintf(w, "| %s | %s | n/a | | | %s | n/a (%s) |\n", m.Section, name, m.Target.Text, m.NA)
			continue
		}
		if len(m.Values) == 0 {
			continue
		}
		val := fmt.Sprintf("%s %s", num(m.Median), m.Unit)
		if len(m.Values) > 1 {
			val += fmt.Sprintf(" (%s–%s)", num(m.Min), num(m.Max))
		}
		floor, ratio := "", ""
		if len(m.Floor) > 0 {
			floor = fmt.Sprintf("%s %s", num(m.FloorMedian), m.Unit)
			ratio = fmt.Sprintf("%.2fx", m.RatioMedian)
		}
		res := "—"
		if m.Pass != nil {
			res = "pass"
			if !*m.Pass {
				res = "**FAIL**"
			}
		}
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s | %s |\n", m.Section, name, val, floor, ratio, m.Target.Text, res)
	}
}

// report is the JSON document zcbench writes.
type report struct {
	Command string    `json:"command"`
	Started time.Time `json:"started"`
	Runs    int       `json:"runs"`
	Machine machine   `json:"machine"`
	Binary  string    `json:"binary"`
	Metrics []*metric `json:"metrics"`
	Failed  int       `json:"failed"`
}

func writeJSON(w io.Writer, rep report) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(rep)
}

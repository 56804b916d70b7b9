package main

import (
	"fmt"
	"html"
	"io"
	"math"
	"strings"
)

// The soak verdict's arithmetic and its plots: a least-squares slope, a precise notion of a flat series, and a
// small SVG line-chart writer (no dependency).

// slope is the least-squares slope of ys over xs (units of y per unit of x), and the intercept. Fewer than two
// points, or all xs equal, have no slope: ok is false.
func slope(xs, ys []float64) (m, b float64, ok bool) {
	n := len(xs)
	if n < 2 || n != len(ys) {
		return 0, 0, false
	}
	var sx, sy float64
	for i := range xs {
		sx += xs[i]
		sy += ys[i]
	}
	mx, my := sx/float64(n), sy/float64(n)
	var sxx, sxy float64
	for i := range xs {
		dx := xs[i] - mx
		sxx += dx * dx
		sxy += dx * (ys[i] - my)
	}
	if sxx == 0 {
		return 0, 0, false
	}
	m = sxy / sxx
	return m, my - m*mx, true
}

// slopeSE is the standard error of the least-squares slope of ys over xs (the residuals' spread over the spread
// of xs): how far the slope could be from the true trend given the noise around the fitted line. NaN with fewer
// than three points.
func slopeSE(xs, ys []float64) float64 {
	n := len(xs)
	m, b, ok := slope(xs, ys)
	if !ok || n < 3 {
		return math.NaN()
	}
	var mx, ss, sxx float64
	for _, x := range xs {
		mx += x
	}
	mx /= float64(n)
	for i := range xs {
		r := ys[i] - (m*xs[i] + b)
		ss += r * r
		sxx += (xs[i] - mx) * (xs[i] - mx)
	}
	return math.Sqrt(ss / float64(n-2) / sxx)
}

// flatness is how a series behaved over a window.
type flatness struct {
	Min, Max float64
	Slope    float64 // least squares, per second
	Trend    float64 // |Slope| × the window's length: how far the fitted line moves across the window
	Span     float64 // the window's length in seconds
}

// flat describes ys over xs (seconds). A series is flat within band when both hold:
//   - its range, max − min, is at most band (it never strays further than the band from where it was), and
//   - its least-squares trend across the window, |slope| × (last x − first x), is at most band/2 (a steady
//     climb or fall is not hidden inside a wide range).
func flat(xs, ys []float64) flatness {
	f := flatness{Min: math.Inf(1), Max: math.Inf(-1)}
	for _, y := range ys {
		f.Min, f.Max = math.Min(f.Min, y), math.Max(f.Max, y)
	}
	if len(xs) > 0 {
		f.Span = xs[len(xs)-1] - xs[0]
	}
	if m, _, ok := slope(xs, ys); ok {
		f.Slope = m
		f.Trend = math.Abs(m) * f.Span
	}
	return f
}

func (f flatness) within(band float64) bool {
	return f.Max-f.Min <= band && f.Trend <= band/2
}

// afterWarmup returns the index of the first sample at or after the warm-up's end: the first frac of the run.
func afterWarmup(xs []float64, frac float64) int {
	if len(xs) == 0 {
		return 0
	}
	cut := xs[0] + frac*(xs[len(xs)-1]-xs[0])
	for i, x := range xs {
		if x >= cut {
			return i
		}
	}
	return len(xs)
}

// line is one series of a plot.
type line struct {
	Name string
	Ys   []float64
}

// plot is one SVG chart: x in seconds (shown in minutes), one or more lines, an optional warm-up mark and an
// optional horizontal bound.
type plot struct {
	Title  string
	Unit   string
	Xs     []float64
	Lines  []line
	Warmup float64  // x where the warm-up ends; 0 for none
	Bound  *float64 // a horizontal line at this y (the criterion's bound), nil for none
}

var plotColors = []string{"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#17becf", "#bcbd22"}

// writeSVG draws p as a self-contained SVG document. Every text it writes is escaped; NaN and infinite values
// are left out of their line.
func writeSVG(w io.Writer, p plot) error {
	const width, height = 640.0, 320.0
	const left, right, top, bottom = 70.0, 20.0, 30.0, 45.0
	pw, ph := width-left-right, height-top-bottom
	xmin, xmax := math.Inf(1), math.Inf(-1)
	for _, x := range p.Xs {
		xmin, xmax = math.Min(xmin, x), math.Max(xmax, x)
	}
	ymin, ymax := math.Inf(1), math.Inf(-1)
	for _, l := range p.Lines {
		for _, y := range l.Ys {
			if !math.IsNaN(y) && !math.IsInf(y, 0) {
				ymin, ymax = math.Min(ymin, y), math.Max(ymax, y)
			}
		}
	}
	if p.Bound != nil {
		ymin, ymax = math.Min(ymin, *p.Bound), math.Max(ymax, *p.Bound)
	}
	if math.IsInf(xmin, 0) {
		xmin, xmax = 0, 1
	}
	if math.IsInf(ymin, 0) {
		ymin, ymax = 0, 1
	}
	if xmax == xmin {
		xmax = xmin + 1
	}
	// The y axis starts at 0 for values that are all positive, so that a small wiggle does not look like a climb.
	if ymin > 0 {
		ymin = 0
	}
	if ymax == ymin {
		ymax = ymin + 1
	}
	ymax += (ymax - ymin) * 0.05
	sx := func(x float64) float64 { return left + (x-xmin)/(xmax-xmin)*pw }
	sy := func(y float64) float64 { return top + ph - (y-ymin)/(ymax-ymin)*ph }

	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%g" height="%g" viewBox="0 0 %g %g" font-family="sans-serif" font-size="11">`+"\n",
		width, height, width, height)
	fmt.Fprintf(&b, `<rect width="%g" height="%g" fill="white"/>`+"\n", width, height)
	fmt.Fprintf(&b, `<text x="%g" y="18" font-size="13">%s</text>`+"\n", left, html.EscapeString(p.Title))
	fmt.Fprintf(&b, `<rect x="%g" y="%g" width="%g" height="%g" fill="none" stroke="#999"/>`+"\n", left, top, pw, ph)
	for i := 0; i <= 4; i++ {
		y := ymin + (ymax-ymin)*float64(i)/4
		fmt.Fprintf(&b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#eee"/>`+"\n", left, sy(y), left+pw, sy(y))
		fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" text-anchor="end">%s</text>`+"\n", left-4, sy(y)+4, html.EscapeString(tick(y)))
		x := xmin + (xmax-xmin)*float64(i)/4
		fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" text-anchor="middle">%s</text>`+"\n", sx(x), top+ph+15, tick(x/60))
	}
	fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" text-anchor="middle">minutes</text>`+"\n", left+pw/2, height-8)
	fmt.Fprintf(&b, `<text x="12" y="%.1f" transform="rotate(-90 12 %.1f)" text-anchor="middle">%s</text>`+"\n",
		top+ph/2, top+ph/2, html.EscapeString(p.Unit))
	if p.Warmup > xmin && p.Warmup <= xmax {
		fmt.Fprintf(&b, `<line x1="%.1f" y1="%g" x2="%.1f" y2="%g" stroke="#aaa" stroke-dasharray="4 3"/>`+"\n", sx(p.Warmup), top, sx(p.Warmup), top+ph)
		fmt.Fprintf(&b, `<text x="%.1f" y="%g" fill="#888">warm-up</text>`+"\n", sx(p.Warmup)+3, top+12)
	}
	if p.Bound != nil {
		fmt.Fprintf(&b, `<line x1="%g" y1="%.1f" x2="%g" y2="%.1f" stroke="#d62728" stroke-dasharray="6 3"/>`+"\n", left, sy(*p.Bound), left+pw, sy(*p.Bound))
		fmt.Fprintf(&b, `<text x="%g" y="%.1f" fill="#d62728" text-anchor="end">bound %s</text>`+"\n", left+pw-3, sy(*p.Bound)-3, html.EscapeString(tick(*p.Bound)))
	}
	for i, l := range p.Lines {
		color := plotColors[i%len(plotColors)]
		var pts []string
		for j, y := range l.Ys {
			if j >= len(p.Xs) || math.IsNaN(y) || math.IsInf(y, 0) {
				continue
			}
			pts = append(pts, fmt.Sprintf("%.1f,%.1f", sx(p.Xs[j]), sy(y)))
		}
		if len(pts) > 0 {
			fmt.Fprintf(&b, `<polyline fill="none" stroke="%s" stroke-width="1.5" points="%s"/>`+"\n", color, strings.Join(pts, " "))
		}
		if len(p.Lines) > 1 {
			ly := top + 14 + float64(i)*13
			fmt.Fprintf(&b, `<rect x="%g" y="%.1f" width="10" height="3" fill="%s"/><text x="%g" y="%.1f">%s</text>`+"\n",
				left+8, ly-4, color, left+22, ly, html.EscapeString(l.Name))
		}
	}
	b.WriteString("</svg>\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// tick formats an axis value with no more digits than it needs.
func tick(v float64) string {
	switch a := math.Abs(v); {
	case a >= 100 || v == math.Trunc(v):
		return fmt.Sprintf("%.0f", v)
	case a >= 10:
		return fmt.Sprintf("%.1f", v)
	default:
		return fmt.Sprintf("%.2f", v)
	}
}

package cli

import (
	"fmt"
	"io"
	"os"
	"strings"
)

// progressBar draws one line on a terminal, redrawn in place as a long operation advances. On anything that is
// not a terminal (a pipe, a file, a test's buffer) it draws nothing, so logs and scripts see only the result.
type progressBar struct {
	w     io.Writer // nil when not a terminal
	phase string
	pct   int
	drawn bool
}

func newProgressBar(w io.Writer) *progressBar {
	f, ok := w.(*os.File)
	if !ok {
		return &progressBar{}
	}
	fi, err := f.Stat()
	if err != nil || fi.Mode()&os.ModeCharDevice == 0 {
		return &progressBar{}
	}
	return &progressBar{w: w, pct: -1}
}

const barWidth = 30

// update redraws the bar when the phase or the whole percentage changes.
func (p *progressBar) update(phase string, done, total int64) {
	if p.w == nil {
		return
	}
	pct := 100
	if total > 0 {
		pct = int(min(done*100/total, 100))
	}
	if phase == p.phase && pct == p.pct {
		return
	}
	p.phase, p.pct, p.drawn = phase, pct, true
	fill := pct * barWidth / 100
	fmt.Fprintf(p.w, "\r%-9s [%s%s] %3d%% %s / %s ", phase, strings.Repeat("#", fill), strings.Repeat(".", barWidth-fill), pct,
		humanBytes(min(done, total)), humanBytes(total))
}

// finish ends the bar's line.
func (p *progressBar) finish() {
	if p.drawn {
		fmt.Fprintln(p.w)
		p.drawn = false
	}
}

func humanBytes(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}

package cli

import (
	"bytes"
	"strings"
	"testing"
)

// On a terminal the bar is redrawn in place only when the phase or the percentage changes; elsewhere nothing is
// drawn at all.
func TestProgressBar(t *testing.T) {
	var buf bytes.Buffer
	if p := newProgressBar(&buf); p.w != nil {
		t.Fatal("a buffer taken for a terminal")
	}
	p := &progressBar{w: &buf, pct: -1}
	p.update("snapshot", 0, 2048)
	p.update("snapshot", 10, 2048) // still 0%
	p.update("snapshot", 1024, 2048)
	p.update("archive", 2048, 2048)
	p.finish()
	got := buf.String()
	if strings.Count(got, "\r") != 3 || !strings.HasSuffix(got, "\n") {
		t.Fatalf("redraws: %q", got)
	}
	if !strings.Contains(got, "snapshot  [###############...............]  50% 1.0 KiB / 2.0 KiB") ||
		!strings.Contains(got, "archive   [##############################] 100% 2.0 KiB / 2.0 KiB") {
		t.Fatalf("bar: %q", got)
	}
}

package chat

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"
	"time"
)

func TestLineReader(t *testing.T) {
	l := newLineReader(strings.NewReader("one\r\ntwo\nlast"))
	defer l.close()
	for _, want := range []string{"one", "two", "last"} {
		got, err := l.readLine(t.Context())
		if err != nil || got != want {
			t.Fatalf("got %q %v, want %q", got, err, want)
		}
	}
	for range 2 { // EOF is sticky
		if _, err := l.readLine(t.Context()); !errors.Is(err, io.EOF) {
			t.Fatalf("after the last line: %v, want EOF", err)
		}
	}
	// A reader whose ctx ends stops waiting, and the line is kept for the next reader.
	pr, pw := io.Pipe()
	l2 := newLineReader(pr)
	defer l2.close()
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := l2.readLine(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled read: %v", err)
	}
	go func() {
		_, _ = pw.Write([]byte("kept\n"))
		pw.Close()
	}()
	rctx, rcancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer rcancel()
	if got, err := l2.readLine(rctx); err != nil || got != "kept" {
		t.Fatalf("got %q %v", got, err)
	}
}

func TestClipAndChoices(t *testing.T) {
	long := strings.Repeat("é", 300)
	c := clip(long)
	if len(c) > maxShown+len("…") || !strings.HasSuffix(c, "…") || !strings.HasPrefix(c, "éé") {
		t.Errorf("clip: %d bytes %q", len(c), c)
	}
	for _, r := range strings.TrimSuffix(c, "…") {
		if r != 'é' {
			t.Fatalf("clip split a rune: %q", c)
		}
	}
	if got := clip("a\n  b\tc"); got != "a b c" {
		t.Errorf("clip one line: %q", got)
	}
	schema := map[string]any{"properties": map[string]any{"answer": map[string]any{"enum": []any{"x", 2.0}}}}
	if got := parseElicitForm(schema).titles; len(got) != 2 || got[0] != "x" || got[1] != "2" {
		t.Errorf("choices %v", got)
	}
	if got := parseElicitForm(nil); got.titles != nil || got.property != "answer" {
		t.Errorf("no schema: %+v", got)
	}
}

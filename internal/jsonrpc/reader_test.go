package jsonrpc

import (
	"bytes"
	"errors"
	"io"
	"runtime"
	"strings"
	"testing"
)

func readAll(t *testing.T, r *Reader) ([]string, error) {
	t.Helper()
	var frames []string
	for {
		f, err := r.ReadFrame()
		if err != nil {
			return frames, err
		}
		frames = append(frames, string(f))
	}
}

func TestReaderTrimsAndSkipsBlankLines(t *testing.T) {
	in := "\r\n  {\"a\":1}\r\n\n \t \r\n{\"b\":\"x y\"}  \n\t{\"c\":3}" // last line has no newline
	r := NewReader(strings.NewReader(in), 64)
	frames, err := readAll(t, r)
	if !errors.Is(err, io.EOF) {
		t.Fatalf("err = %v, want EOF", err)
	}
	want := []string{`{"a":1}`, `{"b":"x y"}`, `{"c":3}`}
	if strings.Join(frames, "|") != strings.Join(want, "|") {
		t.Errorf("frames = %q, want %q", frames, want)
	}
	if _, err := r.ReadFrame(); !errors.Is(err, io.EOF) {
		t.Errorf("error not sticky: %v", err)
	}
}

func TestReaderReplacesInvalidUTF8(t *testing.T) {
	r := NewReader(strings.NewReader("{\"m\":\"a\xffb\xc3\"}\n"), 64)
	f, err := r.ReadFrame()
	if err != nil {
		t.Fatal(err)
	}
	if want := "{\"m\":\"a\uFFFDb\uFFFD\"}"; string(f) != want {
		t.Errorf("frame = %q, want %q", f, want)
	}
	// The replaced frame still parses as a request.
	in := Classify([]byte("{\"jsonrpc\":\"2.0\",\"method\":\"a\xffb\"}"))
	if in.Request == nil || in.Request.Method != "a\uFFFDb" {
		t.Errorf("Classify = %+v", in)
	}
}

func TestReaderLimitBoundary(t *testing.T) {
	const max = 16
	exact := strings.Repeat("x", max)
	r := NewReader(strings.NewReader(exact+"\r\n"+exact+" \n"+exact+"x\n"), max)
	for i := 0; i < 2; i++ {
		f, err := r.ReadFrame()
		if err != nil || string(f) != exact {
			t.Fatalf("frame %d = %q, %v; want the %d-byte frame", i, f, err, max)
		}
	}
	if _, err := r.ReadFrame(); !errors.Is(err, ErrFrameTooLarge) {
		t.Fatalf("max+1 bytes: err = %v, want ErrFrameTooLarge", err)
	}
	if _, err := r.ReadFrame(); !errors.Is(err, ErrFrameTooLarge) {
		t.Errorf("error not sticky: %v", err)
	}
}

func TestReaderUTF8ReplacementCountsTowardsLimit(t *testing.T) {
	// 10 invalid bytes separated by ASCII become 10 three-byte replacement characters.
	line := strings.Repeat("\xffa", 10)
	r := NewReader(strings.NewReader(line+"\n"), 25)
	if f, err := r.ReadFrame(); !errors.Is(err, ErrFrameTooLarge) {
		t.Fatalf("got %q, %v; want ErrFrameTooLarge", f, err)
	}
}

// countingReader serves an endless line of 'x' and counts what was consumed.
type countingReader struct{ n int64 }

func (c *countingReader) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = 'x'
	}
	c.n += int64(len(p))
	return len(p), nil
}

func TestReaderDoesNotReadOversizedLine(t *testing.T) {
	const max = 1 << 20
	src := &countingReader{}
	r := NewReader(src, max)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	_, err := r.ReadFrame()
	runtime.ReadMemStats(&after)
	if !errors.Is(err, ErrFrameTooLarge) {
		t.Fatalf("err = %v, want ErrFrameTooLarge", err)
	}
	// The line is endless: the reader must have stopped shortly after the limit.
	if src.n > max+2*maxReadBuffer {
		t.Errorf("consumed %d bytes of an endless line, limit %d", src.n, max)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 3*max {
		t.Errorf("allocated %d bytes for a %d-byte limit", alloc, max)
	}
}

func TestReaderOnFrameStart(t *testing.T) {
	var calls int
	pr, pw := io.Pipe()
	r := NewReader(pr, 64)
	r.OnFrameStart = func() { calls++ }
	go func() {
		// Blank and whitespace-only lines must not count as frame starts; the frame arrives in pieces.
		for _, s := range []string{"\n", "  \r\n", " {\"a\"", ":1}", "\n"} {
			_, _ = pw.Write([]byte(s))
		}
		_ = pw.Close()
	}()
	f, err := r.ReadFrame()
	if err != nil || string(f) != `{"a":1}` {
		t.Fatalf("frame = %q, %v", f, err)
	}
	if calls != 1 {
		t.Errorf("OnFrameStart called %d times, want 1", calls)
	}
	if _, err := r.ReadFrame(); !errors.Is(err, io.EOF) {
		t.Errorf("err = %v, want EOF", err)
	}
	if calls != 1 {
		t.Errorf("OnFrameStart called %d times after EOF, want 1", calls)
	}
}

func TestReaderFrameOwnedByCaller(t *testing.T) {
	r := NewReader(bytes.NewReader([]byte("{\"a\":1}\n{\"b\":2}\n")), 64)
	f1, _ := r.ReadFrame()
	f2, _ := r.ReadFrame()
	if string(f1) != `{"a":1}` || string(f2) != `{"b":2}` {
		t.Errorf("frames = %q, %q", f1, f2)
	}
}

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

// pieceReader returns its input in pieces of varying sizes (as a socket does), some reads returning nothing.
type pieceReader struct {
	data []byte
	n    int
}

func (p *pieceReader) Read(b []byte) (int, error) {
	if len(p.data) == 0 {
		return 0, io.EOF
	}
	p.n++
	size := []int{0, 1, 7, 4096, 65536, 100000, 300000, 1 << 20}[p.n%8]
	m := copy(b[:min(len(b), size)], p.data)
	p.data = p.data[m:]
	return m, nil
}

// Large frames (read straight into their own buffer once they outgrow the read buffer, sized after the last
// large one) come out exactly as small ones do: trimmed, repaired, limited, and the frames that follow them in
// the same read kept for the next calls.
func TestReaderLargeFrames(t *testing.T) {
	big := func(n int, c byte) string { return `"` + strings.Repeat(string(c), n) + `"` }
	lines := []string{
		big(300<<10, 'a'), `{"small":1}`, big(1400<<10, 'b'), big(1400<<10+3, 'c'), `{"s":2}`, `{"s":3}`,
		"  " + big(200<<10, 'd') + " \r", "", big(1400<<10, 'e') + "\xff", big(128<<10, 'f'), big(2<<20, 'g'),
	}
	in := strings.Join(lines, "\n") // the last line without a newline
	var want []string
	for _, l := range lines {
		if l = strings.TrimSpace(l); l != "" {
			want = append(want, strings.ToValidUTF8(l, "\uFFFD"))
		}
	}
	for _, src := range []io.Reader{strings.NewReader(in), &pieceReader{data: []byte(in)}} {
		frames, err := readAll(t, NewReader(src, 0))
		if !errors.Is(err, io.EOF) {
			t.Fatalf("err = %v, want EOF", err)
		}
		if len(frames) != len(want) {
			t.Fatalf("%d frames, want %d", len(frames), len(want))
		}
		for i := range want {
			if frames[i] != want[i] {
				t.Fatalf("frame %d: %d bytes %.20q...%.20q, want %d bytes %.20q", i, len(frames[i]), frames[i],
					frames[i][max(0, len(frames[i])-20):], len(want[i]), want[i])
			}
		}
		// A limit between the frames' sizes: the frames below it pass, the first above it ends the reading.
		r := NewReader(&pieceReader{data: []byte(in)}, 1400<<10+2)
		frames, err = readAll(t, r)
		if !errors.Is(err, ErrFrameTooLarge) || len(frames) != 3 {
			t.Fatalf("with a limit: %d frames, err %v; want 3 and ErrFrameTooLarge", len(frames), err)
		}
	}
}

package provider

import (
	"bytes"
	"io"
	"strings"
	"testing"
)

type sseFrame struct{ event, data string }

func readAllSSE(t testing.TB, in string) []sseFrame {
	t.Helper()
	var out []sseFrame
	r := newSSEReader(strings.NewReader(in))
	for {
		ev, data, err := r.next()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatalf("next: %v", err)
		}
		out = append(out, sseFrame{ev, string(data)})
	}
}

func TestSSEReader(t *testing.T) {
	t.Parallel()
	in := ": comment\r\n" +
		"event: a\r\ndata: one\r\ndata:two\r\n\r\n" + // CRLF, multi-line data, no space after colon
		"\n\n" + // stray blank lines dispatch nothing
		"event: ignored-without-data\n\n" +
		"id: 7\nretry: 10\ndata: {\"x\":1}\n\n" +
		"data: " + strings.Repeat("y", 100<<10) + "\n\n" + // longer than the bufio buffer
		"data: last-without-blank-line"
	got := readAllSSE(t, in)
	want := []sseFrame{{"a", "one\ntwo"}, {"", `{"x":1}`}, {"", strings.Repeat("y", 100<<10)}, {"", "last-without-blank-line"}}
	if len(got) != len(want) {
		t.Fatalf("got %d frames, want %d: %q", len(got), len(want), got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("frame %d = %.40q, want %.40q", i, got[i], want[i])
		}
	}
}

// FuzzSSEReader checks that re-encoding the decoded frames and decoding again is stable, and that the reader
// never panics, seeded from the recorded fixtures.
func FuzzSSEReader(f *testing.F) {
	for _, name := range []string{"openai_text.sse", "openai_tools.sse", "anthropic_text.sse", "anthropic_tools.sse"} {
		f.Add(readFixture(f, name))
	}
	f.Add([]byte("data: a\r\ndata: b\n\nevent: x\n:c\n"))
	f.Fuzz(func(t *testing.T, in []byte) {
		first := readAllSSE(t, string(in))
		var enc bytes.Buffer
		for _, fr := range first {
			if fr.event != "" {
				enc.WriteString("event: " + fr.event + "\n")
			}
			for _, line := range strings.Split(fr.data, "\n") {
				enc.WriteString("data: " + line + "\n")
			}
			enc.WriteString("\n")
		}
		second := readAllSSE(t, enc.String())
		if len(first) != len(second) {
			t.Fatalf("round trip changed frame count %d -> %d", len(first), len(second))
		}
		for i := range first {
			if first[i] != second[i] {
				t.Fatalf("frame %d changed: %q -> %q", i, first[i], second[i])
			}
		}
	})
}

// endlessReader yields line forever.
type endlessReader struct {
	line []byte
	off  int
}

func (r *endlessReader) Read(p []byte) (int, error) {
	n := 0
	for n < len(p) {
		c := copy(p[n:], r.line[r.off:])
		n += c
		r.off = (r.off + c) % len(r.line)
	}
	return n, nil
}

// An event whose data lines never end with a blank line is refused once it passes the line limit, instead of
// growing without bound.
func TestSSEEventSizeBounded(t *testing.T) {
	t.Parallel()
	r := newSSEReader(&endlessReader{line: []byte("data: " + strings.Repeat("x", 1000) + "\n")})
	r.lines.max = 64 << 10
	if _, _, err := r.next(); err != errLineTooLong {
		t.Fatalf("err = %v, want errLineTooLong", err)
	}
	if cap(r.data) > 4*r.lines.max {
		t.Fatalf("buffered %d bytes for a %d-byte limit", cap(r.data), r.lines.max)
	}
}

// A lone "\r" ends a line as "\n" and "\r\n" do (text/event-stream's grammar), so "data: a\r\r" is the event
// "a" and its blank line, not the data "a\r" (found by FuzzSSEReader).
func TestSSEReaderLoneCR(t *testing.T) {
	t.Parallel()
	got := readAllSSE(t, "event: e\rdata: a\rdata: b\r\rdata:\r\r: c\r\ndata: d\r\n\r\n")
	want := []sseFrame{{"e", "a\nb"}, {"", ""}, {"", "d"}}
	if len(got) != len(want) {
		t.Fatalf("got %q, want %q", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("frame %d = %q, want %q", i, got[i], want[i])
		}
	}
}

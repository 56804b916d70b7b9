package jsonrpc

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"strconv"
	"strings"
	"testing"
	"testing/iotest"
	"time"
)

// payloadLen is the payload length the fuzzed streams declare: a frame "#N" is followed by N%5000 raw bytes.
func payloadLen(frame []byte) int {
	if len(frame) < 2 || frame[0] != '#' {
		return 0
	}
	n, err := strconv.Atoi(string(frame[1:]))
	if err != nil || n < 0 {
		return 0
	}
	return n % 5000
}

type framed struct {
	frame, payload []byte
}

// splitModel is the reference reading of a stream of lines and payloads: each line is trimmed, blank ones are
// skipped, invalid UTF-8 is replaced, and a line "#N" is followed by N%5000 raw bytes (newlines included). It
// reports whether the stream ended inside a payload.
func splitModel(data []byte) (out []framed, short bool) {
	for len(data) > 0 {
		line := data
		if nl := bytes.IndexByte(data, '\n'); nl >= 0 {
			line, data = data[:nl], data[nl+1:]
		} else {
			data = nil
		}
		line = bytes.TrimFunc(line, func(r rune) bool { return r < 0x80 && isSpace(byte(r)) })
		if len(line) == 0 {
			continue
		}
		if !bytes.Equal(line, bytes.ToValidUTF8(line, []byte("\uFFFD"))) {
			line = bytes.ToValidUTF8(line, []byte("\uFFFD"))
		}
		f := framed{frame: line}
		if n := payloadLen(line); n > 0 {
			if n > len(data) {
				return append(out, f), true
			}
			f.payload, data = data[:n], data[n:]
		}
		out = append(out, f)
	}
	return out, false
}

// FuzzPayloadStream: frames followed by raw payloads read back exactly as the reference splits them, whatever
// the payloads hold (newlines, braces, invalid UTF-8) and however the source splits its reads: the stream never
// gets out of step, and a payload cut short by the end of input is io.ErrUnexpectedEOF.
func FuzzPayloadStream(f *testing.F) {
	f.Add([]byte("{\"a\":1}\n#5\nab\ncd{\"b\":2}\n"), false)
	f.Add([]byte("#3\n\n\n\n#2\n\r\n  \n"), true)
	f.Add([]byte("#10\nshort"), false)
	f.Add([]byte("#0\n#1\n\xff \t#4\n\xfe\xff\n\n"), true)
	f.Fuzz(func(t *testing.T, data []byte, oneByte bool) {
		want, short := splitModel(data)
		var src io.Reader = bytes.NewReader(data)
		if oneByte {
			src = iotest.OneByteReader(src)
		}
		r := NewReader(src, 1<<20)
		for i, w := range want {
			frame, err := r.ReadFrame()
			if err != nil {
				t.Fatalf("frame %d: %v, want %q", i, err, w.frame)
			}
			if !bytes.Equal(frame, w.frame) {
				t.Fatalf("frame %d = %q, want %q", i, frame, w.frame)
			}
			n := payloadLen(frame)
			if n == 0 {
				continue
			}
			p := make([]byte, n)
			got, err := r.readPayload(p)
			if short && i == len(want)-1 {
				if !errors.Is(err, io.ErrUnexpectedEOF) || got >= n {
					t.Fatalf("cut payload: %d bytes, %v", got, err)
				}
				if _, err := r.ReadFrame(); err == nil {
					t.Fatal("a frame after a cut payload")
				}
				return
			}
			if err != nil || !bytes.Equal(p, w.payload) {
				t.Fatalf("payload %d = %q (%v), want %q", i, p, err, w.payload)
			}
		}
		if frame, err := r.ReadFrame(); !errors.Is(err, io.EOF) {
			t.Fatalf("after the last frame: %q, %v", frame, err)
		}
	})
}

// payloadOpts is a Conn whose requests with params {"n":N} are followed by N raw bytes; the handler answers with
// the payload as a string.
func payloadOpts(b *Budget, timeout time.Duration) (Options, Handler) {
	opts := Options{Budget: b, FrameTimeout: timeout, MaxFrameBytes: 1 << 20, Payload: func(req *Request) (int, error) {
		var p struct {
			N *int `json:"n"`
		}
		if json.Unmarshal(req.Params, &p) != nil || p.N == nil {
			return 0, nil
		}
		if *p.N == -1 {
			return 0, NewError(CodeInvalidParams, "bad n", nil)
		}
		return *p.N, nil
	}}
	return opts, HandlerFunc(func(_ context.Context, _ *Conn, req *Request) (any, error) {
		return string(req.Payload()), nil
	})
}

// Over a socket, the bytes after a request's frame are its payload (newlines and all), the next frame follows
// them, and the Budget holds them only while the request does.
func TestConnPayload(t *testing.T) {
	b := NewBudget(1 << 30)
	opts, h := payloadOpts(b, 0)
	p := newPair(t, h, opts)
	big := strings.Repeat("x\n{", 100000)
	p.send(`{"jsonrpc":"2.0","method":"m","params":{"n":6},"id":1}`+"\n"+`ab`+"\n"+`{}}`+
		`{"jsonrpc":"2.0","method":"m","params":{},"id":2}`,
		`{"jsonrpc":"2.0","method":"m","params":{"n":`+strconv.Itoa(len(big))+`},"id":3}`+"\n"+big+
			`{"jsonrpc":"2.0","method":"m","id":4}`)
	for _, want := range []string{`{"jsonrpc":"2.0","id":1,"result":"ab\n{}}"}`, `{"jsonrpc":"2.0","id":2,"result":""}`} {
		if got := p.recv(); got != want {
			t.Fatalf("got %s, want %s", got, want)
		}
	}
	if got := p.recv(); !strings.HasPrefix(got, `{"jsonrpc":"2.0","id":3,"result":"x\n{x`) || len(got) < len(big) {
		t.Fatalf("big payload: %.80s", got)
	}
	if got := p.recv(); got != `{"jsonrpc":"2.0","id":4,"result":""}` {
		t.Fatalf("after the big payload: %s", got)
	}
	eventually(t, "the budget released", func() bool { return b.Used() == 0 })
	if b.Peak() < int64(len(big)) {
		t.Fatalf("budget peak %d: the %d-byte payload was not charged", b.Peak(), len(big))
	}
}

// A length the reader cannot trust, a payload beyond the frame limit, and one that does not arrive in time each
// answer the request and close the connection.
func TestConnPayloadTerminal(t *testing.T) {
	for _, tc := range []struct {
		name, send, want string
	}{
		{"refused", `{"jsonrpc":"2.0","method":"m","params":{"n":-1},"id":"a"}` + "\nxyz\n", `{"jsonrpc":"2.0","id":"a","error":{"code":-32602,"message":"bad n"}}`},
		{"beyond the frame limit", `{"jsonrpc":"2.0","method":"m","params":{"n":1048577},"id":"b"}` + "\nxyz\n", `"id":"b","error":{"code":-32600,"message":"Invalid Request: a payload of 1048577 bytes is beyond the 1048576-byte frame limit"`},
		{"late", `{"jsonrpc":"2.0","method":"m","params":{"n":10},"id":"c"}` + "\nxyz", `"id":"c","error":{"code":-32600,"message":"Invalid Request: frame not finished in time"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			opts, h := payloadOpts(nil, 200*time.Millisecond)
			p := newPair(t, h, opts)
			if err := p.end.write(tc.send); err != nil {
				t.Fatal(err)
			}
			if got := p.recv(); !strings.Contains(got, tc.want) {
				t.Fatalf("got %s, want %s", got, tc.want)
			}
			p.recvEOF()
		})
	}
}

// A framer that carries whole messages has no bytes between frames: Payload is never asked.
func TestConnPayloadNotOnMessages(t *testing.T) {
	opts, h := payloadOpts(nil, 0)
	asked := false
	inner := opts.Payload
	opts.Payload = func(req *Request) (int, error) { asked = true; return inner(req) }
	p := newMemPair(t, h, opts)
	if p.srv.CanReadPayload() {
		t.Fatal("a message framer claims to read payloads")
	}
	p.send(`{"jsonrpc":"2.0","method":"m","params":{"n":3},"id":1}`)
	if got := p.recv(); got != `{"jsonrpc":"2.0","id":1,"result":""}` {
		t.Fatalf("got %s", got)
	}
	if asked {
		t.Fatal("Payload was asked on a message framer")
	}
}

// Payload buffers are recycled once a request is released: each request still sees exactly its own bytes.
func TestConnPayloadRecycled(t *testing.T) {
	opts, h := payloadOpts(nil, 0)
	p := newPair(t, h, opts)
	for i, n := range []int{pooledPayloadBytes, pooledPayloadMin + 1, pooledPayloadMin, pooledPayloadBytes - 3} {
		body := strings.Repeat(string(rune('a'+i)), n-1) + "z"
		p.send(`{"jsonrpc":"2.0","method":"m","params":{"n":` + strconv.Itoa(n) + `},"id":1}` + "\n" + body)
		want := `{"jsonrpc":"2.0","id":1,"result":"` + body + `"}`
		if got := p.recv(); got != want {
			t.Fatalf("payload %d (%d bytes): got %d bytes ending %q", i, n, len(got), got[max(0, len(got)-20):])
		}
	}
}

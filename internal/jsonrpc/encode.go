package jsonrpc

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"sync"
	"time"
)

// refusalWriteTimeout bounds WriteRefusal on a net.Conn: the refused peer gets one small frame, not a wait.
const refusalWriteTimeout = 5 * time.Second

// The Encode* helpers return one compact JSON object WITHOUT the trailing newline (the same shape
// Reader.ReadFrame returns, and what a WebSocket message carries); WriteFrame adds the newline.
// Fields come in the order jsonrpc, id, method/result/error, params. HTML characters are not escaped.

// EncodeResponse encodes a success response. A nil id is written as null; a nil result as "result":null.
func EncodeResponse(id json.RawMessage, result any) ([]byte, error) {
	b, err := appendResponse(nil, id, result)
	if err != nil {
		return nil, err
	}
	return b[:len(b)-1], nil
}

// EncodeError encodes an error response. A nil or malformed id is written as null. If e.Data cannot be
// encoded the frame is written without data rather than failing.
func EncodeError(id json.RawMessage, e *Error) []byte {
	b := appendError(nil, id, e)
	return b[:len(b)-1]
}

// EncodeNotification encodes a notification; nil params (including a nil json.RawMessage) are omitted.
func EncodeNotification(method string, params any) ([]byte, error) {
	b, err := appendRequest(nil, nil, method, params)
	if err != nil {
		return nil, err
	}
	return b[:len(b)-1], nil
}

// WriteFrame writes frame followed by "\n" in one Write call. frame must be one compact JSON object.
func WriteFrame(w io.Writer, frame []byte) error {
	line := make([]byte, 0, len(frame)+1)
	line = append(append(line, frame...), '\n')
	if _, err := w.Write(line); err != nil {
		return fmt.Errorf("jsonrpc: write frame: %w", err)
	}
	return nil
}

// WriteRefusal writes one error frame with id null directly to w (used for the -32004 connection-limit
// refusal before any Conn exists). When w is a net.Conn the write is bounded by a 5 s write deadline.
func WriteRefusal(w io.Writer, e *Error) error {
	frame := appendError(nil, nil, e)
	if nc, ok := w.(net.Conn); ok {
		if err := nc.SetWriteDeadline(time.Now().Add(refusalWriteTimeout)); err == nil {
			defer nc.SetWriteDeadline(time.Time{})
		}
	}
	if _, err := w.Write(frame); err != nil {
		return fmt.Errorf("jsonrpc: write refusal: %w", err)
	}
	return nil
}

// appendResponse, appendError and appendRequest append one frame including its "\n".

func appendResponse(dst []byte, id json.RawMessage, result any) ([]byte, error) {
	fb := getFrameBuf()
	defer putFrameBuf(fb)
	if err := fb.response(id, result); err != nil {
		return dst, err
	}
	return append(dst, fb.b...), nil
}

func appendError(dst []byte, id json.RawMessage, e *Error) []byte {
	fb := getFrameBuf()
	defer putFrameBuf(fb)
	fb.error(id, e)
	return append(dst, fb.b...)
}

func appendRequest(dst []byte, id json.RawMessage, method string, params any) ([]byte, error) {
	fb := getFrameBuf()
	defer putFrameBuf(fb)
	if err := fb.request(id, method, params); err != nil {
		return dst, err
	}
	return append(dst, fb.b...), nil
}

// maxPooledFrame is the largest buffer returned to framePool; a larger one (a big result) is left to the GC so
// the pool does not pin memory a burst once needed.
const maxPooledFrame = 64 << 10

// framePool recycles the buffers (and JSON encoders) outbound frames are built in: a frame is encoded once into
// a pooled buffer, written from it, and the buffer comes back when the write is done.
var framePool = sync.Pool{New: func() any {
	fb := &frameBuf{}
	fb.enc = json.NewEncoder(fb)
	fb.enc.SetEscapeHTML(false)
	return fb
}}

// frameBuf is a reusable frame buffer with a JSON encoder that appends to it.
type frameBuf struct {
	b   []byte
	enc *json.Encoder
}

func getFrameBuf() *frameBuf {
	fb := framePool.Get().(*frameBuf)
	fb.b = fb.b[:0]
	return fb
}

// putFrameBuf returns fb to the pool; the frame in it must not be used afterwards. A nil fb is ignored.
func putFrameBuf(fb *frameBuf) {
	if fb != nil && cap(fb.b) <= maxPooledFrame {
		framePool.Put(fb)
	}
}

// Write appends p; it is the encoder's writer.
func (fb *frameBuf) Write(p []byte) (int, error) {
	fb.b = append(fb.b, p...)
	return len(p), nil
}

// value appends v as JSON without HTML escaping (so raw ids and params keep their bytes), by v's AppendJSON when it
// is a JSONAppender that takes it; on failure nothing is appended.
func (fb *frameBuf) value(v any) error {
	n := len(fb.b)
	if a, ok := v.(JSONAppender); ok {
		if b, ok := a.AppendJSON(fb.b); ok {
			fb.b = b
			return nil
		}
		fb.b = fb.b[:n]
	}
	if err := fb.enc.Encode(v); err != nil {
		fb.b = fb.b[:n]
		return err
	}
	fb.b = fb.b[:len(fb.b)-1] // the Encoder's newline
	return nil
}

// Encoded is a value encoded once, as a frame's member would be (compact, HTML characters not escaped), to be
// sent as it is any number of times: a handler that answers the same result to many requests encodes it once
// and returns the same *Encoded (it is immutable, so connections may share it). Elsewhere (the gateway's JSON
// bodies) it marshals to the same value.
type Encoded struct{ b []byte }

// Encode encodes v as a frame's member.
func Encode(v any) (*Encoded, error) {
	fb := getFrameBuf()
	defer putFrameBuf(fb)
	if err := fb.value(v); err != nil {
		return nil, err
	}
	return &Encoded{b: append([]byte(nil), fb.b...)}, nil
}

// MarshalJSON returns the encoded bytes (encoding/json compacts them and escapes HTML characters as its
// settings say, as it would the value itself).
func (e *Encoded) MarshalJSON() ([]byte, error) { return e.b, nil }

// response sets fb to a success response. A nil id is written as null; a nil result as "result":null.
func (fb *frameBuf) response(id json.RawMessage, result any) error {
	fb.b = append(fb.b[:0], `{"jsonrpc":"2.0","id":`...)
	fb.b = appendID(fb.b, id)
	fb.b = append(fb.b, `,"result":`...)
	if e, ok := result.(*Encoded); ok && e != nil {
		fb.b = append(append(fb.b, e.b...), "}\n"...)
		return nil
	}
	if err := fb.value(result); err != nil {
		fb.b = fb.b[:0]
		return fmt.Errorf("jsonrpc: encode result: %w", err)
	}
	fb.b = append(fb.b, "}\n"...)
	return nil
}

// error sets fb to an error response. If e.Data cannot be encoded the frame is written without data.
func (fb *frameBuf) error(id json.RawMessage, e *Error) {
	if e == nil {
		e = NewError(CodeInternalError, "Internal error", nil)
	}
	fb.b = append(fb.b[:0], `{"jsonrpc":"2.0","id":`...)
	fb.b = appendID(fb.b, id)
	fb.b = append(fb.b, `,"error":`...)
	if err := fb.value(e); err != nil {
		_ = fb.value(&Error{Code: e.Code, Message: e.Message})
	}
	fb.b = append(fb.b, "}\n"...)
}

// request sets fb to a request, or a notification when id is nil. nil params (including a nil json.RawMessage)
// are omitted.
func (fb *frameBuf) request(id json.RawMessage, method string, params any) error {
	if raw, ok := params.(json.RawMessage); ok && raw == nil {
		params = nil // a nil RawMessage means "no params", not "params":null
	}
	fb.b = append(fb.b[:0], `{"jsonrpc":"2.0",`...)
	if id != nil {
		fb.b = append(fb.b, `"id":`...)
		fb.b = appendID(fb.b, id)
		fb.b = append(fb.b, ',')
	}
	fb.b = append(fb.b, `"method":`...)
	if plainString(method) {
		fb.b = append(append(append(fb.b, '"'), method...), '"')
	} else if err := fb.value(method); err != nil {
		fb.b = fb.b[:0]
		return fmt.Errorf("jsonrpc: encode method: %w", err)
	}
	if params != nil {
		fb.b = append(fb.b, `,"params":`...)
		if err := fb.value(params); err != nil {
			fb.b = fb.b[:0]
			return fmt.Errorf("jsonrpc: encode params: %w", err)
		}
	}
	fb.b = append(fb.b, "}\n"...)
	return nil
}

// plainString reports whether s is printable ASCII that JSON writes as is between quotes.
func plainString(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' {
			return false
		}
	}
	return true
}

// appendID writes a valid raw id as is and anything else as null, so a frame is always well formed.
func appendID(dst []byte, id json.RawMessage) []byte {
	if id == nil || !validID(id) || !json.Valid(id) {
		return append(dst, "null"...)
	}
	return append(dst, id...)
}

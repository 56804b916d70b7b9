package jsonrpc

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
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
	res, err := marshal(result)
	if err != nil {
		return dst, fmt.Errorf("jsonrpc: encode result: %w", err)
	}
	dst = append(dst, `{"jsonrpc":"2.0","id":`...)
	dst = appendID(dst, id)
	dst = append(dst, `,"result":`...)
	dst = append(dst, res...)
	return append(dst, "}\n"...), nil
}

func appendError(dst []byte, id json.RawMessage, e *Error) []byte {
	if e == nil {
		e = NewError(CodeInternalError, "Internal error", nil)
	}
	body, err := marshal(e)
	if err != nil {
		body, _ = marshal(&Error{Code: e.Code, Message: e.Message})
	}
	dst = append(dst, `{"jsonrpc":"2.0","id":`...)
	dst = appendID(dst, id)
	dst = append(dst, `,"error":`...)
	dst = append(dst, body...)
	return append(dst, "}\n"...)
}

// appendRequest encodes a request, or a notification when id is nil. nil params (including a nil
// json.RawMessage) are omitted.
func appendRequest(dst []byte, id json.RawMessage, method string, params any) ([]byte, error) {
	m, err := marshal(method)
	if err != nil {
		return dst, fmt.Errorf("jsonrpc: encode method: %w", err)
	}
	var p []byte
	if raw, ok := params.(json.RawMessage); ok && raw == nil {
		params = nil // a nil RawMessage means "no params", not "params":null
	}
	if params != nil {
		if p, err = marshal(params); err != nil {
			return dst, fmt.Errorf("jsonrpc: encode params: %w", err)
		}
	}
	dst = append(dst, `{"jsonrpc":"2.0",`...)
	if id != nil {
		dst = append(dst, `"id":`...)
		dst = appendID(dst, id)
		dst = append(dst, ',')
	}
	dst = append(dst, `"method":`...)
	dst = append(dst, m...)
	if p != nil {
		dst = append(dst, `,"params":`...)
		dst = append(dst, p...)
	}
	return append(dst, "}\n"...), nil
}

// appendID writes a valid raw id as is and anything else as null, so a frame is always well formed.
func appendID(dst []byte, id json.RawMessage) []byte {
	if id == nil || !validID(id) || !json.Valid(id) {
		return append(dst, "null"...)
	}
	return append(dst, id...)
}

// marshal is json.Marshal without HTML escaping (so raw ids and params keep their bytes) and without the
// Encoder's trailing newline.
func marshal(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

package jsonrpc

import (
	"errors"
	"fmt"
)

// Standard JSON-RPC 2.0 error codes used by this package. Application codes live with their callers.
const (
	CodeParseError     = -32700
	CodeInvalidRequest = -32600
	CodeMethodNotFound = -32601
	CodeInvalidParams  = -32602
	CodeInternalError  = -32603
)

// Sentinel errors of the connection machinery.
var (
	// ErrClosed is returned by Notify and Call once the connection is closed or closing.
	ErrClosed = errors.New("jsonrpc: connection closed")
	// ErrFrameTooLarge is returned by Reader.ReadFrame (and Conn.Serve) for a line longer than the limit.
	ErrFrameTooLarge = errors.New("jsonrpc: frame too large")
	// ErrFrameTimeout is returned by Conn.Serve when a started frame was not finished in time.
	ErrFrameTimeout = errors.New("jsonrpc: frame timeout")
)

// Error is a JSON-RPC error object. It is also a Go error: Is reports equal codes, so
// errors.Is(err, &Error{Code: CodeInvalidParams}) matches any -32602 error.
type Error struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
	Data    any    `json:"data,omitempty"`
	cause   error  // the domain error this one was mapped from; never on the wire
}

// WithCause records the domain error e was mapped from, so an in-process caller (the HTTP gateway) can tell
// apart errors that share a wire code with errors.Is. It returns e.
func (e *Error) WithCause(err error) *Error {
	e.cause = err
	return e
}

// Unwrap returns the domain error e was mapped from, or nil.
func (e *Error) Unwrap() error { return e.cause }

// NewError returns an Error with the given code, message and optional data (nil for none).
func NewError(code int, message string, data any) *Error {
	return &Error{Code: code, Message: message, Data: data}
}

// Error implements error.
func (e *Error) Error() string {
	return fmt.Sprintf("jsonrpc: error %d: %s", e.Code, e.Message)
}

// Is reports whether target is an *Error with the same code.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t != nil && e != nil && t.Code == e.Code
}

// limitData is the data of the frame_too_large and frame_timeout errors; a struct keeps "reason" first.
type limitData struct {
	Reason     string `json:"reason"`
	LimitBytes int    `json:"limit_bytes,omitempty"`
	LimitMS    int64  `json:"limit_ms,omitempty"`
}

func frameTooLargeError(limit int) *Error {
	return NewError(CodeInvalidRequest, "Invalid Request: frame too large",
		limitData{Reason: "frame_too_large", LimitBytes: limit})
}

func frameTimeoutError(limitMS int64) *Error {
	return NewError(CodeInvalidRequest, "Invalid Request: frame not finished in time",
		limitData{Reason: "frame_timeout", LimitMS: limitMS})
}

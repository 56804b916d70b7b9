//go:build !unix

package jsonrpc

import "io"

// idleSocket is not available here: the Reader keeps its buffer while it waits.
type idleSocket struct{}

func newIdleSocket(io.Reader) *idleSocket { return nil }

func (*idleSocket) read() (*smallBuf, int, error) { return nil, 0, nil }

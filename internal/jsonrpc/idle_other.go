//go:build !unix

package jsonrpc

import "io"

// waitReadable is not available here: the Reader keeps its buffer while it waits.
func waitReadable(io.Reader) bool { return false }

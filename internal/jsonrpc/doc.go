// Package jsonrpc implements JSON-RPC 2.0 over newline-delimited JSON: framing, frame validation and a
// connection type with ordered dispatch, outbound requests and the connection limits of protocol.md §2.1.
// It knows nothing about sessions, methods or principals.
package jsonrpc

// Package jsonrpc implements JSON-RPC 2.0 connections: frame validation, a Conn with ordered dispatch, outbound
// requests and the connection limits of protocol.md §2.1, over a Framer (NDJSON on a byte stream today). It
// knows nothing about sessions, methods or principals.
package jsonrpc

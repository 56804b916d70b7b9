// Package rpc serves the native JSON-RPC methods of protocol.md on one connection at a time: thin handlers on a
// router table, the handshake, principals and grants. Domain errors become wire codes through the shared table
// (errmap.RPC).
package rpc

// Package rpc serves the native JSON-RPC methods of protocol.md on one connection at a time: thin handlers on a
// router table, the handshake, principals and grants, and the mapping of its domains' errors to wire codes.
package rpc

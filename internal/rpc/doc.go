// Package rpc serves the native JSON-RPC methods of protocol.md on one connection at a time: the method table,
// the params/result adapter, principals and grants, and the one function that maps domain errors to wire codes.
package rpc

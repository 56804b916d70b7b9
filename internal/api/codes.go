// Package api is the wire contract of the native JSON-RPC protocol: method names, error codes and the
// params/result shapes of protocol.md. It imports only the standard library.
package api

// Error codes of protocol.md §4.
const (
	CodeParseError             = -32700
	CodeInvalidRequest         = -32600
	CodeMethodNotFound         = -32601
	CodeInvalidParams          = -32602
	CodeInternalError          = -32603
	CodeSessionNotFound        = -32000
	CodeSessionLimitReached    = -32001
	CodeSessionBusy            = -32002
	CodeSessionNotOwned        = -32003
	CodeConnectionLimitReached = -32004
	CodePreconditionFailed     = -32005
	CodeAuthRequired           = -32010
	CodeVersionMismatch        = -32011
	CodeForbidden              = -32012

	// CodeNotFound is the code of "what the request names does not exist" beyond sessions (a device, a memory
	// key): the protocol's one not-found code, SESSION_NOT_FOUND, so clients need no new case.
	CodeNotFound = CodeSessionNotFound
)

// ProtocolVersion is the only native protocol version this daemon speaks.
const ProtocolVersion = 1

// ServerVersion is the upstream release whose protocol this daemon implements, reported as server_version in
// initialize and status: zerocode refuses a daemon whose server_version is not its own release
// (protocol.md §0). Our own build is BuildVersion.
const ServerVersion = "0.8.6"

// Package store keeps the daemon's durable state: SQLite databases opened through one helper (WAL, one writer,
// embedded numbered migrations) and the append-only cost ledger.
package store

import "errors"

// Sentinel errors. Every error returned by this package that reports one of these conditions wraps the
// matching sentinel, so callers test with errors.Is.
var (
	// ErrNotFound reports that the named row (session, record) does not exist.
	ErrNotFound = errors.New("store: not found")
	// ErrClosed reports a call on a store or ledger after Close.
	ErrClosed = errors.New("store: closed")
	// ErrInvalid reports an argument the store refuses (empty key, bad path).
	ErrInvalid = errors.New("store: invalid argument")
)

// ErrBusy reports a session whose running turn is owned by another daemon sharing the database (a PostgreSQL
// install's turn lease); the RPC layer answers -32002 (busy).
var ErrBusy = errors.New("store: session busy: its turn runs on another daemon")

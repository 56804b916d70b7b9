// Package pgdb is the daemon's PostgreSQL access, shared by every store that can live in a PostgreSQL database
// (memory, and the stores of installs where several daemons share one database): a small pool of connections
// on pgconn, statements with text parameters and text results, transactions, and versioned schema migrations
// run under an advisory lock by whichever daemon gets there first.
//
// It speaks through pgconn, pgx's wire-protocol layer, and not through pgx itself: pgx's type system (pgtype,
// and the encoding/xml it pulls in) was ~3 MB of the daemon's binary, for statements whose parameters and
// results are a few strings, times, numbers and text arrays. Parameters go as text, their types inferred by the
// server from the statement (or cast in it), and results come back as text.
//
// Time is the server's: code that must agree across daemons (lease expiry, due slots) uses now() in SQL, never
// its own clock. Errors never quote the connection URL: it may carry a password.
package pgdb

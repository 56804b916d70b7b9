package cli

import (
	"errors"
	"fmt"
	"strings"

	"github.com/zeroclaw-go/zeroclaw/internal/api"
	"github.com/zeroclaw-go/zeroclaw/internal/cli/hint"
	"github.com/zeroclaw-go/zeroclaw/internal/jsonrpc"
)

// callError turns a failed call into one line for the user: op ("cron add"), then the daemon's message without
// the JSON-RPC framing and without the package prefixes its layers repeat ("cron: invalid job: cron: invalid
// schedule: ..." reads "invalid job: invalid schedule: ..."). hints maps an error code to the hint printed
// after it (a command line, or the catalogue key of a hint in words); without one, a few codes get a generic hint. A client-side error (no daemon, a closed connection)
// is only prefixed with op, keeping its own hint.
func callError(op string, err error, hints map[int]string) error {
	var we *jsonrpc.Error
	if !errors.As(err, &we) {
		return fmt.Errorf("%s: %w", op, err)
	}
	msg := cleanMessage(we.Message)
	e := &hint.Error{Err: &rpcError{op: op, msg: msg, code: we.Code, cause: we}}
	if h, ok := hints[we.Code]; ok {
		if isHintKey(h) {
			return hinted(e.Err, h)
		}
		e.Hint = h
		return e
	}
	switch we.Code {
	case api.CodeForbidden:
		e = hinted(e.Err, "cli-forbidden-hint")
	case api.CodeInternalError:
		e = hinted(e.Err, "cli-internal-error-hint")
	}
	return e
}

// isHintKey reports whether a hint given to callError is a catalogue key ("cli-...", put into words in the
// CLI's locale) rather than a command line printed as it is.
func isHintKey(h string) bool { return strings.HasPrefix(h, "cli-") && !strings.ContainsAny(h, " \t") }

// rpcError is a daemon's error answer as the CLI shows it; errors.Is/As still reach the *jsonrpc.Error.
type rpcError struct {
	op, msg string
	code    int
	cause   *jsonrpc.Error
}

func (e *rpcError) Error() string { return e.op + ": " + e.msg }
func (e *rpcError) Unwrap() error { return e.cause }

// cleanMessage drops the "pkg: " prefixes of the wrapped domain errors in a daemon's message: a domain
// package's name (cron, memory, store, skills...) as a whole ": "-separated part.
func cleanMessage(msg string) string {
	parts := strings.Split(msg, ": ")
	out := parts[:0]
	for i, p := range parts {
		if i < len(parts)-1 && isPkgWord(p) {
			continue
		}
		out = append(out, p)
	}
	return strings.Join(out, ": ")
}

// pkgPrefixes are the domain packages whose error prefix a daemon's message may carry.
var pkgPrefixes = map[string]bool{"agent": true, "config": true, "cost": true, "cron": true, "jsonrpc": true, "logs": true,
	"memory": true, "pairing": true, "personality": true, "provider": true, "router": true, "rpc": true, "session": true,
	"skills": true, "store": true, "tools": true, "upload": true, "workspace": true}

func isPkgWord(s string) bool { return pkgPrefixes[s] }

// isCode reports whether err is a daemon's error answer with code.
func isCode(err error, code int) bool {
	var we *jsonrpc.Error
	return errors.As(err, &we) && we.Code == code
}

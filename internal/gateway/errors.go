package gateway

import (
	"errors"
	"net/http"

	"github.com/zeroclaw-go/zeroclaw/internal/errmap"
	"github.com/zeroclaw-go/zeroclaw/internal/jsonrpc"
)

// handlerFunc is a route's handler: it writes the success itself and returns any failure, which handleError
// writes (caddy's admin API pattern). A handler that has begun writing its response returns nil.
type handlerFunc func(w http.ResponseWriter, r *http.Request) error

// callerFunc is a handler for an authenticated caller (see authed).
type callerFunc func(w http.ResponseWriter, r *http.Request, c caller) error

// statusError is a request's failure as the client sees it: a status and upstream's JSON body, plus the
// Retry-After of a rate limit. cause, when set, is an internal failure handleError logs (as what) and never
// sends.
type statusError struct {
	code       int
	body       map[string]any
	retryAfter int // seconds; 0: no Retry-After header
	what       string
	cause      error
}

func (e *statusError) Error() string {
	if msg, ok := e.body["error"].(string); ok {
		return "gateway: " + http.StatusText(e.code) + ": " + msg
	}
	return "gateway: " + http.StatusText(e.code)
}

func (e *statusError) Unwrap() error { return e.cause }

// fail is a failure with upstream's plain body {"error": msg}.
func fail(code int, msg string) error {
	return &statusError{code: code, body: map[string]any{"error": msg}}
}

// failWith is a failure with its own body.
func failWith(code int, body map[string]any) error {
	return &statusError{code: code, body: body}
}

// tooMany is a 429 with the wait in Retry-After and in the body's retry_after.
func tooMany(secs int, msg string) error {
	return &statusError{code: http.StatusTooManyRequests, retryAfter: secs,
		body: map[string]any{"error": msg, "retry_after": secs}}
}

// internal is a 500 {"error":"Internal error"}; err is logged with what, never sent.
func internal(what string, err error) error {
	return &statusError{code: http.StatusInternalServerError, body: map[string]any{"error": "Internal error"},
		what: what, cause: err}
}

// handleError writes every failure a handler returns: a *statusError as it says; a method's *jsonrpc.Error
// with the status the shared error table gives it (404 for a thing named that does not exist) and upstream's
// {"error"} body plus the JSON-RPC code; anything else, logged, as a 500 whose body says nothing of it.
func (s *Server) handleError(w http.ResponseWriter, err error) {
	var se *statusError
	var je *jsonrpc.Error
	switch {
	case errors.As(err, &se):
		if se.cause != nil {
			s.log.Error(se.what, "err", se.cause)
		}
		if se.retryAfter > 0 {
			w.Header().Set("Retry-After", itoa(se.retryAfter))
		}
		writeJSON(w, se.code, se.body)
	case errors.As(err, &je):
		writeJSON(w, errmap.HTTPStatus(err), map[string]any{"error": je.Message, "code": je.Code})
	default:
		s.log.Error("gateway request failed", "err", err)
		writeError(w, http.StatusInternalServerError, "Internal error")
	}
}

// serve adapts h to net/http: a returned error goes to handleError.
func (s *Server) serve(h handlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if err := h(w, r); err != nil {
			s.handleError(w, err)
		}
	}
}

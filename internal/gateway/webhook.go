package gateway

import (
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/zeroclaw-go/zeroclaw/internal/api"
	"github.com/zeroclaw-go/zeroclaw/internal/errmap"
	"github.com/zeroclaw-go/zeroclaw/internal/gateway/dashboard"
)

// ErrSessionNotOwned: the webhook named (X-Session-Id) a session another principal owns.
var ErrSessionNotOwned = errors.New("gateway: the session belongs to another principal")

// ErrAgentNotAllowed: the caller's permission profiles do not list the webhook's agent in allowed_agents.
var ErrAgentNotAllowed = errors.New("gateway: agent not allowed")

// ErrTurnFailed: the webhook's turn ran and failed (its provider, or storing it); the error's text is what
// the turn said, shown to the caller. ErrTurnCancelled: the turn was cancelled (the daemon is stopping).
var (
	ErrTurnFailed    = errors.New("gateway: the turn failed")
	ErrTurnCancelled = errors.New("gateway: the turn was cancelled")
)

// sessionIDShaped is whether id is 1-128 bytes of A-Z a-z 0-9 . _ - (a loop, not a regexp: the {1,128}
// repetition compiled to a program of 1,700 allocations at every start of the daemon).
func sessionIDShaped(id string) bool {
	if len(id) == 0 || len(id) > 128 {
		return false
	}
	for i := 0; i < len(id); i++ {
		switch c := id[i]; {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9', c == '.', c == '_', c == '-':
		default:
			return false
		}
	}
	return true
}

// webhookRoute is POST /webhook?agent=<alias> {message}: bearer auth (when pairing), the optional
// X-Webhook-Secret, the per-client rate, X-Idempotency-Key and X-Session-Id, as upstream.
func (s *Server) webhookRoute(w http.ResponseWriter, r *http.Request) error {
	cfg := s.o.Daemon.Config()
	g := cfg.Gateway
	key := s.clientKey(r)
	if !s.limits.webhook.allow(key, g.WebhookRateLimitPerMin, g.RateLimitMaxKeys) {
		return tooMany(60, "Too many webhook requests. Please retry later.")
	}
	c, err := s.authenticate(r)
	if err != nil {
		return err
	}
	if err := webhookSecret(r, g.WebhookSecret); err != nil {
		return err
	}
	if !c.principal.Allows(api.GrantSessionsExecute) {
		return fail(http.StatusForbidden, "Forbidden: missing grant "+api.GrantSessionsExecute)
	}
	var body struct {
		Message string `json:"message"`
	}
	if err := readJSON(r, &body); err != nil {
		return err
	}
	if strings.TrimSpace(body.Message) == "" {
		return fail(http.StatusBadRequest, "message is required")
	}
	agent := r.URL.Query().Get("agent")
	if _, known := cfg.Agents[agent]; agent != "" && !known {
		return fail(http.StatusBadRequest, "Unknown agent: "+agent)
	}
	if agent != "" && !c.principal.AllowsAgent(agent) {
		return failWith(http.StatusForbidden, map[string]any{"error": "Forbidden: this device's permission profiles do not allow agent " +
			agent + " (allowed_agents)", "code": api.CodeForbidden})
	}
	sid := r.Header.Get("X-Session-Id")
	if sid != "" && !sessionIDShaped(sid) {
		return fail(http.StatusBadRequest, "X-Session-Id must be 1-128 characters of A-Z a-z 0-9 . _ -")
	}
	if idem := r.Header.Get("X-Idempotency-Key"); idem != "" {
		// Keyed by device: one device's key neither answers nor blocks another's request.
		if !s.webhook.first(c.principal.Name+"\x00"+idem, time.Duration(g.IdempotencyTTLSecs)*time.Second, g.IdempotencyMaxKeys) {
			writeJSON(w, http.StatusOK, map[string]any{"status": "duplicate", "idempotent": true,
				"message": "Request already processed for this idempotency key"})
			return nil
		}
	}
	if sid == "" {
		sid = "webhook-" + s.o.NewID()
	}
	answer, err := s.o.Daemon.RunWebhook(r.Context(), c.principal, agent, sid, body.Message)
	if errors.Is(err, ErrSessionNotOwned) {
		return failWith(http.StatusForbidden, map[string]any{"error": "Forbidden: session " + sid + " belongs to another principal", "code": api.CodeSessionNotOwned})
	}
	if errors.Is(err, ErrAgentNotAllowed) { // the default agent, resolved by the session layer
		msg := err.Error()
		if i := strings.LastIndex(msg, "agent not allowed: "); i >= 0 {
			msg = msg[i+len("agent not allowed: "):]
		}
		return failWith(http.StatusForbidden, map[string]any{"error": "Forbidden: " + msg, "code": api.CodeForbidden})
	}
	if err != nil {
		return s.webhookFailure(r, sid, err)
	}
	writeJSON(w, http.StatusOK, map[string]any{"response": answer, "model": dashboard.ModelOf(s.o.Daemon.Config(), agent), "session_id": sid})
	return nil
}

// webhookSecret checks X-Webhook-Secret against gateway.webhook_secret (none set: no check), in constant time.
func webhookSecret(r *http.Request, secret string) error {
	if secret == "" {
		return nil
	}
	want := sha256.Sum256([]byte(secret))
	got := sha256.Sum256([]byte(r.Header.Get("X-Webhook-Secret")))
	if subtle.ConstantTimeCompare(want[:], got[:]) != 1 {
		return fail(http.StatusUnauthorized, "Unauthorized — invalid or missing X-Webhook-Secret")
	}
	return nil
}

// webhookFailure answers a webhook turn that did not give an answer, by what went wrong, where upstream
// answers every failure 500 "LLM request failed": a turn that ran and failed is 502 (the provider upstream of
// us failed; the body keeps upstream's text and adds the turn's error as detail), a cancelled one 503, one
// that could not start answers what the shared error table says (a busy session 409 with -32002, the session
// limit 429, a bad session id 400), and anything else is a 500 whose cause is logged, never sent.
func (s *Server) webhookFailure(r *http.Request, sid string, err error) error {
	switch {
	case r.Context().Err() != nil:
		return nil // the caller left: nobody reads an answer
	case errors.Is(err, ErrTurnFailed):
		s.log.Warn("webhook turn failed", "session", sid, "err", err)
		detail := strings.TrimPrefix(err.Error(), ErrTurnFailed.Error()+": ")
		return failWith(http.StatusBadGateway, map[string]any{"error": "LLM request failed", "detail": detail, "session_id": sid})
	case errors.Is(err, ErrTurnCancelled):
		return failWith(http.StatusServiceUnavailable, map[string]any{"error": "The turn was cancelled (the daemon is stopping); retry", "session_id": sid})
	}
	if e, ok := errmap.Lookup(err); ok && e.Status != http.StatusInternalServerError {
		return failWith(errmap.HTTPStatus(err), map[string]any{"error": webhookReason(e.Code, err), "code": e.Code, "session_id": sid})
	}
	return internal("webhook turn failed", err)
}

// webhookReason is the error text of a turn that could not start: a fixed sentence per code where one is
// known, else the error's own (a domain sentinel's text, which names no secret and no path).
func webhookReason(code int, err error) string {
	switch code {
	case api.CodeSessionBusy:
		return "Session is busy with another turn; retry later"
	case api.CodeSessionLimitReached:
		return "Too many live sessions; retry later"
	}
	return err.Error()
}

package gateway

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"net/http"
	"regexp"
	"strings"
	"time"

	"github.com/zeroclaw-go/zeroclaw/internal/api"
	"github.com/zeroclaw-go/zeroclaw/internal/auth"
)

// WebhookRunner runs one unattended turn (nobody can approve: what the agent's profile would ask about is
// refused) for the caller on agent ("" : the default agent) in session id, and returns the answer. A session
// the caller may not prompt (session/prompt's ownership rule) is an error wrapping ErrSessionNotOwned.
type WebhookRunner func(ctx context.Context, caller *auth.Principal, agent, sessionID, message string) (string, error)

// ErrSessionNotOwned: the webhook named (X-Session-Id) a session another principal owns.
var ErrSessionNotOwned = errors.New("gateway: the session belongs to another principal")

// grantWebhook is what a device needs to run a turn through the webhook (the grant of session/prompt).
const grantWebhook = "sessions:execute"

var sessionIDShape = regexp.MustCompile(`^[A-Za-z0-9._-]{1,128}$`)

// webhookRoute is POST /webhook?agent=<alias> {message}: bearer auth (when pairing), the optional
// X-Webhook-Secret, the per-client rate, X-Idempotency-Key and X-Session-Id, as upstream.
func (s *Server) webhookRoute(w http.ResponseWriter, r *http.Request) {
	if s.o.Webhook == nil {
		writeError(w, http.StatusServiceUnavailable, "webhook is not available")
		return
	}
	cfg := s.o.Config()
	g := cfg.Gateway
	key := s.clientKey(r)
	if !s.limits.webhook.allow(key, g.WebhookRateLimitPerMin, g.RateLimitMaxKeys) {
		w.Header().Set("Retry-After", "60")
		writeJSON(w, http.StatusTooManyRequests, map[string]any{"error": "Too many webhook requests. Please retry later.", "retry_after": 60})
		return
	}
	c, ok := s.authenticate(w, r)
	if !ok {
		return
	}
	if g.WebhookSecret != "" {
		want := sha256.Sum256([]byte(g.WebhookSecret))
		got := sha256.Sum256([]byte(r.Header.Get("X-Webhook-Secret")))
		if subtle.ConstantTimeCompare(want[:], got[:]) != 1 {
			writeError(w, http.StatusUnauthorized, "Unauthorized — invalid or missing X-Webhook-Secret")
			return
		}
	}
	if !c.principal.Allows(grantWebhook) {
		writeError(w, http.StatusForbidden, "Forbidden: missing grant "+grantWebhook)
		return
	}
	var body struct {
		Message string `json:"message"`
	}
	if !readJSON(w, r, &body) {
		return
	}
	if strings.TrimSpace(body.Message) == "" {
		writeError(w, http.StatusBadRequest, "message is required")
		return
	}
	agent := r.URL.Query().Get("agent")
	if _, known := cfg.Agents[agent]; agent != "" && !known {
		writeError(w, http.StatusBadRequest, "Unknown agent: "+agent)
		return
	}
	sid := r.Header.Get("X-Session-Id")
	if sid != "" && !sessionIDShape.MatchString(sid) {
		writeError(w, http.StatusBadRequest, "X-Session-Id must be 1-128 characters of A-Z a-z 0-9 . _ -")
		return
	}
	if idem := r.Header.Get("X-Idempotency-Key"); idem != "" {
		// Keyed by device: one device's key neither answers nor blocks another's request.
		if !s.webhook.first(c.principal.Name+"\x00"+idem, time.Duration(g.IdempotencyTTLSecs)*time.Second, g.IdempotencyMaxKeys) {
			writeJSON(w, http.StatusOK, map[string]any{"status": "duplicate", "idempotent": true,
				"message": "Request already processed for this idempotency key"})
			return
		}
	}
	if sid == "" {
		sid = "webhook-" + s.o.NewID()
	}
	answer, err := s.o.Webhook(r.Context(), c.principal, agent, sid, body.Message)
	if errors.Is(err, ErrSessionNotOwned) {
		writeJSON(w, http.StatusForbidden, map[string]any{"error": "Forbidden: session " + sid + " belongs to another principal", "code": api.CodeSessionNotOwned})
		return
	}
	if err != nil {
		s.log.Warn("webhook turn failed", "session", sid, "err", err)
		writeError(w, http.StatusInternalServerError, "LLM request failed")
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"response": answer, "model": modelOf(s.o.Config(), agent), "session_id": sid})
}

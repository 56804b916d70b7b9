package gateway

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"

	"github.com/zeroclaw-go/zeroclaw/internal/api"
	"github.com/zeroclaw-go/zeroclaw/internal/sop"
	"github.com/zeroclaw-go/zeroclaw/internal/sop/engine"
)

// maxSopWebhookPath bounds a webhook trigger path; maxIdempotencyKey bounds X-Idempotency-Key.
const (
	maxSopWebhookPath = 512
	maxIdempotencyKey = 128
)

// sopWebhookRoute is POST /sop/webhook/{path...}: the webhook trigger of SOPs (upstream defines the trigger,
// `type = "webhook"` with `path`, but wires no route). The request path after /sop/webhook, with its leading
// "/", is the trigger's topic, matched exactly against each SOP's `path`; the JSON body is the payload, data
// for the steps and never command text. The checks are /webhook's (rate, bearer, X-Webhook-Secret), then the
// sops:execute grant. X-Idempotency-Key makes a redelivery admit no second run. 202 with what each matching
// SOP did; 404 when no SOP has that path; 422 when [sop] untrusted_input_guard = "block" refuses the payload.
func (s *Server) sopWebhookRoute(w http.ResponseWriter, r *http.Request) error {
	cfg := s.o.Daemon.Config()
	g := cfg.Gateway
	if !s.limits.webhook.allow(s.clientKey(r), g.WebhookRateLimitPerMin, g.RateLimitMaxKeys) {
		return tooMany(60, "Too many webhook requests. Please retry later.")
	}
	c, err := s.authenticate(r)
	if err != nil {
		return err
	}
	if err := webhookSecret(r, g.WebhookSecret); err != nil {
		return err
	}
	if !c.principal.Allows(api.GrantSopsExecute) {
		return fail(http.StatusForbidden, "Forbidden: missing grant "+api.GrantSopsExecute)
	}
	body, err := io.ReadAll(r.Body)
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		return fail(http.StatusRequestEntityTooLarge, fmt.Sprintf("request body larger than %d bytes", mbe.Limit))
	}
	if err != nil {
		return fail(http.StatusBadRequest, "could not read the request body")
	}
	if len(body) > 0 && !json.Valid(body) {
		return fail(http.StatusBadRequest, "the body must be JSON (it is the trigger payload)")
	}
	topic := "/" + r.PathValue("path")
	if len(topic) > maxSopWebhookPath {
		return fail(http.StatusBadRequest, fmt.Sprintf("webhook path longer than %d bytes", maxSopWebhookPath))
	}
	idem := r.Header.Get("X-Idempotency-Key")
	if len(idem) > maxIdempotencyKey {
		return fail(http.StatusBadRequest, fmt.Sprintf("X-Idempotency-Key longer than %d bytes", maxIdempotencyKey))
	}
	e := s.o.Daemon.SopEngine()
	if e == nil {
		return fail(http.StatusServiceUnavailable, "SOP subsystem not enabled")
	}
	ev := sop.Event{Source: sop.SourceWebhook, Topic: topic, Payload: string(body)}
	if idem != "" {
		// Keyed by device: one device's key never folds another's delivery.
		ev.Key = "webhook:" + c.principal.Name + ":" + idem
	}
	res, err := e.Dispatch(r.Context(), ev)
	if err != nil {
		return fail(http.StatusServiceUnavailable, "SOP subsystem not accepting triggers: "+err.Error())
	}
	if len(res) == 1 && res[0].Kind == engine.BlockedUnsafe {
		return fail(http.StatusUnprocessableEntity, "refused by the untrusted-input guard: "+res[0].Reason)
	}
	type triggered struct {
		SopName string `json:"sop_name"`
		Result  string `json:"result"`
		RunID   string `json:"run_id,omitempty"`
		Reason  string `json:"reason,omitempty"`
	}
	out := make([]triggered, 0, len(res))
	for _, x := range res {
		if x.Kind == engine.NoMatch {
			continue
		}
		out = append(out, triggered{SopName: x.SopName, Result: string(x.Kind), RunID: x.RunID, Reason: x.Reason})
	}
	if len(out) == 0 {
		return fail(http.StatusNotFound, "no SOP has a webhook trigger with path "+topic)
	}
	writeJSON(w, http.StatusAccepted, map[string]any{"path": topic, "results": out})
	return nil
}

package gateway

import (
	"errors"
	"net/http"

	"github.com/zeroclaw-go/zeroclaw/internal/api"
	"github.com/zeroclaw-go/zeroclaw/internal/auth"
	"github.com/zeroclaw-go/zeroclaw/internal/pairing"
)

// self is the gateway's own principal for what open routes show (/health's runtime snapshot).
var self = &auth.Principal{Name: "gateway", Grants: []string{"health:read"}}

// health is GET /health: open, {status, paired, require_pairing, runtime}.
func (s *Server) health(w http.ResponseWriter, r *http.Request) {
	runtime, err := s.o.Dispatch(r.Context(), Identity{Principal: self, Label: "http:" + s.clientKey(r)}, api.MethodHealth, nil)
	if err != nil {
		s.writeRPCError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, healthBody{Status: "ok", Paired: s.o.Pairing.IsPaired(),
		RequirePairing: s.o.Pairing.Required(), Runtime: runtime})
}

// healthBody is GET /health's body. Its fields are in the order encoding/json writes a map's keys (sorted), the
// order the body has always had; a struct is encoded without a map's reflection and sorting.
type healthBody struct {
	Paired         bool   `json:"paired"`
	RequirePairing bool   `json:"require_pairing"`
	Runtime        any    `json:"runtime"`
	Status         string `json:"status"`
}

// pairGate applies the pair request rate and the auth limiter; false when it answered 429.
func (s *Server) pairGate(w http.ResponseWriter, r *http.Request, key string) bool {
	g := s.o.Config().Gateway
	if !s.limits.pair.allow(key, g.PairRateLimitPerMinute, g.RateLimitMaxKeys) {
		w.Header().Set("Retry-After", "60")
		writeJSON(w, http.StatusTooManyRequests, map[string]any{"error": "Too many pairing requests. Please retry later.", "retry_after": 60})
		return false
	}
	if !exempt(r, key) {
		if d := s.limits.auth.locked(key); d > 0 {
			s.tooManyAuth(w, d)
			return false
		}
	}
	return true
}

// pair runs one pairing attempt; it writes the failure responses (wrong is the status and body of a wrong
// code) and returns the token on success.
func (s *Server) pair(w http.ResponseWriter, r *http.Request, key, code string, info pairing.DeviceInfo, wrong func()) (pairing.Paired, bool) {
	p, err := s.o.Pairing.Pair(r.Context(), key, code, info)
	var le *pairing.LockedError
	switch {
	case err == nil:
		return p, true
	case errors.As(err, &le):
		secs := pairing.Seconds(le.RetryAfter)
		w.Header().Set("Retry-After", itoa(secs))
		writeJSON(w, http.StatusTooManyRequests, map[string]any{
			"error": "Too many failed attempts. Try again in " + itoa(secs) + "s.", "retry_after": secs})
	case errors.Is(err, pairing.ErrInvalidCode):
		if !exempt(r, key) {
			s.limits.auth.fail(key, s.o.Config().Gateway.RateLimitMaxKeys)
		}
		wrong()
	case errors.Is(err, pairing.ErrDisabled):
		writeError(w, http.StatusServiceUnavailable, "Pairing is disabled (gateway.require_pairing = false)")
	default:
		s.log.Error("pairing failed", "err", err)
		writeJSON(w, http.StatusInternalServerError, map[string]any{"paired": false, "persisted": false,
			"error": "Token persistence error", "message": "Pairing failed; the token was not retained."})
	}
	return pairing.Paired{}, false
}

// pairLegacy is POST /pair with the code in X-Pairing-Code.
func (s *Server) pairLegacy(w http.ResponseWriter, r *http.Request) {
	key := s.clientKey(r)
	if !s.pairGate(w, r, key) {
		return
	}
	p, ok := s.pair(w, r, key, r.Header.Get("X-Pairing-Code"), pairing.DeviceInfo{IP: key}, func() {
		writeError(w, http.StatusForbidden, "Invalid pairing code")
	})
	if !ok {
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"paired": true, "persisted": true, "token": p.Token,
		"message": "Save this token — use it as Authorization: Bearer <token>"})
}

// pairEnhanced is POST /api/pair {code, device_name?, device_type?}.
func (s *Server) pairEnhanced(w http.ResponseWriter, r *http.Request) {
	key := s.clientKey(r)
	if !s.pairGate(w, r, key) {
		return
	}
	var body struct {
		Code       string `json:"code"`
		DeviceName string `json:"device_name"`
		DeviceType string `json:"device_type"`
	}
	if !readJSON(w, r, &body) {
		return
	}
	info := pairing.DeviceInfo{Name: body.DeviceName, Type: body.DeviceType, IP: key}
	p, ok := s.pair(w, r, key, body.Code, info, func() {
		writeJSON(w, http.StatusBadRequest, map[string]any{"paired": false, "error": "Invalid or expired pairing code"})
	})
	if !ok {
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"paired": true, "persisted": true, "token": p.Token,
		"device_id": p.Device.ID, "message": "Pairing successful"})
}

// pairCode is GET /pair/code: the pending code, to the owner only (upstream hands it to anyone; any local
// user could pair then). Everyone else has the daemon's terminal or `zeroclaw pair code` on the socket.
func (s *Server) pairCode(w http.ResponseWriter, r *http.Request) {
	if _, ok := s.owner(w, r); !ok {
		return
	}
	var code any
	if c := s.o.Pairing.PendingCode(); c != "" {
		code = c
	}
	writeJSON(w, http.StatusOK, map[string]any{"success": true, "pairing_required": s.o.Pairing.Required(), "pairing_code": code})
}

// pairingInitiate is POST /api/pairing/initiate: a new code for the next device (pair/code).
func (s *Server) pairingInitiate(w http.ResponseWriter, r *http.Request, c caller) {
	res, err := s.o.Dispatch(r.Context(), c.identity(), api.MethodPairCode, nil)
	if err != nil {
		s.writeRPCError(w, err)
		return
	}
	pc := res.(api.PairCodeResult)
	writeJSON(w, http.StatusOK, map[string]any{"pairing_code": pc.PairingCode,
		"message": "Enter this code on the new device, or POST it to /api/pair"})
}

// myCapabilities is POST /api/devices/me/capabilities {capabilities}: the caller's own device.
func (s *Server) myCapabilities(w http.ResponseWriter, r *http.Request, c caller) {
	var body struct {
		Capabilities []string `json:"capabilities"`
	}
	if !readJSON(w, r, &body) {
		return
	}
	if c.tokenHash == "" {
		writeError(w, http.StatusBadRequest, "pairing is off: there is no device to update")
		return
	}
	if err := s.o.Pairing.SetCapabilities(r.Context(), c.tokenHash, body.Capabilities); errors.Is(err, pairing.ErrNotFound) {
		writeError(w, http.StatusNotFound, "no device is registered for this token")
		return
	} else if err != nil {
		s.log.Error("device capabilities not saved", "err", err)
		writeError(w, http.StatusInternalServerError, "Internal error")
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"status": "ok", "capabilities": body.Capabilities})
}

// adminShutdown is POST /admin/shutdown (the owner: the same rule as the shutdown method over [wss]).
func (s *Server) adminShutdown(w http.ResponseWriter, r *http.Request) {
	if _, ok := s.owner(w, r); !ok {
		return
	}
	if s.o.Shutdown == nil {
		writeError(w, http.StatusServiceUnavailable, "shutdown is not available")
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"success": true, "message": "Gateway shutdown initiated"})
	s.o.Shutdown()
}

// adminReload is POST /admin/reload (the owner).
func (s *Server) adminReload(w http.ResponseWriter, r *http.Request) {
	if _, ok := s.owner(w, r); !ok {
		return
	}
	if s.o.Reload == nil {
		writeError(w, http.StatusServiceUnavailable, "reload is not available")
		return
	}
	if err := s.o.Reload(r.Context()); err != nil {
		writeJSON(w, http.StatusBadRequest, map[string]any{"success": false, "error": err.Error()})
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"success": true, "message": "Daemon reload initiated"})
}

// adminPairCode is GET /admin/paircode and POST /admin/paircode/new (the owner): the pending code, made when
// none is pending; POST ?rotate=all first revokes every token and empties the device registry.
func (s *Server) adminPairCode(w http.ResponseWriter, r *http.Request) {
	if _, ok := s.owner(w, r); !ok {
		return
	}
	if r.Method == http.MethodPost && r.URL.Query().Get("rotate") == "all" {
		if err := s.o.Pairing.RevokeAll(r.Context()); err != nil {
			s.log.Error("revoking every device", "err", err)
			writeError(w, http.StatusInternalServerError, "Internal error")
			return
		}
	}
	code, err := s.o.Pairing.Code()
	if errors.Is(err, pairing.ErrDisabled) {
		writeError(w, http.StatusServiceUnavailable, "Pairing is disabled (gateway.require_pairing = false)")
		return
	} else if err != nil {
		s.log.Error("pairing code", "err", err)
		writeError(w, http.StatusInternalServerError, "Internal error")
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"success": true, "pairing_required": true, "pairing_code": code})
}

package gateway

import (
	"errors"
	"net/http"

	"github.com/zeroclaw-go/zeroclaw/internal/api"
	"github.com/zeroclaw-go/zeroclaw/internal/auth"
	"github.com/zeroclaw-go/zeroclaw/internal/pairing"
)

// self is the gateway's own principal for what open routes show (/health's runtime snapshot).
var self = &auth.Principal{Name: "gateway", Grants: []string{api.GrantHealthRead}}

// health is GET /health: open, {status, paired, require_pairing, runtime}.
func (s *Server) health(w http.ResponseWriter, r *http.Request) error {
	runtime, err := s.o.Daemon.Call(r.Context(), Identity{Principal: self, Label: "http:" + s.clientKey(r)}, api.MethodHealth, nil)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, healthBody{Status: "ok", Paired: s.o.Pairing.IsPaired(),
		RequirePairing: s.o.Pairing.Required(), Runtime: runtime})
	return nil
}

// healthBody is GET /health's body. Its fields are in the order encoding/json writes a map's keys (sorted), the
// order the body has always had; a struct is encoded without a map's reflection and sorting.
type healthBody struct {
	Paired         bool   `json:"paired"`
	RequirePairing bool   `json:"require_pairing"`
	Runtime        any    `json:"runtime"`
	Status         string `json:"status"`
}

// pairGate applies the pair request rate and the auth limiter (a 429 when either refuses).
func (s *Server) pairGate(r *http.Request, key string) error {
	g := s.o.Daemon.Config().Gateway
	if !s.limits.pair.allow(key, g.PairRateLimitPerMinute, g.RateLimitMaxKeys) {
		return tooMany(60, "Too many pairing requests. Please retry later.")
	}
	if !exempt(r, key) {
		if d := s.limits.auth.locked(key); d > 0 {
			return tooManyAuth(d)
		}
	}
	return nil
}

// pair runs one pairing attempt and returns the token, or the failure to answer (wrong is the failure of a
// wrong code).
func (s *Server) pair(r *http.Request, key, code string, info pairing.DeviceInfo, wrong error) (pairing.Paired, error) {
	p, err := s.o.Pairing.Pair(r.Context(), key, code, info)
	var le *pairing.LockedError
	switch {
	case err == nil:
		return p, nil
	case errors.As(err, &le):
		secs := pairing.Seconds(le.RetryAfter)
		return pairing.Paired{}, tooMany(secs, "Too many failed attempts. Try again in "+itoa(secs)+"s.")
	case errors.Is(err, pairing.ErrInvalidCode):
		if !exempt(r, key) {
			s.limits.auth.fail(key, s.o.Daemon.Config().Gateway.RateLimitMaxKeys)
		}
		return pairing.Paired{}, wrong
	case errors.Is(err, pairing.ErrDisabled):
		return pairing.Paired{}, errPairingDisabled
	default:
		return pairing.Paired{}, &statusError{code: http.StatusInternalServerError, what: "pairing failed", cause: err,
			body: map[string]any{"paired": false, "persisted": false,
				"error": "Token persistence error", "message": "Pairing failed; the token was not retained."}}
	}
}

var errPairingDisabled = fail(http.StatusServiceUnavailable, "Pairing is disabled (gateway.require_pairing = false)")

// pairLegacy is POST /pair with the code in X-Pairing-Code.
func (s *Server) pairLegacy(w http.ResponseWriter, r *http.Request) error {
	key := s.clientKey(r)
	if err := s.pairGate(r, key); err != nil {
		return err
	}
	p, err := s.pair(r, key, r.Header.Get("X-Pairing-Code"), pairing.DeviceInfo{IP: key},
		fail(http.StatusForbidden, "Invalid pairing code"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"paired": true, "persisted": true, "token": p.Token,
		"message": "Save this token — use it as Authorization: Bearer <token>"})
	return nil
}

// pairEnhanced is POST /api/pair {code, device_name?, device_type?}.
func (s *Server) pairEnhanced(w http.ResponseWriter, r *http.Request) error {
	key := s.clientKey(r)
	if err := s.pairGate(r, key); err != nil {
		return err
	}
	var body struct {
		Code       string `json:"code"`
		DeviceName string `json:"device_name"`
		DeviceType string `json:"device_type"`
	}
	if err := readJSON(r, &body); err != nil {
		return err
	}
	info := pairing.DeviceInfo{Name: body.DeviceName, Type: body.DeviceType, IP: key}
	p, err := s.pair(r, key, body.Code, info,
		failWith(http.StatusBadRequest, map[string]any{"paired": false, "error": "Invalid or expired pairing code"}))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"paired": true, "persisted": true, "token": p.Token,
		"device_id": p.Device.ID, "message": "Pairing successful"})
	return nil
}

// pairCode is GET /pair/code: the pending code, to the owner only (upstream hands it to anyone; any local
// user could pair then). Everyone else has the daemon's terminal or `zeroclaw pair code` on the socket.
func (s *Server) pairCode(w http.ResponseWriter, r *http.Request) error {
	if _, err := s.owner(r); err != nil {
		return err
	}
	var code any
	if c := s.o.Pairing.PendingCode(); c != "" {
		code = c
	}
	writeJSON(w, http.StatusOK, map[string]any{"success": true, "pairing_required": s.o.Pairing.Required(), "pairing_code": code})
	return nil
}

// pairingInitiate is POST /api/pairing/initiate: a new code for the next device (pair/code).
func (s *Server) pairingInitiate(w http.ResponseWriter, r *http.Request, c caller) error {
	res, err := s.o.Daemon.Call(r.Context(), c.identity(), api.MethodPairCode, nil)
	if err != nil {
		return err
	}
	pc := res.(api.PairCodeResult)
	writeJSON(w, http.StatusOK, map[string]any{"pairing_code": pc.PairingCode,
		"message": "Enter this code on the new device, or POST it to /api/pair"})
	return nil
}

// myCapabilities is POST /api/devices/me/capabilities {capabilities}: the caller's own device.
func (s *Server) myCapabilities(w http.ResponseWriter, r *http.Request, c caller) error {
	var body struct {
		Capabilities []string `json:"capabilities"`
	}
	if err := readJSON(r, &body); err != nil {
		return err
	}
	if c.tokenHash == "" {
		return fail(http.StatusBadRequest, "pairing is off: there is no device to update")
	}
	if err := s.o.Pairing.SetCapabilities(r.Context(), c.tokenHash, body.Capabilities); errors.Is(err, pairing.ErrNotFound) {
		return fail(http.StatusNotFound, "no device is registered for this token")
	} else if err != nil {
		return internal("device capabilities not saved", err)
	}
	writeJSON(w, http.StatusOK, map[string]any{"status": "ok", "capabilities": body.Capabilities})
	return nil
}

// adminShutdown is POST /admin/shutdown (the owner: the same rule as the shutdown method over [wss]).
func (s *Server) adminShutdown(w http.ResponseWriter, r *http.Request) error {
	if _, err := s.owner(r); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"success": true, "message": "Gateway shutdown initiated"})
	s.o.Daemon.Shutdown()
	return nil
}

// adminReload is POST /admin/reload (the owner).
func (s *Server) adminReload(w http.ResponseWriter, r *http.Request) error {
	if _, err := s.owner(r); err != nil {
		return err
	}
	if err := s.o.Daemon.Reload(r.Context()); err != nil {
		return failWith(http.StatusBadRequest, map[string]any{"success": false, "error": err.Error()})
	}
	writeJSON(w, http.StatusOK, map[string]any{"success": true, "message": "Daemon reload initiated"})
	return nil
}

// adminPairCode is GET /admin/paircode and POST /admin/paircode/new (the owner): the pending code, made when
// none is pending; POST ?rotate=all first revokes every token and empties the device registry.
func (s *Server) adminPairCode(w http.ResponseWriter, r *http.Request) error {
	if _, err := s.owner(r); err != nil {
		return err
	}
	if r.Method == http.MethodPost && r.URL.Query().Get("rotate") == "all" {
		if err := s.o.Pairing.RevokeAll(r.Context()); err != nil {
			return internal("revoking every device", err)
		}
	}
	code, err := s.o.Pairing.Code()
	if errors.Is(err, pairing.ErrDisabled) {
		return errPairingDisabled
	} else if err != nil {
		return internal("pairing code", err)
	}
	writeJSON(w, http.StatusOK, map[string]any{"success": true, "pairing_required": true, "pairing_code": code})
	return nil
}

package gateway

import (
	"encoding/json"
	"net"
	"net/http"
	"strconv"

	"github.com/zeroclaw-go/zeroclaw/internal/api"
	"github.com/zeroclaw-go/zeroclaw/internal/config"
	"github.com/zeroclaw-go/zeroclaw/internal/gateway/dashboard"
)

// Upstream's web dashboard reads the routes below in upstream's shapes (package dashboard builds them). Each
// is built from the same native methods as the rest of the gateway, with the caller's grants.

// apiStatus is GET /api/status: status (our fields, which our own clients read) plus upstream's
// StatusResponse for ?agent= or the default agent (dashboard.Status), its health components from health when
// the caller may read it, else the daemon's and the gateway's own.
func (s *Server) apiStatus(w http.ResponseWriter, r *http.Request, c caller) error {
	res, err := s.o.Daemon.Call(r.Context(), c.identity(), api.MethodStatus, nil)
	if err != nil {
		return err
	}
	var st api.StatusResult
	out := map[string]any{}
	if raw, err := json.Marshal(res); err != nil || json.Unmarshal(raw, &st) != nil || json.Unmarshal(raw, &out) != nil {
		return internal("gateway: status result", err)
	}
	cfg := s.o.Daemon.Config()
	now := s.o.Clock.Now()
	var health *api.HealthResult
	if res, err := s.o.Daemon.Call(r.Context(), c.identity(), api.MethodHealth, nil); err == nil {
		var h api.HealthResult
		if raw, err := json.Marshal(res); err == nil && json.Unmarshal(raw, &h) == nil {
			health = &h
		}
	}
	dashboard.Status(out, dashboard.StatusInput{Result: st, Config: cfg, Agent: r.URL.Query().Get("agent"), Now: now,
		Port: s.boundPort(cfg), Paired: s.o.Pairing != nil && s.o.Pairing.IsPaired(), Health: health})
	writeJSON(w, http.StatusOK, out)
	return nil
}

// boundPort is the port the gateway listens on (the configured one before it is bound, or when port 0 is
// still unbound).
func (s *Server) boundPort(cfg *config.Config) int {
	if a := s.Addr(); a != nil {
		if _, p, err := net.SplitHostPort(a.String()); err == nil {
			if n, err := strconv.Atoi(p); err == nil {
				return n
			}
		}
	}
	return cfg.Gateway.Port
}

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

// apiStatus is GET /api/status, one of the routes upstream's web dashboard reads in its shapes (package
// dashboard builds them from the native methods, called with the caller's grants): status (our fields, which
// our own clients read) plus upstream's
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
	cfg, now := s.o.Daemon.Config(), s.o.Clock.Now()
	var health *api.HealthResult
	if h, err := callAs[api.HealthResult](s, r, c, api.MethodHealth, nil); err == nil {
		health = &h // absent when the caller may not read health
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

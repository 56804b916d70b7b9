package gateway

import (
	"encoding/json"
	"maps"
	"net"
	"net/http"
	"runtime"
	"runtime/metrics"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/zeroclaw-go/zeroclaw/internal/api"
	"github.com/zeroclaw-go/zeroclaw/internal/config"
)

// Upstream's web dashboard reads the routes below in upstream's shapes (crates/zeroclaw-gateway/src/api.rs,
// and the dashboard's web/src/types/api.ts, the client that must parse). Each is built from the same native
// methods as the rest of the gateway, with the caller's grants; what we do not have (channels, nodes, a
// release poller) is answered as empty rather than made up.

// apiStatus is GET /api/status: status (our fields, which our own clients read) plus upstream's
// StatusResponse: version, model_provider/model/temperature/memory_backend for ?agent= or the default agent,
// uptime_seconds, daemon_started_at, gateway_port, locale, paired, channels, nodes, health (its components
// from health when the caller may read it, else the daemon's and the gateway's own), process and the
// upgrade affordances (off: we do not upgrade ourselves).
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
	now := s.o.Clock.Now().UTC()
	agent := strings.TrimSpace(r.URL.Query().Get("agent"))
	if _, ok := cfg.Agents[agent]; !ok {
		agent = "" // upstream: an unknown alias falls back to the install-wide view
	}
	name := agent
	if name == "" {
		name = defaultAgent(cfg)
	}
	a := cfg.Agents[name]
	var provider any // null when no provider is configured
	if a.ModelProvider != "" {
		provider = a.ModelProvider
	} else if p := firstProvider(cfg); p != "" {
		provider = p
	}
	temperature := 0.0 // StatusResponse.temperature is a number; 0 stands for "the model's own default"
	family, alias, _ := strings.Cut(a.ModelProvider, ".")
	if t := cfg.Providers.Models[family][alias].Temperature; t != nil {
		temperature = *t
	}
	backend := cfg.Memory.Backend
	if a.Memory.Backend != "" {
		backend = a.Memory.Backend
	}
	started := now.Add(-time.Duration(st.UptimeSecs) * time.Second)
	var agentAlias any
	if agent != "" {
		agentAlias = agent
	}
	maps.Copy(out, map[string]any{
		"version":            st.ServerVersion,
		"model_provider":     provider,
		"model":              modelOf(cfg, name),
		"temperature":        temperature,
		"uptime_seconds":     st.UptimeSecs,
		"daemon_started_at":  started.Format(time.RFC3339),
		"gateway_port":       s.boundPort(cfg),
		"locale":             "en",
		"memory_backend":     backend,
		"paired":             s.o.Pairing != nil && s.o.Pairing.IsPaired(),
		"channels":           map[string]bool{},
		"nodes":              map[string]any{"connected": []string{}, "mdns_peers": []any{}},
		"health":             s.healthSnapshot(r, c, st, now),
		"agent_alias":        agentAlias,
		"process":            processStats(),
		"check_updates":      false,
		"allow_self_upgrade": false,
		"restart_mode":       "manual",
		"restart_hint":       "zeroclaw stop, then start the daemon again (zeroclaw daemon)",
	})
	writeJSON(w, http.StatusOK, out)
	return nil
}

// componentHealth is upstream's ComponentHealth.
type componentHealth struct {
	Status       string  `json:"status"`
	UpdatedAt    string  `json:"updated_at"`
	LastOK       *string `json:"last_ok"`
	LastError    *string `json:"last_error"`
	RestartCount int     `json:"restart_count"`
}

// healthSnapshot is upstream's HealthSnapshot: the components of our health method when the caller may call
// it, and always the daemon and the gateway.
func (s *Server) healthSnapshot(r *http.Request, c caller, st api.StatusResult, now time.Time) map[string]any {
	stamp := now.Format(time.RFC3339)
	comp := func(status, errText string) componentHealth {
		h := componentHealth{Status: status, UpdatedAt: stamp}
		if status == "ok" {
			h.LastOK = &stamp
		}
		if errText != "" {
			h.LastError = &errText
		}
		return h
	}
	comps := map[string]componentHealth{"daemon": comp("ok", "")}
	if gw := st.Gateway; gw != nil {
		status := "ok"
		if gw.State != api.GatewayServed {
			status = "error"
		}
		comps["gateway"] = comp(status, gw.Error)
	}
	if res, err := s.o.Daemon.Call(r.Context(), c.identity(), api.MethodHealth, nil); err == nil {
		var h api.HealthResult
		if raw, err := json.Marshal(res); err == nil && json.Unmarshal(raw, &h) == nil {
			for name, ch := range h.Components {
				errText := ""
				if ch.Status != "ok" {
					errText = ch.Detail
				}
				comps[name] = comp(ch.Status, errText)
			}
		}
	}
	return map[string]any{"pid": st.PID, "updated_at": stamp, "uptime_seconds": st.UptimeSecs, "components": comps}
}

// processStats is upstream's ProcessStats from the Go runtime: the memory it has mapped from the OS (close to
// the RSS), the CPU count; the host's RAM and a CPU percentage are not measured (0 and null, as upstream on an
// unsupported host).
func processStats() map[string]any {
	sample := []metrics.Sample{{Name: "/memory/classes/total:bytes"}}
	metrics.Read(sample)
	var rss uint64
	if sample[0].Value.Kind() == metrics.KindUint64 {
		rss = sample[0].Value.Uint64()
	}
	return map[string]any{"rss_bytes": rss, "system_ram_total_bytes": 0, "cpu_percent": nil, "num_cpus": runtime.NumCPU()}
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

// defaultAgent is acp.default_agent, else "default".
func defaultAgent(cfg *config.Config) string {
	if cfg.ACP.DefaultAgent != "" {
		return cfg.ACP.DefaultAgent
	}
	return "default"
}

// firstProvider is the first configured provider as "<family>.<alias>" in name order ("" when none).
func firstProvider(cfg *config.Config) string {
	for _, f := range slices.Sorted(maps.Keys(cfg.Providers.Models)) {
		for _, a := range slices.Sorted(maps.Keys(cfg.Providers.Models[f])) {
			return f + "." + a
		}
	}
	return ""
}

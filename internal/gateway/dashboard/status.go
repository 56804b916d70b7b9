package dashboard

import (
	"maps"
	"runtime"
	"runtime/metrics"
	"slices"
	"strings"
	"time"

	"github.com/zeroclaw-go/zeroclaw/internal/api"
	"github.com/zeroclaw-go/zeroclaw/internal/config"
)

// StatusInput is what GET /api/status is built from: the status method's result, the config, the ?agent=
// query, the clock, the bound port, whether the install is paired, and the health method's result (nil when
// the caller may not call it).
type StatusInput struct {
	Result api.StatusResult
	Config *config.Config
	Agent  string
	Now    time.Time
	Port   int
	Paired bool
	Health *api.HealthResult
}

// Status adds upstream's StatusResponse to out (the status method's own fields, which our own clients read):
// version, model_provider/model/temperature/memory_backend for the agent or the default agent,
// uptime_seconds, daemon_started_at, gateway_port, locale, paired, channels, nodes, health, process and the
// upgrade affordances (off: we do not upgrade ourselves). What we do not have (channels, nodes) is empty.
func Status(out map[string]any, in StatusInput) {
	cfg, st, now := in.Config, in.Result, in.Now.UTC()
	agent := strings.TrimSpace(in.Agent)
	if _, ok := cfg.Agents[agent]; !ok {
		agent = "" // upstream: an unknown alias falls back to the install-wide view
	}
	name := agent
	if name == "" {
		name = DefaultAgent(cfg)
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
		"model":              ModelOf(cfg, name),
		"temperature":        temperature,
		"uptime_seconds":     st.UptimeSecs,
		"daemon_started_at":  started.Format(time.RFC3339),
		"gateway_port":       in.Port,
		"locale":             "en",
		"memory_backend":     backend,
		"paired":             in.Paired,
		"channels":           map[string]bool{},
		"nodes":              map[string]any{"connected": []string{}, "mdns_peers": []any{}},
		"health":             healthSnapshot(st, in.Health, now),
		"agent_alias":        agentAlias,
		"process":            processStats(),
		"check_updates":      false,
		"allow_self_upgrade": false,
		"restart_mode":       "manual",
		"restart_hint":       "zeroclaw stop, then start the daemon again (zeroclaw daemon)",
	})
}

// componentHealth is upstream's ComponentHealth.
type componentHealth struct {
	Status       string  `json:"status"`
	UpdatedAt    string  `json:"updated_at"`
	LastOK       *string `json:"last_ok"`
	LastError    *string `json:"last_error"`
	RestartCount int     `json:"restart_count"`
}

// healthSnapshot is upstream's HealthSnapshot: the components of our health method's result h when there
// is one, and always the daemon and the gateway.
func healthSnapshot(st api.StatusResult, h *api.HealthResult, now time.Time) map[string]any {
	stamp := now.Format(time.RFC3339)
	comp := func(status, errText string) componentHealth {
		c := componentHealth{Status: status, UpdatedAt: stamp}
		if status == "ok" {
			c.LastOK = &stamp
		}
		if errText != "" {
			c.LastError = &errText
		}
		return c
	}
	comps := map[string]componentHealth{"daemon": comp("ok", "")}
	if gw := st.Gateway; gw != nil {
		status := "ok"
		if gw.State != api.GatewayServed {
			status = "error"
		}
		comps["gateway"] = comp(status, gw.Error)
	}
	if h != nil {
		for name, ch := range h.Components {
			errText := ""
			if ch.Status != "ok" {
				errText = ch.Detail
			}
			comps[name] = comp(ch.Status, errText)
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

// DefaultAgent is acp.default_agent, else "default".
func DefaultAgent(cfg *config.Config) string {
	if cfg.ACP.DefaultAgent != "" {
		return cfg.ACP.DefaultAgent
	}
	return "default"
}

// ModelOf is the model the agent's provider names ("" when unknown); agent "" is the default agent.
func ModelOf(cfg *config.Config, agent string) string {
	if agent == "" {
		agent = DefaultAgent(cfg)
	}
	a, ok := cfg.Agents[agent]
	if !ok {
		return ""
	}
	family, alias, _ := strings.Cut(a.ModelProvider, ".")
	return cfg.Providers.Models[family][alias].Model
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

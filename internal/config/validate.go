package config

import (
	"fmt"
	"net/url"
	"path/filepath"
	"sort"
	"strings"

	"github.com/zeroclaw-go/zeroclaw/internal/config/tomledit"
)

// validate checks value ranges and every cross-reference, collecting all problems. d (may be nil) supplies
// line numbers. Soft problems (an unknown session backend, which falls back to sqlite) are returned as warnings.
func validate(cfg *Config, d *tomledit.Document, file string) (*ValidationError, []string) {
	v := &validator{d: d}
	var warnings []string

	if cfg.SchemaVersion < 0 || cfg.SchemaVersion > SchemaVersion {
		v.add(Path{"schema_version"}, "must be between 0 and %d, got %d", SchemaVersion, cfg.SchemaVersion)
	}
	for _, fam := range sortedKeys(cfg.Providers.Models) {
		for _, alias := range sortedKeys(cfg.Providers.Models[fam]) {
			p := cfg.Providers.Models[fam][alias]
			at := Path{"providers", "models", fam, alias}
			if p.Temperature != nil && (*p.Temperature < 0 || *p.Temperature > 2) {
				v.add(append(at, "temperature"), "must be between 0 and 2, got %g", *p.Temperature)
			}
			if p.TimeoutSecs < 0 {
				v.add(append(at, "timeout_secs"), "must not be negative")
			}
			if p.MaxTokens < 0 {
				v.add(append(at, "max_tokens"), "must not be negative")
			}
			if p.ContextWindow < 0 {
				v.add(append(at, "context_window"), "must not be negative")
			}
			if p.URI != "" {
				if u, err := url.Parse(p.URI); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
					v.add(append(at, "uri"), "must be an absolute http(s) URL")
				}
			}
		}
	}
	for _, name := range sortedKeys(cfg.Agents) {
		a := cfg.Agents[name]
		at := Path{"agents", name}
		switch fam, alias, ok := strings.Cut(a.ModelProvider, "."); {
		case a.ModelProvider == "":
			v.add(append(at, "model_provider"), "is required (\"<family>.<alias>\")")
		case !ok || alias == "":
			v.add(append(at, "model_provider"), "must be \"<family>.<alias>\", got %q", a.ModelProvider)
		default:
			if p, found := cfg.Providers.Models[fam][alias]; !found {
				v.add(append(at, "model_provider"), "provider %q is not defined under providers.models", a.ModelProvider)
			} else if fam != FamilyEcho && p.Model == "" {
				// A provider entry may name no model until an agent uses it (an upstream entry often does not).
				v.add(append(at, "model_provider"), "provider %q has no model (set providers.models.%s.%s.model)",
					a.ModelProvider, fam, alias)
			}
		}
		if a.MaxContextTokens < 0 {
			v.add(append(at, "max_context_tokens"), "must not be negative")
		}
		if a.RiskProfile == "" {
			v.add(append(at, "risk_profile"), "is required")
		} else if _, ok := cfg.RiskProfiles[a.RiskProfile]; !ok {
			v.add(append(at, "risk_profile"), "risk profile %q is not defined under risk_profiles", a.RiskProfile)
		}
	}
	for _, name := range sortedKeys(cfg.RiskProfiles) {
		r := cfg.RiskProfiles[name]
		at := Path{"risk_profiles", name}
		switch r.Level {
		case LevelReadonly, LevelSupervised, LevelFull:
		case "read_only":
			v.add(append(at, "level"), "\"read_only\" is not accepted; use \"readonly\"")
		default:
			v.add(append(at, "level"), "must be readonly, supervised or full, got %q", r.Level)
		}
		if r.ApprovalTimeoutSecs <= 0 {
			v.add(append(at, "approval_timeout_secs"), "must be positive, got %d", r.ApprovalTimeoutSecs)
		}
	}
	warnings = append(warnings, validateMemory(cfg, v)...)
	uids := map[int]string{}
	for _, name := range sortedKeys(cfg.Users) {
		u := cfg.Users[name]
		at := Path{"users", name}
		if u.UID < 0 {
			v.add(append(at, "uid"), "must not be negative")
		} else if other, dup := uids[u.UID]; dup {
			v.add(append(at, "uid"), "uid %d is already used by users.%s", u.UID, other)
		} else {
			uids[u.UID] = name
		}
		for _, pp := range u.PermissionProfiles {
			if _, ok := cfg.PermissionProfiles[pp]; !ok {
				v.add(append(at, "permission_profiles"), "permission profile %q is not defined under permission_profiles", pp)
			}
		}
	}
	for _, name := range sortedKeys(cfg.PermissionProfiles) {
		pp := cfg.PermissionProfiles[name]
		for i, g := range pp.Grants {
			if err := checkGrant(g); err != nil {
				v.add(Path{"permission_profiles", name, "grants"}, "grant %d: %v", i, err)
			}
		}
		for _, a := range pp.AllowedAgents {
			if _, ok := cfg.Agents[a]; !ok && a != "*" {
				v.add(Path{"permission_profiles", name, "allowed_agents"},
					"names %q but [agents.%s] is not configured (use \"*\" for every agent)", a, a)
			}
		}
		for i, tool := range pp.AllowedTools {
			if strings.TrimSpace(tool) == "" {
				v.add(Path{"permission_profiles", name, "allowed_tools"}, "entry %d is empty (name a tool, or \"*\" for every tool)", i)
			}
		}
	}
	switch cfg.Channels.SessionBackend {
	case "sqlite", "jsonl":
	default:
		warnings = append(warnings, fmt.Sprintf("config: channels.session_backend %q is unknown; using sqlite", cfg.Channels.SessionBackend))
	}
	if cfg.Gateway.Port < 0 || cfg.Gateway.Port > 65535 {
		v.add(Path{"gateway", "port"}, "must be between 0 and 65535, got %d", cfg.Gateway.Port)
	}
	validateGateway(cfg, v)
	switch cfg.Observability.LogPersistence {
	case "rolling", "rotating", "full", "none":
	default:
		v.add(Path{"observability", "log_persistence"}, "must be rolling, rotating, full or none, got %q", cfg.Observability.LogPersistence)
	}
	for name, val := range map[string]int64{"max_entries": int64(cfg.Observability.MaxEntries),
		"log_persistence_max_entries":         int64(cfg.Observability.LogPersistenceMaxEntries),
		"log_persistence_max_bytes":           cfg.Observability.LogPersistenceMaxBytes,
		"log_persistence_retention_max_files": int64(cfg.Observability.LogPersistenceRetentionMax)} {
		if val < 0 {
			v.add(Path{"observability", name}, "must not be negative")
		}
	}
	if cfg.Cost.DailyLimitUSD < 0 {
		v.add(Path{"cost", "daily_limit_usd"}, "must not be negative")
	}
	if cfg.Cost.MonthlyLimitUSD < 0 {
		v.add(Path{"cost", "monthly_limit_usd"}, "must not be negative")
	}
	if cfg.Cost.WarnAtPercent < 0 || cfg.Cost.WarnAtPercent > 100 {
		v.add(Path{"cost", "warn_at_percent"}, "must be between 0 and 100")
	}
	for name, val := range map[string]int{
		"max_local_connections": cfg.RPC.MaxLocalConnections, "max_frame_bytes": cfg.RPC.MaxFrameBytes,
		"initialize_timeout_ms": cfg.RPC.InitializeTimeoutMS, "frame_timeout_ms": cfg.RPC.FrameTimeoutMS,
		"write_timeout_ms": cfg.RPC.WriteTimeoutMS, "max_inflight_frame_bytes": cfg.RPC.MaxInflightFrameBytes,
	} {
		if val <= 0 {
			v.add(Path{"rpc", name}, "must be positive, got %d", val)
		}
	}
	if sv := cfg.RPC.ServerVersion; sv != "" && !releaseVersion().MatchString(sv) {
		v.add(Path{"rpc", "server_version"}, "must be a release version such as 0.8.4, got %q", sv)
	}
	for _, l := range []struct {
		name       string
		val, upper int
	}{
		{"max_answer_bytes", cfg.Limits.MaxAnswerBytes, MaxMaxAnswerBytes},
		{"max_tool_args_bytes", cfg.Limits.MaxToolArgsBytes, MaxMaxToolArgsBytes},
		{"max_tool_calls", cfg.Limits.MaxToolCalls, MaxMaxToolCalls},
		{"max_tool_rounds", cfg.Limits.MaxToolRounds, MaxMaxToolRounds},
	} {
		if l.val < 1 || l.val > l.upper {
			v.add(Path{"limits", l.name}, "must be between 1 and %d, got %d", l.upper, l.val)
		}
	}
	if a := cfg.ACP.DefaultAgent; a != "" {
		if _, ok := cfg.Agents[a]; !ok {
			v.add(Path{"acp", "default_agent"}, "agent %q is not defined under agents", a)
		}
	}
	if n := cfg.ACP.MaxSessions; n < 1 || n > MaxACPMaxSessions {
		v.add(Path{"acp", "max_sessions"}, "must be between 1 and %d, got %d", MaxACPMaxSessions, n)
	}
	if n := cfg.ACP.SessionTimeoutSecs; n < 1 {
		v.add(Path{"acp", "session_timeout_secs"}, "must be positive, got %d", n)
	}
	for i, r := range cfg.ACP.AllowedRoots {
		if r = strings.TrimSpace(r); r == "" || !(filepath.IsAbs(r) || r == "~" || strings.HasPrefix(r, "~/")) {
			v.add(Path{"acp", "allowed_roots"}, "entry %d (%q) must be an absolute directory", i, cfg.ACP.AllowedRoots[i])
		}
	}
	for name, pp := range cfg.PermissionProfiles {
		switch pp.MaxRisk {
		case "", "low", "medium", "high":
		default:
			v.add(Path{"permission_profiles", name, "max_risk"}, "must be low, medium or high, got %q", pp.MaxRisk)
		}
	}
	warnings = append(warnings, validateSkills(cfg, v, file)...)
	warnings = append(warnings, validateMCP(cfg, v)...)
	warnings = append(warnings, validateSOP(cfg, v)...)
	validateHeartbeat(cfg, v)
	if len(v.problems) == 0 {
		return nil, warnings
	}
	sort.SliceStable(v.problems, func(i, j int) bool { return v.problems[i].Path < v.problems[j].Path })
	return &ValidationError{File: file, Problems: v.problems}, warnings
}

type validator struct {
	d        *tomledit.Document
	problems []Problem
}

func (v *validator) add(p Path, format string, args ...any) {
	v.problems = append(v.problems, Problem{Path: p.String(), Message: fmt.Sprintf(format, args...), Line: v.d.LineFor(p)})
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

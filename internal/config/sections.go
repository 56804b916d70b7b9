package config

import (
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/zeroclaw-go/zeroclaw/internal/api"
)

// sectionInfo describes one top-level section of our schema for config/sections and config/templates.
type sectionInfo struct {
	key   string
	group string // upstream's display groups: Foundation, Agent, Network, Storage, Operations, Integrations
	help  string
	// quickstart sections are the ones a new install must fill to run a turn, in this order. shape is
	// upstream's editor shape (sections.rs), given where our section is the same map: the quickstart sections
	// and the operator-named maps skill_bundles and cron (the dashboard lists and opens their entries by it).
	quickstart bool
	shape      string
	signal     func(*Config) bool // quickstart sections: whether something is configured
}

var sectionTable = []sectionInfo{
	{key: "providers.models", group: "Foundation", quickstart: true, shape: api.ShapeTypedFamilyMap,
		help: "Model endpoints, as providers.models.<family>.<alias> with family one of echo, openai, ollama, " +
			"anthropic. Several aliases per family can coexist (openai.work, openai.home); agents name one in " +
			"model_provider.",
		signal: func(c *Config) bool { return firstProvider(c) != "" }},
	{key: "risk_profiles", group: "Foundation", quickstart: true, shape: api.ShapeOneTierAliasMap,
		help: "Named tool policies: the level (readonly, supervised, full), workspace confinement, tools allowed " +
			"or always asked for, and the approval timeout. Agents name one in risk_profile.",
		signal: func(c *Config) bool { return len(c.RiskProfiles) > 0 }},
	{key: "agents", group: "Foundation", quickstart: true, shape: api.ShapeOneTierAliasMap,
		help: "An agent binds a model provider, a risk profile, a workspace and a system prompt; sessions run " +
			"on one agent.",
		signal: func(c *Config) bool { return len(c.Agents) > 0 }},
	{key: "acp", group: "Integrations", help: "The ACP server for editors: which agent a new ACP session uses."},
	{key: "channels", group: "Storage", help: "Where chat sessions are stored (sqlite, or jsonl files), and the chat channels " +
		"(channels.telegram.<alias>) the agents answer on."},
	{key: "peer_groups", group: "Integrations", shape: api.ShapeOneTierAliasMap, help: "Who may talk to the agents on a channel " +
		"(peer_groups.<name>): the channel, the agents and the platform user ids allowed (empty: nobody)."},
	{key: "cost", group: "Operations", help: "Cost tracking: daily and monthly limits, the warning threshold " +
		"and per-model prices (cost.prices.<model>, USD per million tokens)."},
	{key: "cron", group: "Operations", shape: api.ShapeOneTierAliasMap, help: "Jobs declared in config (cron.<id>): a schedule and a shell command " +
		"or an agent prompt, kept in jobs.db at start and on reload."},
	{key: "gateway", group: "Network", help: "The HTTP gateway: address, pairing and remote administration."},
	{key: "wss", group: "Network", help: "RPC over TLS WebSocket for remote TUIs: address, certificate and key."},
	{key: "limits", group: "Agent", help: "What one turn may take from the model: answer bytes, tool " +
		"arguments, tool calls and tool rounds."},
	{key: "mcp", group: "Integrations", help: "MCP servers the agents use as tools ([[mcp.servers]]: stdio, " +
		"http or sse), deferred loading, and whether MCP is on at all."},
	{key: "mcp_bundles", group: "Integrations", help: "Named lists of MCP servers; an agent lists bundles in " +
		"mcp_bundles to use their servers (none listed: no MCP server)."},
	{key: "runtime_profiles", group: "Agent", shape: api.ShapeOneTierAliasMap, help: "Named runtime profiles an agent " +
		"names in runtime_profile; their tool_filter_groups choose which MCP tools reach the model in each turn."},
	{key: "memory", group: "Storage", help: "What the agents remember across sessions: the backend (sqlite, " +
		"postgres.<alias>, markdown, none), auto-save, retention and the relevance floor of recalled memories."},
	{key: "storage", group: "Storage", help: "The data dir's disk budget (max_disk_bytes: prunable data is deleted " +
		"oldest first past it, every deletion recorded) and named database connections, such as " +
		"[storage.postgres.<alias>] db_url for a memory shared by several hosts."},
	{key: "observability", group: "Operations", help: "Log persistence and how many entries are kept."},
	{key: "onboard_state", group: "Operations", shape: api.ShapeDirectForm, help: "Quickstart lifecycle state: " +
		"quickstart_completed turns true after a successful quickstart (zeroclaw quickstart, or a client's Quickstart)."},
	{key: "permission_profiles", group: "Storage", help: "Named lists of grants (resource:verb, " +
		"config:update:<pattern>) given to users."},
	{key: "reliability", group: "Operations", help: "The scheduler's tick interval and the retries of failed jobs."},
	{key: "rpc", group: "Network", help: "Limits of the local JSON-RPC socket: connections, frame size and timeouts."},
	{key: "heartbeat", group: "Operations", help: "The heartbeat: the heartbeat agent's HEARTBEAT.md tasks run " +
		"every interval (two-phase, adaptive), the dead-man alert, the run history kept."},
	{key: "scheduler", group: "Operations", help: "Scheduled jobs: on or off, concurrency, catch-up after downtime " +
		"and the run history kept per job."},
	{key: "secrets", group: "Storage", help: "Whether secret fields are stored encrypted (enc2:) in config.toml."},
	{key: "security", group: "Storage", help: "Whether the daemon's own uid is trusted as the shared operator."},
	{key: "skills", group: "Agent", help: "How skills reach the system prompt (full or compact) and whether " +
		"skills that ship scripts are loaded."},
	{key: "skill_bundles", group: "Agent", shape: api.ShapeOneTierAliasMap, help: "Named directories of skills under <install>/shared/ " +
		"(default shared/skills/<alias>), with include and exclude lists; agents opt in with skill_bundles."},
	{key: "sop", group: "Operations", help: "Standard operating procedures: the SOPs directory (setting it turns " +
		"the runtime on), run limits, approval gates and timeouts, and the trust rules for trigger payloads."},
	{key: "users", group: "Storage", help: "Local users (by uid) and the permission profiles they hold."},
}

// templateHelp describes the map-keyed sections that are not top-level sections.
var templateHelp = map[string]string{
	"storage.postgres":      "A PostgreSQL connection (db_url, schema, table) that memory.backend = \"postgres.<alias>\" names.",
	"cost.prices":           "A model's price in USD per million input and output tokens, keyed by the model name.",
	"channels.mqtt":         "An MQTT broker whose messages feed SOP mqtt triggers: broker_url, client_id, credentials, QoS.",
	"channels.telegram":     "A Telegram bot (Bot API long polling): bot_token, api_base_url, approval_timeout_secs.",
	"channels.discord":      "A Discord bot (Gateway WebSocket v10 + REST): bot_token, guild_ids, channel_ids, mention_only, approval_timeout_secs.",
	"channels.irc":          "An IRC server connection: server, port, nickname, channels, passwords (server, NickServ, SASL).",
	"channels.email":        "A mailbox read over IMAP IDLE and answered over SMTP: imap_host, smtp_host, username, password, from_address.",
	"channels.matrix":       "A Matrix account (client-server /sync, no E2EE): homeserver, access_token or user_id + password, allowed_rooms.",
	"channels.slack":        "A Slack app over Socket Mode and the Web API: bot_token, app_token, channel_ids, thread_replies, mention_only.",
	"channels.filesystem":   "Directories whose changes feed SOP filesystem triggers, and below which such triggers may watch.",
	"sop.approval.groups":   "A group of SOP approvers (members), named by a policy's required_group.",
	"sop.approval.policies": "An approval policy a SOP step names (policy:): the approver group, the quorum and the routes of its notices.",
}

// Sections answers config/sections for cfg: the quickstart sections first, in order, then the others by key.
// A quickstart section is completed (and ready) when something is configured in it.
func Sections(cfg *Config) []api.ConfigSectionEntry {
	out := []api.ConfigSectionEntry{}
	for _, s := range sectionTable {
		e := api.ConfigSectionEntry{Key: s.key, Label: sectionLabel(s.key), Help: s.help, Group: s.group,
			IsQuickstart: s.quickstart, Shape: s.shape}
		_, err := section(s.key)
		e.HasPicker = err == nil
		if s.signal != nil {
			e.Completed = s.signal(cfg)
			e.Ready = e.Completed
		}
		if s.key == "providers.models" {
			e.CostCategory = "models"
		}
		out = append(out, e)
	}
	return out
}

// sectionLabel humanizes a section key as upstream does ("risk_profiles" ⇒ "Risk profiles").
func sectionLabel(key string) string {
	if key == "providers.models" {
		return "Model providers"
	}
	s := strings.NewReplacer("_", " ", "-", " ", ".", " ").Replace(key)
	return strings.ToUpper(s[:1]) + s[1:]
}

// Status answers config/status: the quickstart sections with nothing configured.
func Status(cfg *Config) api.ConfigStatusResult {
	missing := []string{}
	for _, s := range sectionTable {
		if s.quickstart && !s.signal(cfg) {
			missing = append(missing, s.key)
		}
	}
	res := api.ConfigStatusResult{NeedsQuickstart: len(missing) > 0, Missing: missing, Reason: "all sections complete"}
	if res.NeedsQuickstart {
		res.Reason = fmt.Sprintf("%d section(s) incomplete", len(missing))
	}
	return res
}

// Templates answers config/templates: every map-keyed section of the schema (where config/map-key-create
// adds entries), in schema order, with the Go type of its entries. providers.models (whose keys are families) is
// followed by one entry per family, where the aliases are created.
func Templates() []api.ConfigTemplateEntry {
	var out []api.ConfigTemplateEntry
	var walk func(t reflect.Type, p Path)
	walk = func(t reflect.Type, p Path) {
		for i := range t.NumField() {
			f := t.Field(i)
			fp := slices.Concat(p, Path{tagName(f)})
			switch {
			case f.Type.Kind() == reflect.Struct:
				walk(f.Type, fp)
			case f.Type.Kind() == reflect.Map && f.Type.Elem().Kind() == reflect.Map:
				out = append(out, template(fp, f.Type.Elem().Elem()))
				for _, fam := range strings.Split(f.Tag.Get("keys"), "|") {
					out = append(out, template(slices.Concat(fp, Path{fam}), f.Type.Elem().Elem()))
				}
			case f.Type.Kind() == reflect.Map && f.Type.Elem().Kind() == reflect.Struct:
				out = append(out, template(fp, f.Type.Elem()))
			}
		}
	}
	walk(configType, nil)
	return out
}

func template(p Path, elem reflect.Type) api.ConfigTemplateEntry {
	key := p.String()
	help := templateHelp[key]
	if key == "providers.models" {
		help = "Provider families (echo, openai, ollama, anthropic); each holds aliased model endpoints."
	}
	if len(p) == 3 && p[0] == "providers" {
		help = fmt.Sprintf("Model endpoints of the %s family (providers.models.%s.<alias>): model, uri, api_key, temperature, timeouts.", p[2], p[2])
	}
	for _, s := range sectionTable {
		if s.key == key && s.key != "providers.models" {
			help = s.help
		}
	}
	return api.ConfigTemplateEntry{Path: key, Kind: "map", ValueType: elem.Name(), Description: help}
}

// aliasSources are upstream's alias namespaces (and ours, permission_profiles) with what they resolve to in our
// schema. Namespaces we have no section for resolve to nothing.
var aliasSources = map[string]func(*Config) []string{
	"model_providers": func(c *Config) []string {
		var out []string
		for _, fam := range sortedKeys(c.Providers.Models) {
			for _, alias := range sortedKeys(c.Providers.Models[fam]) {
				out = append(out, fam+"."+alias)
			}
		}
		return out
	},
	"risk_profiles":           func(c *Config) []string { return sortedKeys(c.RiskProfiles) },
	"agents":                  func(c *Config) []string { return sortedKeys(c.Agents) },
	"permission_profiles":     func(c *Config) []string { return sortedKeys(c.PermissionProfiles) },
	"channels":                nil,
	"tts_providers":           nil,
	"transcription_providers": nil,
	"runtime_profiles":        func(c *Config) []string { return sortedKeys(c.RuntimeProfiles) },
	"skill_bundles":           func(c *Config) []string { return sortedKeys(c.SkillBundles) },
	"knowledge_bundles":       nil,
	"mcp_bundles":             func(c *Config) []string { return sortedKeys(c.MCPBundles) },
}

// ResolveAliasSource returns the values a reference into the namespace source may take in cfg, sorted. An
// unknown namespace is ErrInvalidValue.
func ResolveAliasSource(cfg *Config, source string) ([]string, error) {
	fn, ok := aliasSources[source]
	if !ok {
		return nil, fmt.Errorf("%w: unknown alias source %q (one of %s)", ErrInvalidValue, source, strings.Join(sortedKeys(aliasSources), ", "))
	}
	values := []string{}
	if fn != nil {
		values = append(values, fn(cfg)...)
	}
	return values, nil
}

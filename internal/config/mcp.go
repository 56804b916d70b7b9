package config

import (
	"fmt"
	"net/url"
	"path/filepath"
	"strings"
)

// MCP transports ([[mcp.servers]] transport), upstream's wire names.
const (
	MCPStdio = "stdio"
	MCPHTTP  = "http"
	MCPSSE   = "sse"
)

// MCP server start modes ([[mcp.servers]] start).
const (
	MCPStartLazy  = "lazy"  // started when a turn of an agent granted the server is first built
	MCPStartEager = "eager" // started with the daemon
)

// Defaults and bounds of [[mcp.servers]].
const (
	DefaultMCPToolTimeoutSecs    = 180
	MaxMCPToolTimeoutSecs        = 600
	DefaultMCPStartupTimeoutSecs = 30
	MaxMCPStartupTimeoutSecs     = 600
)

// MCPConfig is [mcp]: the MCP servers the agents may use (upstream/mcp.md §1).
type MCPConfig struct {
	Enabled         bool              `toml:"enabled" desc:"Connect to MCP servers at all; off: the server definitions are kept and none is started."`
	DeferredLoading bool              `toml:"deferred_loading" desc:"Put only MCP tool names in the prompt; the model fetches their schemas with tool_search."`
	Servers         []MCPServerConfig `toml:"servers" desc:"The MCP servers ([[mcp.servers]]), each named; agents reach them through mcp_bundles."`
	// Ours: the total bytes of MCP tool schemas one model request may carry.
	MaxToolSchemaBytes int `toml:"max_tool_schema_bytes" note:"0: 262144" desc:"Total bytes of MCP tool names, descriptions and schemas sent with one model request; the tools past it are left out of that turn (logged)."`
}

// DefaultMCPMaxToolSchemaBytes is max_tool_schema_bytes when unset: 256 KiB, some 200 typical tools.
const DefaultMCPMaxToolSchemaBytes = 256 << 10

// ToolSchemaBudget is max_tool_schema_bytes with its default.
func (m MCPConfig) ToolSchemaBudget() int {
	if m.MaxToolSchemaBytes <= 0 {
		return DefaultMCPMaxToolSchemaBytes
	}
	return m.MaxToolSchemaBytes
}

// Tool filter group modes (upstream's ToolFilterGroupMode).
const (
	ToolFilterAlways  = "always"  // the group's tools are in every turn
	ToolFilterDynamic = "dynamic" // only in a turn whose user message holds one of the keywords (the default)
)

// RuntimeProfile is [runtime_profiles.<alias>]. Of upstream's keys only tool_filter_groups is read; the others
// are reported as unknown keys.
type RuntimeProfile struct {
	ToolFilterGroups []ToolFilterGroup `toml:"tool_filter_groups" desc:"Which MCP tools reach the model: none listed, all; otherwise only those an always group or a dynamic group whose keyword is in the user's message matches."`
}

// ToolFilterGroup is one [[runtime_profiles.<alias>.tool_filter_groups]] entry, as upstream reads it: tools are
// MCP tool names (<server>__<tool>) with at most one * wildcard; keywords are matched case-insensitively as
// substrings of the turn's user message (dynamic mode only).
type ToolFilterGroup struct {
	Mode     string   `toml:"mode" enum:"always|dynamic" note:"empty: dynamic" desc:"always: in every turn; dynamic: in a turn whose user message contains one of the keywords."`
	Tools    []string `toml:"tools" desc:"MCP tool names the group covers (<server>__<tool>, one * wildcard allowed)."`
	Keywords []string `toml:"keywords" desc:"dynamic: words (case-insensitive substrings of the user message) that bring the group in."`
}

// ToolFilterGroupsForAgent returns the tool_filter_groups of the agent's runtime profile (none: no filter).
func (c *Config) ToolFilterGroupsForAgent(alias string) []ToolFilterGroup {
	a, ok := c.Agents[alias]
	if !ok || a.RuntimeProfile == "" {
		return nil
	}
	return c.RuntimeProfiles[a.RuntimeProfile].ToolFilterGroups
}

// MCPServerConfig is one [[mcp.servers]] entry. Env and Headers are secrets.
type MCPServerConfig struct {
	Name            string            `toml:"name" desc:"The server's name, unique (case-insensitively), the prefix of its tools (<name>__<tool>)."`
	Transport       string            `toml:"transport" enum:"stdio|http|sse" desc:"stdio: a child process; http: streamable HTTP; sse: the legacy SSE transport."`
	Command         string            `toml:"command" desc:"stdio: the program to run."`
	Args            []string          `toml:"args" desc:"stdio: its arguments."`
	Env             map[string]string `toml:"env" desc:"stdio: variables added to the daemon's environment for the child (secrets)."`
	URL             string            `toml:"url" desc:"http/sse: the server's endpoint (http or https)."`
	Headers         map[string]string `toml:"headers" desc:"http/sse: headers sent with every request (secrets)."`
	ToolTimeoutSecs int               `toml:"tool_timeout_secs" note:"0: 180" desc:"Seconds one tool call may take (1 to 600)."`
	PinnedResources []string          `toml:"pinned_resources" desc:"Resource URIs read when a turn is built and shown to the model as untrusted context."`
	TLSCACertPath   string            `toml:"tls_ca_cert_path" desc:"http/sse: absolute path of a PEM CA certificate added to the trusted roots (forces https)."`
	// Ours: upstream connects at every agent build and has no per-server risk.
	Start              string `toml:"start" enum:"lazy|eager" note:"empty: lazy" desc:"lazy: started when a turn first needs it; eager: started with the daemon."`
	StartupTimeoutSecs int    `toml:"startup_timeout_secs" note:"0: 30" desc:"Seconds the server may take to start and answer initialize and tools/list."`
	Risk               string `toml:"risk" enum:"low|medium|high" note:"empty: medium" desc:"Risk class of the server's tools for the risk profiles (medium: asked under supervised)."`
}

// TransportOrDefault is the server's transport, stdio when unset.
func (s MCPServerConfig) TransportOrDefault() string {
	if t := strings.ToLower(strings.TrimSpace(s.Transport)); t != "" {
		return t
	}
	return MCPStdio
}

// ToolTimeout is tool_timeout_secs with its default, clamped to the maximum.
func (s MCPServerConfig) ToolTimeout() int {
	switch {
	case s.ToolTimeoutSecs <= 0:
		return DefaultMCPToolTimeoutSecs
	case s.ToolTimeoutSecs > MaxMCPToolTimeoutSecs:
		return MaxMCPToolTimeoutSecs
	}
	return s.ToolTimeoutSecs
}

// StartupTimeout is startup_timeout_secs with its default, clamped to the maximum.
func (s MCPServerConfig) StartupTimeout() int {
	switch {
	case s.StartupTimeoutSecs <= 0:
		return DefaultMCPStartupTimeoutSecs
	case s.StartupTimeoutSecs > MaxMCPStartupTimeoutSecs:
		return MaxMCPStartupTimeoutSecs
	}
	return s.StartupTimeoutSecs
}

// MCPBundleConfig is mcp_bundles.<alias>: the servers the agents that list the bundle may use.
type MCPBundleConfig struct {
	Servers []string `toml:"servers" desc:"Names of the [[mcp.servers]] the bundle grants."`
	Exclude []string `toml:"exclude" desc:"Server names removed; an exclude in any bundle of an agent wins."`
}

// MCPServer returns the [[mcp.servers]] entry called name (case-insensitively).
func (c *Config) MCPServer(name string) (MCPServerConfig, bool) {
	for _, s := range c.MCP.Servers {
		if strings.EqualFold(strings.TrimSpace(s.Name), strings.TrimSpace(name)) {
			return s, true
		}
	}
	return MCPServerConfig{}, false
}

// MCPServersForAgent returns the servers agent alias is granted, as upstream resolves them: the union of its
// bundles' servers in first-seen order, duplicates dropped, minus every exclude of any of its bundles; unknown
// bundles and names with no [[mcp.servers]] entry are skipped. No bundle (or an unknown agent): none.
func (c *Config) MCPServersForAgent(alias string) []MCPServerConfig {
	a, ok := c.Agents[alias]
	if !ok {
		return nil
	}
	return c.MCPServersForBundles(a.MCPBundles)
}

// MCPServersForBundles resolves a list of bundle aliases (see MCPServersForAgent).
func (c *Config) MCPServersForBundles(bundles []string) []MCPServerConfig {
	excluded := map[string]bool{}
	for _, b := range bundles {
		for _, x := range c.MCPBundles[b].Exclude {
			excluded[strings.ToLower(strings.TrimSpace(x))] = true
		}
	}
	var out []MCPServerConfig
	seen := map[string]bool{}
	for _, b := range bundles {
		bundle, ok := c.MCPBundles[b]
		if !ok {
			continue
		}
		for _, name := range bundle.Servers {
			key := strings.ToLower(strings.TrimSpace(name))
			if seen[key] || excluded[key] {
				continue
			}
			seen[key] = true
			if s, ok := c.MCPServer(name); ok {
				out = append(out, s)
			}
		}
	}
	return out
}

// validateMCP checks [mcp], [mcp_bundles] and the agents' mcp_bundles with upstream's messages
// (validate_mcp_config). Unknown bundles and server names are warnings: they are skipped when resolved.
func validateMCP(cfg *Config, v *validator) []string {
	var warnings []string
	seen := map[string]bool{}
	for i, s := range cfg.MCP.Servers {
		at := func(field string) Path { return Path{"mcp", "servers", fmt.Sprint(i), field} }
		name := strings.TrimSpace(s.Name)
		switch {
		case name == "":
			v.add(at("name"), "mcp.servers[%d].name must not be empty", i)
		case seen[strings.ToLower(name)]:
			v.add(at("name"), "mcp.servers contains duplicate name: %s", name)
		case strings.Contains(name, "__"):
			v.add(at("name"), "mcp.servers[%d].name %q must not contain \"__\" (the separator of <server>__<tool> names)", i, name)
		}
		seen[strings.ToLower(name)] = true
		if s.ToolTimeoutSecs < 0 {
			v.add(at("tool_timeout_secs"), "mcp.servers[%d].tool_timeout_secs must be greater than 0", i)
		} else if s.ToolTimeoutSecs > MaxMCPToolTimeoutSecs {
			v.add(at("tool_timeout_secs"), "mcp.servers[%d].tool_timeout_secs exceeds max %d", i, MaxMCPToolTimeoutSecs)
		}
		if s.StartupTimeoutSecs < 0 || s.StartupTimeoutSecs > MaxMCPStartupTimeoutSecs {
			v.add(at("startup_timeout_secs"), "mcp.servers[%d].startup_timeout_secs must be 1 to %d", i, MaxMCPStartupTimeoutSecs)
		}
		switch s.Start {
		case "", MCPStartLazy, MCPStartEager:
		default:
			v.add(at("start"), "mcp.servers[%d].start must be lazy or eager, got %q", i, s.Start)
		}
		switch s.Risk {
		case "", "low", "medium", "high":
		default:
			v.add(at("risk"), "mcp.servers[%d].risk must be low, medium or high, got %q", i, s.Risk)
		}
		switch t := s.TransportOrDefault(); t {
		case MCPStdio:
			if strings.TrimSpace(s.Command) == "" {
				v.add(at("command"), "mcp.servers[%d] with transport=stdio requires non-empty command", i)
			}
		case MCPHTTP, MCPSSE:
			if strings.TrimSpace(s.URL) == "" {
				v.add(at("url"), "mcp.servers[%d] with transport=%s requires url", i, t)
				break
			}
			u, err := url.Parse(strings.TrimSpace(s.URL))
			if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
				v.add(at("url"), "mcp.servers[%d].url must use http/https", i)
			} else if s.TLSCACertPath != "" && u.Scheme != "https" {
				v.add(at("url"), "mcp.servers[%d].url must use https when tls_ca_cert_path is set", i)
			}
			if s.TLSCACertPath != "" && !filepath.IsAbs(s.TLSCACertPath) {
				v.add(at("tls_ca_cert_path"), "mcp.servers[%d].tls_ca_cert_path must be an absolute path", i)
			}
		default:
			v.add(at("transport"), "mcp.servers[%d].transport must be stdio, http or sse, got %q", i, s.Transport)
		}
	}
	for _, alias := range sortedKeys(cfg.MCPBundles) {
		for _, name := range cfg.MCPBundles[alias].Servers {
			if _, ok := cfg.MCPServer(name); !ok {
				warnings = append(warnings, fmt.Sprintf("config: mcp_bundles.%s.servers names %q, which is not defined under [[mcp.servers]]: skipped", alias, name))
			}
		}
	}
	for _, name := range sortedKeys(cfg.Agents) {
		for _, b := range cfg.Agents[name].MCPBundles {
			if _, ok := cfg.MCPBundles[b]; !ok {
				warnings = append(warnings, fmt.Sprintf("config: agents.%s.mcp_bundles names %q, which is not defined under [mcp_bundles]: skipped", name, b))
			}
		}
	}
	if len(cfg.MCP.Servers) > 0 {
		granted := false
		for _, a := range cfg.Agents {
			granted = granted || len(a.MCPBundles) > 0
		}
		if !granted {
			warnings = append(warnings, "config: [[mcp.servers]] are defined but no agent lists an mcp_bundles entry: no agent can use them (deny by default). Add [mcp_bundles.<name>] servers = [...] and agents.<alias>.mcp_bundles = [\"<name>\"]")
		}
	}
	return warnings
}

package config

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/zeroclaw-go/zeroclaw/internal/secrets"
)

const mcpHead = `schema_version = 3

[providers.models.echo.default]
model = "echo"

[risk_profiles.supervised]
level = "supervised"

[agents.default]
model_provider = "echo.default"
risk_profile = "supervised"
mcp_bundles = ["dev", "ghost"]

[agents.other]
model_provider = "echo.default"
risk_profile = "supervised"
`

// Upstream's [[mcp.servers]] array tables (with a sub-table and inline tables), its bundles and the agents'
// mcp_bundles decode as upstream reads them, and the bundle resolution is upstream's: union in first-seen
// order, excludes win, unknown names skipped, no bundle means no server.
func TestMCPConfigDecodesUpstreamShape(t *testing.T) {
	raw := mcpHead + `
[mcp]
deferred_loading = true

[[mcp.servers]]
name = "fs"
command = "npx"
args = ["-y", "@modelcontextprotocol/server-filesystem", "/tmp"]
tool_timeout_secs = 20

[mcp.servers.env]
TOKEN = "s3cret-token"

[[mcp.servers]]
name = "web"
transport = "http"
url = "https://mcp.example.com/mcp"
headers = { Authorization = "Bearer abc" }
risk = "low"

[[mcp.servers]]
name = "gone"
command = "/bin/true"

[mcp_bundles.dev]
servers = ["web", "fs", "gone", "nosuch", "fs"]

[mcp_bundles.deny]
servers = []
exclude = ["GONE"]
`
	cfg, warnings, err := LoadBytes("/x/config.toml", []byte(raw+"\n[agents.third]\nmodel_provider = \"echo.default\"\nrisk_profile = \"supervised\"\nmcp_bundles = [\"dev\", \"deny\"]\n"), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !cfg.MCP.Enabled || !cfg.MCP.DeferredLoading || len(cfg.MCP.Servers) != 3 {
		t.Fatalf("mcp = %+v", cfg.MCP)
	}
	fs := cfg.MCP.Servers[0]
	if fs.Name != "fs" || fs.Command != "npx" || !slices.Equal(fs.Args, []string{"-y", "@modelcontextprotocol/server-filesystem", "/tmp"}) ||
		fs.Env["TOKEN"] != "s3cret-token" || fs.ToolTimeout() != 20 || fs.TransportOrDefault() != MCPStdio || fs.StartupTimeout() != 30 {
		t.Fatalf("fs = %+v", fs)
	}
	web := cfg.MCP.Servers[1]
	if web.TransportOrDefault() != MCPHTTP || web.Headers["Authorization"] != "Bearer abc" || web.ToolTimeout() != DefaultMCPToolTimeoutSecs {
		t.Fatalf("web = %+v", web)
	}
	names := func(ss []MCPServerConfig) (out []string) {
		for _, s := range ss {
			out = append(out, s.Name)
		}
		return out
	}
	if got := names(cfg.MCPServersForAgent("default")); !slices.Equal(got, []string{"web", "fs", "gone"}) {
		t.Fatalf("default's servers = %v", got)
	}
	if got := names(cfg.MCPServersForAgent("third")); !slices.Equal(got, []string{"web", "fs"}) {
		t.Fatalf("third's servers (deny wins across bundles) = %v", got)
	}
	if got := cfg.MCPServersForAgent("other"); len(got) != 0 {
		t.Fatalf("an agent with no bundle gets %v, want none (deny by default)", names(got))
	}
	for _, want := range []string{`mcp_bundles.dev.servers names "nosuch"`, `agents.default.mcp_bundles names "ghost"`} {
		if !slices.ContainsFunc(warnings, func(w string) bool { return strings.Contains(w, want) }) {
			t.Errorf("no warning %q in %q", want, warnings)
		}
	}
	// Secrets are masked in every view of the config.
	v, err := json.Marshal(view(reflect.ValueOf(cfg).Elem(), false))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(v), "s3cret-token") || strings.Contains(string(v), "Bearer abc") {
		t.Fatalf("view leaks a secret: %s", v)
	}
}

// The inline form (servers = [{...}] under [mcp]) decodes too, and [mcp] enabled defaults to true.
func TestMCPConfigInlineArray(t *testing.T) {
	cfg, _, err := LoadBytes("/x/config.toml", []byte(mcpHead+`
[mcp]
servers = [{ name = "a", command = "srv", env = { K = "v" } }, { name = "b", transport = "sse", url = "http://127.0.0.1:1/sse" }]
`), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.MCP.Servers) != 2 || cfg.MCP.Servers[0].Env["K"] != "v" || cfg.MCP.Servers[1].TransportOrDefault() != MCPSSE || !cfg.MCP.Enabled {
		t.Fatalf("mcp = %+v", cfg.MCP)
	}
}

// Servers with no agent granted any bundle: a clear warning (upstream zeroclaw#4848: silently zero tools).
func TestMCPConfigWarnsWhenNoAgentIsGranted(t *testing.T) {
	head := strings.Replace(mcpHead, "mcp_bundles = [\"dev\", \"ghost\"]\n", "", 1)
	_, warnings, err := LoadBytes("/x/config.toml", []byte(head+"\n[[mcp.servers]]\nname = \"a\"\ncommand = \"x\"\n"), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(warnings, func(w string) bool { return strings.Contains(w, "no agent lists an mcp_bundles entry") }) {
		t.Fatalf("warnings = %q", warnings)
	}
}

// Bad server entries get upstream's validation messages, and an unknown key inside an entry is an error that
// names it (at the entry's line), not a silently dropped setting.
func TestMCPConfigValidation(t *testing.T) {
	cases := []struct{ body, want string }{
		{"[[mcp.servers]]\nname = \" \"\ncommand = \"x\"\n", "mcp.servers[0].name must not be empty"},
		{"[[mcp.servers]]\nname = \"A\"\ncommand = \"x\"\n[[mcp.servers]]\nname = \"a\"\ncommand = \"y\"\n", "mcp.servers contains duplicate name: a"},
		{"[[mcp.servers]]\nname = \"a__b\"\ncommand = \"x\"\n", `must not contain "__"`},
		{"[[mcp.servers]]\nname = \"a\"\n", "mcp.servers[0] with transport=stdio requires non-empty command"},
		{"[[mcp.servers]]\nname = \"a\"\ntransport = \"http\"\n", "mcp.servers[0] with transport=http requires url"},
		{"[[mcp.servers]]\nname = \"a\"\ntransport = \"sse\"\nurl = \"ftp://x/\"\n", "mcp.servers[0].url must use http/https"},
		{"[[mcp.servers]]\nname = \"a\"\ncommand = \"x\"\ntool_timeout_secs = 601\n", "mcp.servers[0].tool_timeout_secs exceeds max 600"},
		{"[[mcp.servers]]\nname = \"a\"\ncommand = \"x\"\ntool_timeout_secs = -1\n", "tool_timeout_secs must be greater than 0"},
		{"[[mcp.servers]]\nname = \"a\"\ntransport = \"http\"\nurl = \"http://h/\"\ntls_ca_cert_path = \"rel.pem\"\n", "must use https when tls_ca_cert_path is set"},
		{"[[mcp.servers]]\nname = \"a\"\ncommand = \"x\"\nrisk = \"huge\"\n", "risk must be low, medium or high"},
		{"[[mcp.servers]]\nname = \"a\"\ntransport = \"carrier-pigeon\"\n", "transport must be stdio, http or sse"},
		{"[[mcp.servers]]\nname = \"a\"\ncommand = \"x\"\ncolour = \"red\"\n", `unknown key "colour"`},
		{"[[mcp.servers]]\nname = \"a\"\ncommand = 7\n", "command"},
	}
	for _, c := range cases {
		_, _, err := LoadBytes("/x/config.toml", []byte(mcpHead+"\n"+c.body), nil, nil)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: err = %v, want %q", c.body, err, c.want)
		}
	}
}

// env and headers are secret fields: an enc2: value in [[mcp.servers]] is decrypted when the config loads.
func TestMCPConfigDecryptsSecrets(t *testing.T) {
	dir := t.TempDir()
	box := secrets.New(filepath.Join(dir, ".secret_key"))
	enc, err := box.Encrypt("hunter2")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "config.toml")
	if err := os.WriteFile(path, []byte(mcpHead+"\n[[mcp.servers]]\nname = \"a\"\ncommand = \"x\"\nenv = { PW = \""+enc+"\" }\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, _, err := LoadWith(path, nil, box)
	if err != nil {
		t.Fatal(err)
	}
	if got := cfg.MCP.Servers[0].Env["PW"]; got != "hunter2" {
		t.Fatalf("env PW = %q", got)
	}
}

// Plaintext env and header values of [[mcp.servers]] (in a sub-table and an inline table) are encrypted on
// disk at the next write, decrypted in the live config and masked in every view.
func TestMCPSecretsEncryptedAtRest(t *testing.T) {
	m, path := openManager(t, commentedConfig+`
[[mcp.servers]]
name = "a"
command = "srv"
headers = { Authorization = "Bearer plain-header-value" }

[mcp.servers.env]
TOKEN = "plain-env-value"
`)
	if _, err := m.Set(t.Context(), "providers.models.openai.default.model", json.RawMessage(`"gpt-4o"`), nil); err != nil {
		t.Fatal(err)
	}
	text := readFile(t, path)
	if strings.Contains(text, "plain-env-value") || strings.Contains(text, "plain-header-value") || strings.Count(text, `"enc2:`) < 2 {
		t.Fatalf("plaintext MCP secret on disk:\n%s", text)
	}
	s := m.Current().MCP.Servers[0]
	if s.Env["TOKEN"] != "plain-env-value" || s.Headers["Authorization"] != "Bearer plain-header-value" {
		t.Fatalf("live = %+v", s)
	}
	all, _ := m.Get("")
	if b, _ := json.Marshal(all); strings.Contains(string(b), "plain-") {
		t.Fatalf("config view leaks: %s", b)
	}
}

// tool_filter_groups are read in both of upstream's spellings, [[runtime_profiles.<p>.tool_filter_groups]] array
// tables and an inline array; the agent's runtime_profile picks them; upstream's other runtime keys are
// reported as unknown, not refused.
func TestToolFilterGroupsDecode(t *testing.T) {
	c, warns, err := LoadBytes("x.toml", []byte(`schema_version = 3
[providers.models.echo.default]
model = "echo"
[risk_profiles.full]
level = "full"
[agents.a]
model_provider = "echo.default"
risk_profile = "full"
runtime_profile = "focused"
[agents.b]
model_provider = "echo.default"
risk_profile = "full"
[runtime_profiles.focused]
max_tool_iterations = 3
[[runtime_profiles.focused.tool_filter_groups]]
mode = "dynamic"
tools = ["web__*"]
keywords = ["Browse"]
[[runtime_profiles.focused.tool_filter_groups]]
mode = "always"
tools = ["fs__*"]
[runtime_profiles.other]
tool_filter_groups = [{mode = "always", tools = ["y__z"]}]
`), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	g := c.ToolFilterGroupsForAgent("a")
	if len(g) != 2 || g[0].Mode != "dynamic" || g[0].Tools[0] != "web__*" || g[0].Keywords[0] != "Browse" || g[1].Mode != "always" || g[1].Tools[0] != "fs__*" {
		t.Fatalf("agent a's groups %+v", g)
	}
	if o := c.RuntimeProfiles["other"].ToolFilterGroups; len(o) != 1 || o[0].Tools[0] != "y__z" {
		t.Fatalf("inline groups %+v", o)
	}
	if g := c.ToolFilterGroupsForAgent("b"); g != nil {
		t.Fatalf("an agent without a runtime profile has groups %+v", g)
	}
	if !slices.ContainsFunc(warns, func(w string) bool { return strings.Contains(w, "runtime_profiles.focused.max_tool_iterations") }) {
		t.Fatalf("warnings %v", warns)
	}
}

// The inline-array spelling (mcp.servers = [{..., env = {...}, headers = {...}}]) is encrypted at the next
// write too.
func TestMCPSecretsEncryptedAtRestInlineArray(t *testing.T) {
	m, path := openManager(t, commentedConfig+`
[mcp]
servers = [{ name = "a", command = "srv", tool_timeout_secs = 30, args = ["-x", "y"], env = { TOKEN = "plain-env-inline" } }, { name = "b", transport = "http", url = "https://h/", headers = { Authorization = "Bearer plain-hdr-inline" } }]
`)
	if _, err := m.Set(t.Context(), "providers.models.openai.default.model", json.RawMessage(`"gpt-4o"`), nil); err != nil {
		t.Fatal(err)
	}
	text := readFile(t, path)
	if strings.Contains(text, "plain-env-inline") || strings.Contains(text, "plain-hdr-inline") || !strings.Contains(text, "tool_timeout_secs = 30") {
		t.Fatalf("plaintext MCP secret on disk:\n%s", text)
	}
	if s := m.Current().MCP.Servers; len(s) != 2 || s[0].Env["TOKEN"] != "plain-env-inline" || s[1].Headers["Authorization"] != "Bearer plain-hdr-inline" ||
		s[0].ToolTimeoutSecs != 30 || len(s[0].Args) != 2 {
		t.Fatalf("live = %+v", s)
	}
}

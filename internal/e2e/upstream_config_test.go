package e2e

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/zeroclaw-go/zeroclaw/internal/rpctest/ndjson"
)

// upstreamV1 is upstream's v1 fixture (internal/config/upstream/testdata/v1.toml, see the README there).
func upstreamV1(t *testing.T) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "config", "upstream", "testdata", "v1.toml"))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

// wantV1Values are values of the v1 fixture as the daemon must serve them, read through config/get.
var wantV1Values = map[string]any{
	"providers.models.openai.default.model":                  "gpt-4o-mini",
	"providers.models.openai.default.uri":                    "https://api.openai.com/v1",
	"providers.models.openai.default.api_key":                "***MASKED***",
	"providers.models.openai.default.temperature":            0.5,
	"providers.models.openai.default.timeout_secs":           float64(90),
	"providers.models.openai.default.max_tokens":             float64(4096),
	"providers.models.anthropic.custom.uri":                  "https://api.z.ai/api/anthropic",
	"providers.models.anthropic.agent_complex_agent.model":   "claude-sonnet-4-5",
	"providers.models.anthropic.agent_complex_agent.api_key": "***MASKED***",
	"agents.complex_agent.model_provider":                    "anthropic.agent_complex_agent",
	"agents.complex_agent.risk_profile":                      "agent_complex_agent",
	"agents.simple_agent.model_provider":                     "openai.agent_simple_agent",
	"risk_profiles.default.level":                            "supervised",
	"risk_profiles.agent_complex_agent.workspace_only":       true,
	"cost.daily_limit_usd":                                   float64(10),
}

func checkV1Values(t *testing.T, c *ndjson.Client, when string) {
	t.Helper()
	for prop, want := range wantV1Values {
		if got := configGetValue(t, c, prop); got != want {
			t.Errorf("%s: config/get %s = %v (%T), want %v", when, prop, got, got, want)
		}
	}
	if got := configGetValue(t, c, "risk_profiles.default.auto_approve"); len(got.([]any)) != 1 || got.([]any)[0] != "weather" {
		t.Errorf("%s: risk_profiles.default.auto_approve = %v", when, got)
	}
}

// An upstream install: a schema v1 config.toml (upstream's own fixture) and the legacy <install>/workspace with
// its memory/ directory. The daemon starts on it, serves the migrated values, leaves config.toml byte for byte
// as it was (no schema_version stamped on unmigrated content), splits memory/ between data/memory and the
// default agent's workspace, and refuses config writes with the hint. `zeroclaw config migrate` then rewrites the
// file (keeping config.toml.bak), the running daemon reloads it, writes work, and a restarted daemon reads the
// same values.
func TestUpstreamV1InstallStartsUnchanged(t *testing.T) {
	t.Parallel()
	h := home(t)
	root := filepath.Join(h, ".zeroclaw")
	cfgPath := filepath.Join(root, "config.toml")
	v1 := upstreamV1(t)
	writeFile(t, cfgPath, string(v1))
	ws := filepath.Join(root, "workspace")
	for name, content := range map[string]string{
		"memory/brain.db":            "brain",
		"memory/audit.db":            "audit",
		"memory/response_cache.db":   "cache",
		"memory/MEMORY_SNAPSHOT.md":  "# snapshot\n",
		"memory/archive/2024-12.md":  "old notes\n",
		"memory/2025-01-02.md":       "daily notes\n",
		"memory/people/alice.md":     "likes tea\n",
		"AGENTS.md":                  "be brief\n",
		"sessions/placeholder.jsonl": "",
	} {
		writeFile(t, filepath.Join(ws, filepath.FromSlash(name)), content)
	}

	sock := filepath.Join(root, "data", "daemon.sock")
	d := start(t, env(h), "daemon")
	waitSocket(t, d, sock)
	c := dialRPC(t, sock)
	c.Initialize()
	checkV1Values(t, c, "v1 in memory")

	if got, err := os.ReadFile(cfgPath); err != nil || !bytes.Equal(got, v1) {
		t.Fatalf("config.toml changed by the start (err %v):\n%s", err, got)
	}
	if !strings.Contains(d.stderr.String(), "is schema v1") {
		t.Errorf("the daemon did not warn that the file is an older schema:\n%s", d.stderr.String())
	}

	// Writes are refused with the hint while the file is v1.
	r := c.Call("config/set", map[string]any{"prop": "agents.simple_agent.system_prompt", "value": "hi"}, 7)
	if e, ok := r["error"].(map[string]any); !ok || !strings.Contains(e["message"].(string), "zeroclaw config migrate") {
		t.Fatalf("config/set on a v1 file: %v", r)
	}
	out, errOut, code := run(t, env(h), "", "config", "set", "agents.simple_agent.system_prompt", "hi")
	if code == 0 || !strings.Contains(errOut, "zeroclaw config migrate") {
		t.Fatalf("CLI config set on a v1 file: exit %d\nstdout %s\nstderr %s", code, out, errOut)
	}

	// memory/ is split: the shared stores to data/memory, the agent's notes to its workspace.
	for rel, want := range map[string]string{
		"data/memory/brain.db":                            "brain",
		"data/memory/audit.db":                            "audit",
		"data/memory/response_cache.db":                   "cache",
		"data/memory/MEMORY_SNAPSHOT.md":                  "# snapshot\n",
		"data/memory/archive/2024-12.md":                  "old notes\n",
		"agents/default/workspace/memory/2025-01-02.md":   "daily notes\n",
		"agents/default/workspace/memory/people/alice.md": "likes tea\n",
		"agents/default/workspace/AGENTS.md":              "be brief\n",
	} {
		if b, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(rel))); err != nil || string(b) != want {
			t.Errorf("%s = %q, %v; want %q", rel, b, err, want)
		}
	}
	if _, err := os.Stat(ws); !os.IsNotExist(err) {
		t.Errorf("legacy workspace still there: %v", err)
	}

	// A restart: same file, same values, no second layout migration.
	signal(t, d, syscall.SIGTERM)
	if code := d.wait(t, 15*time.Second); code != 0 {
		t.Fatalf("daemon exit code %d", code)
	}
	d = start(t, env(h), "daemon")
	waitSocket(t, d, sock)
	c = dialRPC(t, sock)
	c.Initialize()
	checkV1Values(t, c, "v1 after restart")
	if got, _ := os.ReadFile(cfgPath); !bytes.Equal(got, v1) {
		t.Fatalf("config.toml changed by the restart:\n%s", got)
	}
	if all, _ := filepath.Glob(filepath.Join(root, "backup-*")); len(all) != 1 {
		t.Fatalf("backups after a restart: %v", all)
	}

	// config migrate with the daemon running: the file becomes v3, the daemon reloads it.
	out = runOK(t, env(h), "", "config", "migrate")
	if !strings.Contains(out, "schema v1") || !strings.Contains(out, "config.toml.bak") {
		t.Errorf("config migrate printed:\n%s", out)
	}
	if bak, err := os.ReadFile(cfgPath + ".bak"); err != nil || !bytes.Equal(bak, v1) {
		t.Fatalf("config.toml.bak is not the v1 file: %v", err)
	}
	migrated, _ := os.ReadFile(cfgPath)
	if !strings.HasPrefix(string(migrated), "schema_version = 3\n") || bytes.Contains(migrated, []byte("sk-v1-test-global")) {
		t.Fatalf("migrated file: not v3, or a plaintext secret:\n%s", migrated)
	}
	if out := runOK(t, env(h), "", "config", "validate"); !strings.Contains(out, cfgPath+": ok") {
		t.Errorf("config validate after migrate:\n%s", out)
	}
	checkV1Values(t, c, "after migrate (running daemon)")
	r = c.Call("config/set", map[string]any{"prop": "agents.simple_agent.system_prompt", "value": "hi"}, 8)
	if _, ok := r["result"]; !ok {
		t.Fatalf("config/set after migrate: %v", r)
	}
	// A second migrate has nothing to do.
	if out := runOK(t, env(h), "", "config", "migrate"); !strings.Contains(out, "already schema v3") {
		t.Errorf("second config migrate printed:\n%s", out)
	}

	signal(t, d, syscall.SIGTERM)
	if code := d.wait(t, 15*time.Second); code != 0 {
		t.Fatalf("daemon exit code %d", code)
	}
	d = start(t, env(h), "daemon")
	waitSocket(t, d, sock)
	c = dialRPC(t, sock)
	c.Initialize()
	checkV1Values(t, c, "v3 after restart")
	if got := configGetValue(t, c, "agents.simple_agent.system_prompt"); got != "hi" {
		t.Errorf("system_prompt after restart = %v", got)
	}
}

// config migrate without a daemon works on the file under the install lock; --dry-run prints the v3 file and
// changes nothing.
func TestConfigMigrateWithoutDaemon(t *testing.T) {
	t.Parallel()
	h := home(t)
	root := filepath.Join(h, ".zeroclaw")
	cfgPath := filepath.Join(root, "config.toml")
	v2 := "# my v2 install\nschema_version = 2\n\n[providers]\ndefault_provider = \"anthropic\"\n\n" +
		"# the key\n[providers.models.anthropic]\napi_key = \"sk-ant-v2\"\nmodel = \"claude-sonnet-4-5\"\n\n" +
		"[gateway]\n# not the default\nport = 42000 # my port\n"
	writeFile(t, cfgPath, v2)
	out := runOK(t, env(h), "", "config", "migrate", "--dry-run")
	if !strings.Contains(out, "[providers.models.anthropic.default]") || !strings.Contains(out, "# my v2 install") {
		t.Errorf("dry run printed:\n%s", out)
	}
	if b, _ := os.ReadFile(cfgPath); string(b) != v2 {
		t.Fatalf("--dry-run changed the file:\n%s", b)
	}
	if v := strings.TrimSpace(runOK(t, env(h), "", "config", "get", "agents.default.model_provider")); v != "anthropic.default" {
		t.Errorf("config get on the v2 file = %q", v)
	}
	runOK(t, env(h), "", "config", "migrate")
	b, _ := os.ReadFile(cfgPath)
	for _, want := range []string{"# my v2 install\n", "schema_version = 3\n", "[providers.models.anthropic.default]",
		"api_key = \"enc2:", "# the key\n", "# not the default\nport = 42000 # my port\n", `model_provider = "anthropic.default"`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("migrated file lacks %q:\n%s", want, b)
		}
	}
	if v := strings.TrimSpace(runOK(t, env(h), "", "config", "get", "providers.models.anthropic.default.model")); v != "claude-sonnet-4-5" {
		t.Errorf("model after migrate = %q", v)
	}
	runOK(t, env(h), "", "config", "set", "agents.default.system_prompt", "be kind")
}

// Each upstream case with expected values (internal/config/upstream/testdata/expected.json) starts the binary
// with the expected values readable through config/get, the file byte for byte as it was; `config migrate`
// writes a v3 file that `config validate` accepts and a restarted daemon reads identically.
func TestUpstreamCasesOverTheSocket(t *testing.T) {
	t.Parallel()
	dir := filepath.Join("..", "config", "upstream", "testdata")
	b, err := os.ReadFile(filepath.Join(dir, "expected.json"))
	if err != nil {
		t.Fatal(err)
	}
	var expected map[string]map[string]any
	if err := json.Unmarshal(b, &expected); err != nil {
		t.Fatal(err)
	}
	for name, props := range expected {
		t.Run(name, func(t *testing.T) {
			raw, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(name)))
			if err != nil {
				t.Fatal(err)
			}
			h := home(t)
			root := filepath.Join(h, ".zeroclaw")
			cfgPath := filepath.Join(root, "config.toml")
			writeFile(t, cfgPath, string(raw))
			sock := filepath.Join(root, "data", "daemon.sock")
			check := func(when string) {
				d := start(t, env(h), "daemon")
				waitSocket(t, d, sock)
				c := dialRPC(t, sock)
				c.Initialize()
				for prop, want := range props {
					if got := configGetValue(t, c, prop); !reflect.DeepEqual(got, want) {
						t.Errorf("%s: config/get %s = %v, want %v", when, prop, got, want)
					}
				}
				signal(t, d, syscall.SIGTERM)
				if code := d.wait(t, 15*time.Second); code != 0 {
					t.Fatalf("daemon exit code %d", code)
				}
			}
			check("as found")
			if got, _ := os.ReadFile(cfgPath); !bytes.Equal(got, raw) {
				t.Fatalf("the start changed config.toml:\n%s", got)
			}
			if bytes.Contains(raw, []byte("schema_version = 3")) {
				return
			}
			runOK(t, env(h), "", "config", "migrate")
			if out := runOK(t, env(h), "", "config", "validate"); !strings.Contains(out, ": ok") {
				t.Errorf("config validate after migrate:\n%s", out)
			}
			check("after migrate")
		})
	}
}

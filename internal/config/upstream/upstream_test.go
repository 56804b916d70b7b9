package upstream_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/zeroclaw-go/zeroclaw/internal/config"
)

func writeConfig(t *testing.T, text string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "config.toml")
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// openUpstream copies an upstream fixture to a temp config.toml and opens it as a daemon does.
func openUpstream(t *testing.T, name string) (*config.Manager, string, []byte) {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	path := writeConfig(t, string(raw))
	m, err := config.OpenLenient(path, nil, nil, nil)
	if err != nil {
		t.Fatalf("%s does not load: %v", name, err)
	}
	return m, path, raw
}

func getJSON(t *testing.T, m *config.Manager, prop string) string {
	t.Helper()
	v, err := m.Get(prop)
	if err != nil {
		return "error: " + err.Error()
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// upstreamExpected reads testdata/expected.json: for each case, values it must load with, as
// config/get returns them (JSON). They are upstream's results mapped onto our families: a uri ending in the
// family's request path is cut to its base URL, openai-compatible types become openai entries named after the
// type, secrets are masked. The e2e tests read the same file.
func upstreamExpected(t *testing.T) map[string]map[string]json.RawMessage {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "expected.json"))
	if err != nil {
		t.Fatal(err)
	}
	var out map[string]map[string]json.RawMessage
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// Every upstream case loads as a daemon's start loads it, with the expected values; the file is not touched;
// writes are refused with the hint while it is v1/v2; Migrate writes a v3 file (with .bak) that a new load
// reads identically, and that validates when the in-memory load had nothing to disable.
func TestUpstreamConfigs(t *testing.T) {
	cases, err := filepath.Glob(filepath.Join("testdata", "migration", "*.toml"))
	if err != nil {
		t.Fatal(err)
	}
	cases = append(cases, filepath.Join("testdata", "v1.toml"))
	if len(cases) < 50 {
		t.Fatalf("only %d upstream cases", len(cases))
	}
	expected := upstreamExpected(t)
	for _, c := range cases {
		name, _ := filepath.Rel("testdata", c)
		t.Run(name, func(t *testing.T) {
			raw, err := os.ReadFile(c)
			if err != nil {
				t.Fatal(err)
			}
			path := writeConfig(t, string(raw))
			m, err := config.OpenLenient(path, nil, nil, nil)
			var ve *config.ValidationError
			if errors.As(err, &ve) && len(expected[name]) == 0 {
				// Nothing runnable in it (e.g. only an unusable provider): a start refuses it, naming why, and
				// config migrate still rewrites it.
				if len(ve.Problems) == 0 {
					t.Fatalf("refused without problems: %v", err)
				}
				res, err := config.MigrateFile(context.Background(), path, nil, nil, nil)
				if err != nil || res.Migration == nil || len(res.Problems) == 0 {
					t.Fatalf("MigrateFile: %+v, %v", res, err)
				}
				if after, _ := os.ReadFile(path); !bytes.HasPrefix(after, []byte("schema_version = 3\n")) {
					t.Fatalf("not migrated:\n%s", after)
				}
				return
			}
			if err != nil {
				t.Fatalf("does not load: %v", err)
			}
			for prop, want := range expected[name] {
				var w bytes.Buffer
				if err := json.Compact(&w, want); err != nil {
					t.Fatal(err)
				}
				if got := getJSON(t, m, prop); got != w.String() {
					t.Errorf("%s = %s, want %s", prop, got, want)
				}
			}
			if b, _ := os.ReadFile(path); !bytes.Equal(b, raw) {
				t.Fatalf("loading changed the file:\n%s", b)
			}
			old := m.FileSchemaVersion() != 0
			_, err = m.Set(context.Background(), "agents.x.system_prompt", json.RawMessage(`"hi"`), nil)
			if old && (!errors.Is(err, config.ErrOldSchema) || !strings.Contains(err.Error(), "zeroclaw config migrate")) {
				t.Fatalf("a write to a v%d file: %v; want ErrOldSchema with the hint", m.FileSchemaVersion(), err)
			}
			if !old {
				return
			}
			before := m.Current()
			disabledBefore := m.Disabled()
			res, err := m.Migrate(context.Background())
			if err != nil {
				t.Fatalf("migrate: %v", err)
			}
			if res.Migration == nil || res.Migration.From != m.FileSchemaVersion() && m.FileSchemaVersion() != 0 {
				t.Fatalf("migrate result %+v", res)
			}
			if bak, err := os.ReadFile(path + ".bak"); err != nil || !bytes.Equal(bak, raw) {
				t.Fatalf("%s.bak is not the old file: %v", path, err)
			}
			after, err := os.ReadFile(path)
			if err != nil || !bytes.HasPrefix(after, []byte("schema_version = 3\n")) && !bytes.Contains(after, []byte("\nschema_version = 3\n")) {
				t.Fatalf("migrated file (%v):\n%s", err, after)
			}
			m2, err := config.OpenLenient(path, nil, nil, nil)
			if err != nil {
				t.Fatalf("the migrated file does not load: %v\n%s", err, after)
			}
			if m2.FileSchemaVersion() != 0 {
				t.Fatal("the migrated file is still read as an older schema")
			}
			if !reflect.DeepEqual(m2.Current(), before) {
				t.Fatalf("the migrated file reads differently:\n%+v\nwant\n%+v", m2.Current(), before)
			}
			if len(disabledBefore) == 0 {
				if _, _, err := config.Load(path, nil); err != nil {
					t.Fatalf("the migrated file does not validate: %v\n%s", err, after)
				}
			}
			if again, err := config.MigrateBytes(path, after); err != nil || again != nil {
				t.Fatalf("migrating the migrated file again: %+v, %v", again, err)
			}
			_, err = m2.Set(context.Background(), "cost.warn_at_percent", json.RawMessage(`70`), nil)
			switch {
			case len(disabledBefore) > 0 && !errors.Is(err, config.ErrInvalidConfig):
				// Writes stay strict: a file whose problems a start disables (a heartbeat naming a missing
				// agent) is refused until it is fixed.
				t.Fatalf("a write after migrate to a file with problems %v: %v", disabledBefore, err)
			case len(disabledBefore) == 0 && err != nil:
				t.Fatalf("a write after migrate: %v", err)
			}
		})
	}
}

// The warnings say the file is an older schema migrated in memory, and name what cannot be used here.
func TestUpstreamWarnings(t *testing.T) {
	m, _, _ := openUpstream(t, "v1.toml")
	all := strings.Join(m.Warnings(), "\n")
	for _, want := range []string{
		"is schema v1 (an older upstream schema): it was migrated to v3 in memory and is left unchanged",
		`providers.models.azure.default is not used: upstream provider type "azure" has no equivalent here`,
		"risk_profiles.default.allowed_commands is not enforced by this runtime",
		"cost.prices.gpt-4o-mini dropped",
		"not used by this runtime (kept in the file): ",
	} {
		if !strings.Contains(all, want) {
			t.Errorf("warnings lack %q:\n%s", want, all)
		}
	}
	// The real secrets are there behind the masks.
	cfg := m.Current()
	if cfg.Providers.Models["openai"]["default"].APIKey != "sk-v1-test-global" ||
		cfg.Providers.Models["openai"]["default"].ExtraHeaders["X-Title"] != "zeroclaw-v1-fixture" ||
		cfg.Providers.Models["anthropic"]["agent_complex_agent"].APIKey != "sk-ant-complex" {
		t.Errorf("secrets of the v1 fixture: %+v", cfg.Providers.Models)
	}
	// Upstream's Claude Code provider is not an API this runtime speaks: named, and no agent is bound to it.
	raw, _ := os.ReadFile(filepath.Join("testdata", "migration", "claude_code_folded_under_anthropic.toml"))
	_, warnings, err := config.LoadBytes("c.toml", raw, nil, nil)
	if err == nil || !strings.Contains(err.Error(), `provider "claude-code.default" is not defined`) {
		t.Errorf("claude-code config: %v", err)
	}
	mig, _ := config.MigrateBytes("c.toml", raw)
	if !strings.Contains(strings.Join(mig.Warnings, "\n"), "providers.models.claude-code.default is not used: it runs the Claude Code CLI") {
		t.Errorf("claude-code warnings: %v %v", mig.Warnings, warnings)
	}
}

// Comments survive a migration where their key does; keys keep their order.
func TestMigrateKeepsComments(t *testing.T) {
	raw := []byte(`# header comment

# the model
default_model = "gpt-4o" # inline

[gateway]
# the port
port = 42000 # mine
host = "127.0.0.1"

[autonomy]
level = "full"
`)
	mig, err := config.MigrateBytes("c.toml", raw)
	if err != nil {
		t.Fatal(err)
	}
	text := string(mig.Text)
	for _, want := range []string{"# header comment\n", "[gateway]\n# the port\nport = 42000 # mine\nhost = \"127.0.0.1\"\n",
		"[risk_profiles.default]\nlevel = \"full\"\n"} {
		if !strings.Contains(text, want) {
			t.Errorf("migrated text lacks %q:\n%s", want, text)
		}
	}
	if strings.Index(text, "[gateway]") > strings.Index(text, "[risk_profiles.default]") {
		t.Errorf("gateway (first in the file) is not written first:\n%s", text)
	}
}

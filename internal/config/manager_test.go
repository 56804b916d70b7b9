package config

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/pelletier/go-toml/v2"
	"github.com/zeroclaw-go/zeroclaw/internal/secrets"
)

const commentedConfig = `# zeroclaw config — hand written
schema_version = 3

[providers.models.echo.default]
model = "echo"   # offline

# the agent
[agents.default]
model_provider = 'echo.default'
risk_profile   = "supervised"

[risk_profiles.supervised]
level = "supervised"
workspace_only = true
auto_approve = [
  "file_read", # safe
  "time",
]

[permission_profiles.operator]
grants = ["config:update"]
`

func openManager(t *testing.T, text string, environ ...string) (*Manager, string) {
	t.Helper()
	path := writeConfig(t, text)
	m, err := Open(path, secrets.New(filepath.Join(filepath.Dir(path), ".secret_key")), environ, nil)
	if err != nil {
		t.Fatal(err)
	}
	return m, path
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestSetManySeedExample(t *testing.T) {
	m, path := openManager(t, string(DefaultTOML()))
	ctx := t.Context()
	if _, err := m.Set(ctx, "permission_profiles.operator.grants", json.RawMessage(`["config:read","sessions:create"]`), nil); err != nil {
		t.Fatal(err)
	}
	var authorized []string
	props, err := m.SetMany(ctx, []SetEntry{
		{Prop: "users.example.uid", Value: json.RawMessage(`1001`)},
		{Prop: "users.example.permission-profiles", Value: json.RawMessage(`["operator"]`)},
	}, func(p []string) error { authorized = p; return nil })
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"users.example.uid", "users.example.permission_profiles"}
	if !reflect.DeepEqual(props, want) || !reflect.DeepEqual(authorized, want) {
		t.Fatalf("props %v authorized %v", props, authorized)
	}
	u := m.Current().Users["example"]
	if u.UID != 1001 || !reflect.DeepEqual(u.PermissionProfiles, []string{"operator"}) {
		t.Fatalf("live user %+v", u)
	}
	reloaded, _, err := Load(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(reloaded.Users["example"], u) || m.Generation() != 3 {
		t.Fatalf("persisted %+v, generation %d", reloaded.Users, m.Generation())
	}
	text := readFile(t, path)
	if !strings.HasPrefix(text, string(DefaultTOML())) || !strings.Contains(text, "[users.example]\nuid = 1001\npermission_profiles = [\"operator\"]\n") {
		t.Fatalf("file:\n%s", text)
	}
}

func TestSetManyInvalidEntryChangesNothing(t *testing.T) {
	m, path := openManager(t, commentedConfig)
	before := readFile(t, path)
	cases := []struct {
		sets  []SetEntry
		index int
	}{
		{[]SetEntry{{"gateway.port", json.RawMessage(`8080`)}, {"gateway.host", json.RawMessage(`12`)}}, 1},
		{[]SetEntry{{"gateway.port", json.RawMessage(`8080`)}, {"gateway.nope", json.RawMessage(`1`)}}, 1},
		{[]SetEntry{{"risk_profiles.supervised.level", json.RawMessage(`"read_only"`)}, {"gateway.port", json.RawMessage(`1`)}}, 0},
		{[]SetEntry{{"gateway.port", json.RawMessage(`1`)}, {"agents.default.risk_profile", json.RawMessage(`"ghost"`)}}, 1},
		{[]SetEntry{{"gateway.port", json.RawMessage(`null`)}}, 0},
	}
	for _, c := range cases {
		_, err := m.SetMany(t.Context(), c.sets, nil)
		var ee *EntryError
		if !errors.As(err, &ee) || ee.Index != c.index {
			t.Fatalf("sets %v: err %v, want entry %d", c.sets, err, c.index)
		}
		if got := readFile(t, path); got != before {
			t.Fatalf("file changed:\n%s", got)
		}
		if v, _ := m.Get("gateway.port"); v != int64(42617) {
			t.Fatalf("live port %v", v)
		}
		if m.Generation() != 1 {
			t.Fatalf("generation %d", m.Generation())
		}
	}
	if _, err := m.SetMany(t.Context(), nil, nil); !errors.Is(err, ErrNoEntries) || err.Error() != "config/set-many needs at least one entry in sets" {
		t.Fatalf("empty batch: %v", err)
	}
	if _, err := m.SetMany(t.Context(), make([]SetEntry, 257), nil); !errors.Is(err, ErrTooManyEntries) {
		t.Fatalf("big batch: %v", err)
	}
}

func TestSetManyAuthorizeRefusal(t *testing.T) {
	m, path := openManager(t, commentedConfig)
	before := readFile(t, path)
	refusal := errors.New("forbidden: index 1")
	_, err := m.SetMany(t.Context(), []SetEntry{
		{"agents.default.system_prompt", json.RawMessage(`"hi"`)},
		{"gateway.port", json.RawMessage(`1`)},
	}, func(props []string) error {
		agents, _ := ParsePattern("agents.**")
		for i, p := range props {
			if pp, _ := ParsePath(p); !agents.Match(pp) {
				if i != 1 {
					t.Errorf("refused index %d", i)
				}
				return refusal
			}
		}
		return nil
	})
	if err != refusal {
		t.Fatalf("err %v", err)
	}
	if readFile(t, path) != before || m.Current().Agents["default"].SystemPrompt != "" {
		t.Fatal("refused batch changed something")
	}
}

func TestSetPreservesComments(t *testing.T) {
	m, path := openManager(t, commentedConfig)
	ctx := t.Context()
	if _, err := m.Set(ctx, "agents.default.risk_profile", json.RawMessage(`"strict"`), nil); err == nil {
		t.Fatal("dangling risk profile accepted")
	}
	sets := []SetEntry{
		{"risk_profiles.supervised.approval_timeout_secs", json.RawMessage(`30`)},
		{"agents.default.system_prompt", json.RawMessage(`"Be \"brief\".\nThanks"`)},
		{"providers.models.echo.default.model", json.RawMessage(`"echo-2"`)},
		{"gateway.port", json.RawMessage(`9000`)},
	}
	if _, err := m.SetMany(ctx, sets, nil); err != nil {
		t.Fatal(err)
	}
	want := strings.NewReplacer(
		`model = "echo"   # offline`, `model = "echo-2"   # offline`,
		"risk_profile   = \"supervised\"\n", "risk_profile   = \"supervised\"\nsystem_prompt = \"Be \\\"brief\\\".\\nThanks\"\n",
		"  \"time\",\n]\n", "  \"time\",\n]\napproval_timeout_secs = 30\n",
	).Replace(commentedConfig) + "\n[gateway]\nport = 9000\n"
	if got := readFile(t, path); got != want {
		t.Fatalf("file:\n%s\nwant:\n%s", got, want)
	}
	if m.Current().Agents["default"].SystemPrompt != "Be \"brief\".\nThanks" {
		t.Fatalf("prompt %q", m.Current().Agents["default"].SystemPrompt)
	}
}

func TestSetToDefaultRemovesKey(t *testing.T) {
	m, path := openManager(t, commentedConfig+"\n[gateway]\nport = 9000 # mine\nhost = \"0.0.0.0\"\n")
	ctx := t.Context()
	if _, err := m.Set(ctx, "gateway.port", json.RawMessage(`42617`), nil); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Set(ctx, "risk_profiles.supervised.approval_timeout_secs", json.RawMessage(`120`), nil); err != nil {
		t.Fatal(err)
	}
	got := readFile(t, path)
	if got != commentedConfig+"\n[gateway]\nhost = \"0.0.0.0\"\n" {
		t.Fatalf("file:\n%s", got)
	}
	// A default value for a new map entry still creates the entry.
	if _, err := m.Set(ctx, "users.nobody.uid", json.RawMessage(`0`), nil); err != nil {
		t.Fatal(err)
	}
	if _, ok := m.Current().Users["nobody"]; !ok || !strings.Contains(readFile(t, path), "[users.nobody]\n") {
		t.Fatalf("entry not created:\n%s", readFile(t, path))
	}
	deleted, err := m.Delete(ctx, "gateway.host", nil)
	if err != nil || !deleted {
		t.Fatalf("delete = %v, %v", deleted, err)
	}
	deleted, err = m.Delete(ctx, "gateway.host", nil)
	if err != nil || deleted {
		t.Fatalf("second delete = %v, %v", deleted, err)
	}
	if m.Current().Gateway.Host != "127.0.0.1" {
		t.Fatalf("host %q", m.Current().Gateway.Host)
	}
}

func TestDottedMapKeyRoundTrip(t *testing.T) {
	m, path := openManager(t, commentedConfig)
	ctx := t.Context()
	prop := `providers.models.openai."gpt-4.1".model`
	if _, err := m.Set(ctx, prop, json.RawMessage(`"gpt-4.1"`), nil); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Set(ctx, `providers.models.openai."gpt-4.1".max-tokens`, json.RawMessage(`4096`), nil); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(readFile(t, path), "[providers.models.openai.\"gpt-4.1\"]\nmodel = \"gpt-4.1\"\nmax_tokens = 4096\n") {
		t.Fatalf("file:\n%s", readFile(t, path))
	}
	if _, err := m.Set(ctx, "agents.default.model_provider", json.RawMessage(`"openai.gpt-4.1"`), nil); err != nil {
		t.Fatal(err)
	}
	v, err := m.Get(prop)
	if err != nil || v != "gpt-4.1" {
		t.Fatalf("Get = %v, %v", v, err)
	}
	found := false
	for _, e := range m.List("providers.models.openai") {
		if e.Prop == prop {
			found = true
		}
	}
	if !found {
		t.Fatalf("list: %+v", m.List("providers.models.openai"))
	}
}

func TestEnvOverrideNeverReachesFile(t *testing.T) {
	m, path := openManager(t, commentedConfig, "ZEROCLAW_gateway__port=7777", "ZEROCLAW_agents__default__system_prompt=from-env")
	if m.Current().Gateway.Port != 7777 {
		t.Fatalf("port %d", m.Current().Gateway.Port)
	}
	if _, err := m.Set(t.Context(), "gateway.host", json.RawMessage(`"localhost"`), nil); err != nil {
		t.Fatal(err)
	}
	text := readFile(t, path)
	if strings.Contains(text, "7777") || strings.Contains(text, "from-env") || !strings.Contains(text, `host = "localhost"`) {
		t.Fatalf("file:\n%s", text)
	}
	if m.Current().Gateway.Port != 7777 || m.Current().Agents["default"].SystemPrompt != "from-env" {
		t.Fatal("override lost after set")
	}
}

func TestSecretsEncryptedAndMasked(t *testing.T) {
	m, path := openManager(t, commentedConfig+"\n[providers.models.openai.legacy]\nmodel = \"x\"\napi_key = \"sk-plain-in-file\"\n")
	ctx := t.Context()
	if _, err := m.SetMany(ctx, []SetEntry{
		{"providers.models.openai.default.api_key", json.RawMessage(`"sk-secret-1"`)},
		{"providers.models.openai.default.model", json.RawMessage(`"gpt-4o"`)},
	}, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Set(ctx, "providers.models.openai.default.extra_headers.X-Org", json.RawMessage(`"org-1"`), nil); err != nil {
		t.Fatal(err)
	}
	text := readFile(t, path)
	if strings.Contains(text, "sk-secret-1") || strings.Contains(text, "sk-plain-in-file") || strings.Contains(text, "org-1") ||
		strings.Count(text, `"enc2:`) != 3 {
		t.Fatalf("plaintext secret on disk:\n%s", text)
	}
	var onDisk map[string]any
	if err := toml.Unmarshal([]byte(text), &onDisk); err != nil {
		t.Fatal(err)
	}
	p := m.Current().Providers.Models["openai"]
	if p["default"].APIKey != "sk-secret-1" || p["legacy"].APIKey != "sk-plain-in-file" || p["default"].ExtraHeaders["X-Org"] != "org-1" {
		t.Fatalf("live secrets %+v", p)
	}
	if v, _ := m.Get("providers.models.openai.default.api_key"); v != secrets.Masked {
		t.Fatalf("Get api_key = %v", v)
	}
	all, _ := m.Get("")
	if b, _ := json.Marshal(all); strings.Contains(string(b), "sk-secret") || strings.Contains(string(b), "org-1") {
		t.Fatalf("whole config leaks: %s", b)
	}
	for _, e := range m.List("") {
		if strings.Contains(e.Prop, "openai") && strings.Contains(e.Prop, "api_key") && (!e.Secret || !e.IsSecret || !e.Populated || e.Value != nil || e.Default != nil) {
			t.Fatalf("list entry %+v", e)
		}
	}
	// Two encryptions of the same value differ.
	if _, err := m.Set(ctx, "providers.models.openai.legacy.api_key", json.RawMessage(`"sk-secret-1"`), nil); err != nil {
		t.Fatal(err)
	}
	re, _, err := Load(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	a, b := re.Providers.Models["openai"]["default"].APIKey, re.Providers.Models["openai"]["legacy"].APIKey
	if !strings.HasPrefix(a, "enc2:") || a == b {
		t.Fatalf("ciphertexts %q %q", a, b)
	}
	// A missing key names the field and never yields garbage.
	if err := os.Remove(filepath.Join(filepath.Dir(path), ".secret_key")); err != nil {
		t.Fatal(err)
	}
	_, err = Open(path, secrets.New(filepath.Join(filepath.Dir(path), ".secret_key")), nil, nil)
	if !errors.Is(err, secrets.ErrNoKey) || !strings.Contains(err.Error(), "config: secret providers.models.openai.default.api_key: ") {
		t.Fatalf("missing key err = %v", err)
	}
}

func TestReloadKeepsRunningConfigOnInvalidFile(t *testing.T) {
	m, path := openManager(t, commentedConfig)
	var seen []int
	m.OnChange(func(c *Config) { seen = append(seen, c.Gateway.Port) })
	if err := os.WriteFile(path, []byte(commentedConfig+"\n[gateway]\nport = 1234\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	gen, err := m.Reload(t.Context())
	if err != nil || gen != 2 || m.Current().Gateway.Port != 1234 {
		t.Fatalf("reload = %d, %v", gen, err)
	}
	if err := os.WriteFile(path, []byte("[risk_profiles.x]\nlevel = \"read_only\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Reload(t.Context()); !errors.Is(err, ErrInvalidConfig) {
		t.Fatalf("invalid reload err = %v", err)
	}
	if m.Current().Gateway.Port != 1234 || m.Generation() != 2 || !reflect.DeepEqual(seen, []int{1234}) {
		t.Fatalf("running config replaced: port %d gen %d seen %v", m.Current().Gateway.Port, m.Generation(), seen)
	}
}

// Delete removes a key, never the map entry holding it, even when dotted keys are all that define the entry
// (the same rule a set-to-default follows).
func TestDeleteKeepsMapEntryDefinedByDottedKeys(t *testing.T) {
	m, path := openManager(t, commentedConfig+"\n[users]\nbob.uid = 1000\nbob.permission_profiles = [\"operator\"]\n\n[cost]\nprices.gpt.input = 1.5\n")
	for _, prop := range []string{"users.bob.uid", "users.bob.permission_profiles", "cost.prices.gpt.input"} {
		if deleted, err := m.Delete(t.Context(), prop, nil); err != nil || !deleted {
			t.Fatalf("Delete(%s) = %v, %v", prop, deleted, err)
		}
	}
	for _, c := range []*Config{m.Current(), mustLoad(t, path)} {
		if _, ok := c.Users["bob"]; !ok {
			t.Fatalf("user bob removed by deleting its keys; file:\n%s", readFile(t, path))
		}
		if p, ok := c.Cost.Prices["gpt"]; !ok || p.InputPerMillion != 0 {
			t.Fatalf("cost.prices.gpt = %+v, %v; file:\n%s", p, ok, readFile(t, path))
		}
	}
}

func mustLoad(t *testing.T, path string) *Config {
	t.Helper()
	c, _, err := Load(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// Many writers and reloads on one Manager: every batch lands (no lost update), env overrides stay out of the
// file, and afterwards the file loads to exactly the live config.
func TestConcurrentSetManyAndReload(t *testing.T) {
	env := []string{"ZEROCLAW_gateway__host=envhost", "ZEROCLAW_providers__models__echo__default__api_key=env-secret"}
	m, path := openManager(t, commentedConfig, env...)
	var wg sync.WaitGroup
	for i := range 16 {
		wg.Go(func() {
			name := fmt.Sprintf("u%d", i)
			if _, err := m.SetMany(t.Context(), []SetEntry{
				{Prop: "users." + name + ".uid", Value: json.RawMessage(fmt.Sprint(1000 + i))},
				{Prop: "agents.default.env.K_" + name, Value: json.RawMessage(`"v-` + name + `"`)},
			}, nil); err != nil {
				t.Error(err)
			}
			if i%4 == 0 {
				if _, err := m.Reload(t.Context()); err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	text := readFile(t, path)
	if strings.Contains(text, "envhost") || strings.Contains(text, "env-secret") || strings.Contains(text, "v-u") {
		t.Fatalf("override or plaintext secret in file:\n%s", text)
	}
	onDisk, _, err := LoadWith(path, env, m.box)
	if err != nil {
		t.Fatal(err)
	}
	live := m.Current()
	if len(live.Users) != 16 || len(live.Agents["default"].Env) != 16 {
		t.Fatalf("lost updates: %d users, %d env", len(live.Users), len(live.Agents["default"].Env))
	}
	if !reflect.DeepEqual(onDisk, live) {
		t.Fatalf("file and live config differ:\n%+v\n%+v", onDisk, live)
	}
}

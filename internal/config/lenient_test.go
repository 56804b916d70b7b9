package config

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"strings"
	"testing"
)

const brokenEntries = `schema_version = 3

[providers.models.echo.default]
model = "echo"

[providers.models.openai.hot]
model = "gpt-4o"
temperature = 9.0

[agents.default]
model_provider = "echo.default"
risk_profile = "supervised"

[agents.uses_hot]
model_provider = "openai.hot"
risk_profile = "supervised"

[agents.typo]
model_provider = "echo.default"
risk_profile = "supervised"
enabled = "yes"

[risk_profiles.supervised]

[gateway]
port = "http"

[users.bob]
uid = 1001
permission_profiles = ["nowhere"]
`

// At start, each broken entry is disabled with a warning naming its path and line; a broken provider takes the
// agents using it along; a setting of the wrong type falls back to its default; the rest runs.
func TestOpenLenientDisablesBrokenEntries(t *testing.T) {
	path := writeConfig(t, brokenEntries)
	if _, err := Open(path, nil, nil, nil); err == nil {
		t.Fatal("the strict Open accepted broken entries")
	}
	m, err := OpenLenient(path, nil, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	cfg := m.Current()
	for _, gone := range []string{"uses_hot", "typo"} {
		if _, ok := cfg.Agents[gone]; ok {
			t.Errorf("agents.%s is still there", gone)
		}
	}
	if _, ok := cfg.Agents["default"]; !ok {
		t.Error("the healthy agent was disabled")
	}
	if _, ok := cfg.Providers.Models["openai"]["hot"]; ok {
		t.Error("the provider with a bad temperature is still there")
	}
	if _, ok := cfg.Users["bob"]; ok {
		t.Error("a user naming a missing permission profile is still there (it would run with fewer grants than meant, or more)")
	}
	if cfg.Gateway.Port != 42617 {
		t.Errorf("gateway.port = %d, want the default", cfg.Gateway.Port)
	}
	line := func(s string) int { return strings.Count(brokenEntries[:strings.Index(brokenEntries, s)], "\n") + 1 }
	warnings := strings.Join(m.Warnings(), "\n")
	for _, want := range []string{
		"config: providers.models.openai.hot disabled: providers.models.openai.hot.temperature: must be between 0 and 2, got 9 (line " + itoa(line("temperature")) + ")",
		"config: agents.uses_hot disabled: agents.uses_hot.model_provider: provider \"openai.hot\" is not defined under providers.models",
		"config: agents.typo disabled: agents.typo.enabled: config: invalid value: expected boolean, got string (line " + itoa(line(`enabled = "yes"`)) + ")",
		"config: gateway.port disabled: gateway.port: config: invalid value: expected integer, got string (line " + itoa(line(`port = "http"`)) + ")",
		"config: users.bob disabled: users.bob.permission_profiles: permission profile \"nowhere\" is not defined",
	} {
		if !strings.Contains(warnings, want) {
			t.Errorf("warnings lack %q:\n%s", want, warnings)
		}
	}
	if n := len(m.Disabled()); n != 5 {
		t.Errorf("Disabled() = %d problems: %v", n, m.Disabled())
	}

	// config validate's view: every problem, with its line.
	_, _, problems, err := Check(path, []byte(brokenEntries), nil, nil)
	if err != nil || len(problems) != 5 {
		t.Fatalf("Check: %v, %v", problems, err)
	}

	// Writes stay strict: the file as a whole must validate.
	if _, err := m.Set(context.Background(), "agents.default.system_prompt", json.RawMessage(`"x"`), nil); !errors.Is(err, ErrInvalidConfig) {
		t.Fatalf("a write to a file with problems: %v", err)
	}
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

// Only what cannot be disabled stops a start: a syntax error, a schema newer than ours, or nothing usable left.
func TestOpenLenientStops(t *testing.T) {
	for name, text := range map[string]string{
		"syntax":         "schema_version = 3\n[agents.default\n",
		"newer schema":   "schema_version = 4\n",
		"nothing usable": "schema_version = 3\n[agents.only]\nmodel_provider = \"openai.none\"\nrisk_profile = \"x\"\n[risk_profiles.x]\n",
	} {
		t.Run(name, func(t *testing.T) {
			if _, err := OpenLenient(writeConfig(t, text), nil, nil, nil); !errors.Is(err, ErrInvalidConfig) {
				t.Fatalf("OpenLenient = %v, want an ErrInvalidConfig", err)
			}
		})
	}
}

// A reload never disables an entry that runs now: a file with a new problem is refused and the running config
// kept; the same problems as at start are accepted (their entries stay disabled); a fixed file re-enables them.
func TestReloadNeverDisablesRunningEntries(t *testing.T) {
	path := writeConfig(t, brokenEntries)
	m, err := OpenLenient(path, nil, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := m.Reload(ctx); err != nil {
		t.Fatalf("reload of the same file: %v", err)
	}
	worse := strings.Replace(brokenEntries, "[agents.default]\nmodel_provider = \"echo.default\"", "[agents.default]\nmodel_provider = \"echo.gone\"", 1)
	if err := os.WriteFile(path, []byte(worse), 0o600); err != nil {
		t.Fatal(err)
	}
	gen := m.Generation()
	_, err = m.Reload(ctx)
	var ve *ValidationError
	if !errors.As(err, &ve) || !strings.Contains(err.Error(), `agents.default.model_provider: provider "echo.gone"`) {
		t.Fatalf("reload disabling the running agent: %v", err)
	}
	if m.Generation() != gen || m.Current().Agents["default"].ModelProvider != "echo.default" {
		t.Fatal("the running config was replaced")
	}
	// A reload that would disable an agent running since the last reload is refused as well.
	twoHealthy := strings.Replace(brokenEntries, "[agents.typo]", "[agents.second]\nmodel_provider = \"echo.default\"\nrisk_profile = \"supervised\"\n\n[agents.typo]", 1)
	if err := os.WriteFile(path, []byte(twoHealthy), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Reload(ctx); err != nil {
		t.Fatalf("reload adding a healthy agent: %v", err)
	}
	worse = strings.Replace(twoHealthy, "[agents.second]\nmodel_provider = \"echo.default\"", "[agents.second]\nmodel_provider = \"echo.gone\"", 1)
	if err := os.WriteFile(path, []byte(worse), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err = m.Reload(ctx)
	if !errors.As(err, &ve) || len(ve.Problems) != 1 || ve.Problems[0].Path != "agents.second.model_provider" {
		t.Fatalf("reload disabling the running agents.second: %v", err)
	}
	if _, ok := m.Current().Agents["second"]; !ok {
		t.Fatal("agents.second was disabled by a refused reload")
	}
	fixed := strings.Replace(brokenEntries, "temperature = 9.0", "temperature = 0.9", 1)
	if err := os.WriteFile(path, []byte(fixed), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Reload(ctx); err != nil {
		t.Fatal(err)
	}
	if _, ok := m.Current().Agents["uses_hot"]; !ok {
		t.Error("fixing the provider did not bring its agent back")
	}
}

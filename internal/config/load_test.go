package config

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func writeConfig(t *testing.T, text string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "config.toml")
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestDefaultTOMLLoadsAsDefault(t *testing.T) {
	path := writeConfig(t, string(DefaultTOML()))
	cfg, warnings, err := Load(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(warnings) != 0 {
		t.Fatalf("warnings: %v", warnings)
	}
	if !reflect.DeepEqual(cfg, Default()) {
		t.Fatalf("Load(DefaultTOML) = %+v\nwant %+v", cfg, Default())
	}
	if cfg.RPC != (RPCConfig{512, 8388608, 30000, 30000, 30000, 64 << 20, ""}) || !cfg.Security.TrustDaemonUID ||
		cfg.RiskProfiles["supervised"].ApprovalTimeoutSecs != 120 || !cfg.Agents["default"].IsEnabled() {
		t.Fatalf("defaults: %+v", cfg)
	}
}

func TestEnsureDefault(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sub", "config.toml")
	created, err := EnsureDefault(path)
	if err != nil || !created {
		t.Fatalf("first EnsureDefault = %v, %v", created, err)
	}
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o600 {
		t.Fatalf("mode %v", st.Mode())
	}
	if err := os.WriteFile(path, []byte("schema_version = 3\n# mine\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	created, err = EnsureDefault(path)
	if err != nil || created {
		t.Fatalf("second EnsureDefault = %v, %v", created, err)
	}
	got, _ := os.ReadFile(path)
	if string(got) != "schema_version = 3\n# mine\n" {
		t.Fatalf("existing file clobbered: %q", got)
	}
	entries, _ := os.ReadDir(filepath.Dir(path))
	if len(entries) != 1 {
		t.Fatalf("leftover files: %v", entries)
	}
}

func TestFileErrorSyntax(t *testing.T) {
	path := writeConfig(t, "schema_version = 3\n\n[gateway]\nport = 80 80\n")
	_, _, err := Load(path, nil)
	var fe *FileError
	if !errors.As(err, &fe) {
		t.Fatalf("err = %v, want *FileError", err)
	}
	if fe.Line != 4 || fe.Key != "gateway.port" || !errors.Is(err, ErrInvalidConfig) {
		t.Fatalf("FileError = %+v", fe)
	}
	if !strings.HasPrefix(err.Error(), "config: "+path+":4:") {
		t.Fatalf("message %q", err)
	}
}

func TestFileErrorType(t *testing.T) {
	path := writeConfig(t, "schema_version = 3\n[gateway]\nhost = \"x\"\n  port = \"eighty\"\n")
	_, _, err := Load(path, nil)
	var fe *FileError
	if !errors.As(err, &fe) {
		t.Fatalf("err = %v, want *FileError", err)
	}
	if fe.Line != 4 || fe.Column != 3 || fe.Key != "gateway.port" || !strings.Contains(fe.Msg, "expected integer, got string") {
		t.Fatalf("FileError = %+v", fe)
	}
}

// A TOML date/time (tomledit.Datetime) is named as a datetime, the word users know, not by its Go type.
func TestFileErrorDatetime(t *testing.T) {
	_, _, err := LoadBytes("c.toml", []byte("schema_version = 3\n[gateway]\nport = 1979-05-27\n"), nil, nil)
	var fe *FileError
	if !errors.As(err, &fe) || fe.Key != "gateway.port" || !strings.Contains(fe.Msg, "expected integer, got datetime") {
		t.Fatalf("err = %v, want a *FileError saying the port got a datetime", err)
	}
}

func TestFileErrorDuplicateKey(t *testing.T) {
	path := writeConfig(t, "[gateway]\nport = 1\nport = 2\n")
	_, _, err := Load(path, nil)
	var fe *FileError
	if !errors.As(err, &fe) || fe.Line != 3 {
		t.Fatalf("err = %#v", err)
	}
}

func TestValidationListsAllProblems(t *testing.T) {
	path := writeConfig(t, `schema_version = 3
[agents.a]
model_provider = "openai.missing"
risk_profile = "nope"

[risk_profiles.r]
level = "read_only"

[users.bob]
uid = 1000
permission_profiles = ["ghost"]

[gateway]
port = 70000
`)
	_, _, err := Load(path, nil)
	var ve *ValidationError
	if !errors.As(err, &ve) || !errors.Is(err, ErrInvalidConfig) {
		t.Fatalf("err = %v", err)
	}
	want := map[string]int{
		"agents.a.model_provider":       3,
		"agents.a.risk_profile":         4,
		"gateway.port":                  14,
		"risk_profiles.r.level":         7,
		"users.bob.permission_profiles": 11,
	}
	got := map[string]int{}
	for _, p := range ve.Problems {
		got[p.Path] = p.Line
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("problems %v\nwant %v", ve.Problems, want)
	}
	if !strings.Contains(err.Error(), `"read_only" is not accepted`) {
		t.Fatalf("message %q", err)
	}
}

func TestUnknownKeysWarn(t *testing.T) {
	path := writeConfig(t, string(DefaultTOML())+"\n[gateway]\nfoo = 1\n\n[mystery]\nx = 2\ny = 3\n")
	cfg, warnings, err := Load(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"config: unknown key gateway.foo at line 15", "config: unknown key mystery at line 17"}
	if !reflect.DeepEqual(warnings, want) {
		t.Fatalf("warnings %q", warnings)
	}
	if cfg.Gateway.Port != 42617 {
		t.Fatalf("port %d", cfg.Gateway.Port)
	}
}

func TestEnvOverrides(t *testing.T) {
	path := writeConfig(t, string(DefaultTOML())+"\n[providers.models.openai.default]\nmodel = \"gpt-4o\"\n")
	env := []string{
		"ZEROCLAW_providers__models__openai__default__api_key=sk-test",
		"ZEROCLAW_GATEWAY__PORT=9000",
		"ZEROCLAW_rpc__max-frame-bytes=1024",
		"ZEROCLAW_CONFIG_DIR=/elsewhere",
		"ZEROCLAW_nothing__here=1",
		"HOME=/root",
	}
	cfg, warnings, err := Load(path, env)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Providers.Models["openai"]["default"].APIKey != "sk-test" || cfg.Gateway.Port != 9000 || cfg.RPC.MaxFrameBytes != 1024 {
		t.Fatalf("overrides not applied: %+v", cfg)
	}
	if len(warnings) != 1 || !strings.Contains(warnings[0], "ZEROCLAW_nothing__here") {
		t.Fatalf("warnings %q", warnings)
	}
	_, _, err = Load(path, []string{"ZEROCLAW_gateway__port=abc"})
	if !errors.Is(err, ErrInvalidValue) || !strings.Contains(err.Error(), "ZEROCLAW_gateway__port") {
		t.Fatalf("bad env value err = %v", err)
	}
}

// A syntax error inside a multi-line value must name the key being defined and never echo the value's
// text (it may be a secret): the line that fails there is part of the value, not a "key = value" line.
func TestFileErrorSyntaxNeverEchoesValue(t *testing.T) {
	cases := []struct{ text, key, secret string }{
		{"[providers.models.openai.default]\nmodel = \"m\"\napi_key = \"\"\"\nsk-live-ABCDEF=GHIJ\n",
			"providers.models.openai.default.api_key", "sk-live-ABCDEF"},
		{"[gateway]\npaired_tokens = [\n  \"tok-9f8e=abc\" \"x\",\n]\n", "gateway.paired_tokens", "tok-9f8e"},
		{"[agents.a.env]\n# GH = 1\n\nGH_TOKEN = '''\n[ghp_s3cret=]\n", "agents.a.env.GH_TOKEN", "ghp_s3cret"},
	}
	for _, c := range cases {
		path := writeConfig(t, c.text)
		_, _, err := Load(path, nil)
		var fe *FileError
		if !errors.As(err, &fe) {
			t.Fatalf("err = %v, want *FileError", err)
		}
		if strings.Contains(err.Error(), c.secret) || fe.Key != c.key {
			t.Errorf("FileError %q (key %q) must name %s and not echo the value", err, fe.Key, c.key)
		}
	}
}

// An empty inline table defines its table exactly as an empty [header] does: users.bob = {} is a user, and
// echo.default = {} a provider an agent may use.
func TestEmptyInlineTableDefinesMapEntry(t *testing.T) {
	path := writeConfig(t, `schema_version = 3
users.bob = {}

[providers.models.echo]
default = {}

[agents.a]
model_provider = "echo.default"
risk_profile = "r"

[risk_profiles]
r = { level = "full" }
`)
	cfg, _, err := Load(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := cfg.Users["bob"]; !ok {
		t.Fatalf("users = %v", cfg.Users)
	}
	if _, ok := cfg.Providers.Models["echo"]["default"]; !ok {
		t.Fatalf("providers = %v", cfg.Providers.Models)
	}
	m, err := Open(path, nil, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	// A set-to-default below it keeps the entry without a second definition of the table.
	if _, err := m.Set(t.Context(), "users.bob.uid", json.RawMessage(`0`), nil); err != nil {
		t.Fatal(err)
	}
	if _, ok := m.Current().Users["bob"]; !ok {
		t.Fatalf("users = %v", m.Current().Users)
	}
}

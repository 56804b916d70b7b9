package config

import (
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
)

// Upstream's newer permission profiles write grants as a table of resource to verbs, with admin as a flag and
// config writes narrowed by config_write_paths (crates/zeroclaw-config PermissionProfileConfig); they load beside
// our list form, as the same "resource:verb" grants.
func TestGrantsTableLoadsBesideList(t *testing.T) {
	raw := string(DefaultTOML()) + `
[permission_profiles.ours]
grants = ["config:read", "sessions:execute"]

[permission_profiles.upstream]
grants = { sessions = ["create", "read", "execute"], memory = ["read"] }

[permission_profiles.writer]
config_write_paths = ["agents.*", "gateway.port", "*"]
grants = { config = ["read", "update"] }

[permission_profiles.scoped]
config_write_paths = ["channels.*"]

[permission_profiles.scoped.grants]
config = ["update"]

[permission_profiles.boss]
admin = true

[permission_profiles.nothing]
grants = {}
`
	cfg, warnings, err := LoadBytes("config.toml", []byte(raw), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range warnings {
		if strings.Contains(w, "permission_profiles") {
			t.Errorf("warning %q", w)
		}
	}
	for name, want := range map[string][]string{
		"ours":     {"config:read", "sessions:execute"},
		"upstream": {"memory:read", "sessions:create", "sessions:execute", "sessions:read"},
		"writer":   {"config:read", "config:update", "config:update:agents.**", "config:update:gateway.port"},
		"scoped":   {"config:update:channels.**"},
		"boss":     {"admin"},
		"nothing":  nil,
	} {
		pp, ok := cfg.PermissionProfiles[name]
		got := slices.Sorted(slices.Values(pp.Grants))
		if !ok || !slices.Equal(got, want) {
			t.Errorf("%s: grants %q (defined %v), want %q", name, got, ok, want)
		}
	}
}

// A verb or resource upstream does not know is an error naming the key, as a wrong type is.
func TestGrantsTableRejectsUnknownVerb(t *testing.T) {
	raw := string(DefaultTOML()) + "\n[permission_profiles.p]\ngrants = { sessions = [\"fly\"] }\n"
	_, _, err := LoadBytes("config.toml", []byte(raw), nil, nil)
	if err == nil || !strings.Contains(err.Error(), "permission_profiles.p.grants.sessions") || !strings.Contains(err.Error(), "fly") {
		t.Fatalf("err = %v", err)
	}
}

// allowed_agents and allowed_tools load in either form; absent is nil (no restriction), [] is kept as none
// (a set of [] writes the key instead of removing it), an agent they name must exist, and a rename follows them.
func TestAllowedSelectors(t *testing.T) {
	m, path := openManager(t, commentedConfig+`
[permission_profiles.bot]
allowed_agents = ["default"]
allowed_tools = ["file_read"]

[permission_profiles.up.grants]
sessions = ["create", "read"]

[permission_profiles.up]
allowed_agents = []
`)
	cfg := m.Current()
	if pp := cfg.PermissionProfiles["bot"]; !slices.Equal(pp.AllowedAgents, []string{"default"}) || !slices.Equal(pp.AllowedTools, []string{"file_read"}) {
		t.Fatalf("bot %+v", pp)
	}
	if pp := cfg.PermissionProfiles["up"]; pp.AllowedAgents == nil || len(pp.AllowedAgents) != 0 || pp.AllowedTools != nil {
		t.Fatalf("up %+v: [] must load as an empty non-nil list, absent as nil", pp)
	}
	for _, w := range m.Warnings() {
		if strings.Contains(w, "allowed_") {
			t.Errorf("warned about a known key: %s", w)
		}
	}
	if _, err := m.Set(t.Context(), "permission_profiles.bot.allowed_tools", json.RawMessage(`[]`), nil); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(readFile(t, path), "allowed_tools = []") || m.Current().PermissionProfiles["bot"].AllowedTools == nil {
		t.Fatalf("a set of [] removed the key:\n%s", readFile(t, path))
	}
	_, err := m.Set(t.Context(), "permission_profiles.bot.allowed_agents", json.RawMessage(`["ghost"]`), nil)
	if !errors.Is(err, ErrInvalidConfig) || !strings.Contains(err.Error(), `names "ghost" but [agents.ghost] is not configured`) {
		t.Fatalf("dangling agent: %v", err)
	}
	if _, err := m.CreateMapKey(t.Context(), "agents", "helper", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Set(t.Context(), "permission_profiles.bot.allowed_agents", json.RawMessage(`["helper", "default"]`), nil); err != nil {
		t.Fatal(err)
	}
	if _, err := m.RenameMapKey(t.Context(), "agents", "helper", "aide", nil); err != nil {
		t.Fatal(err)
	}
	if got := m.Current().PermissionProfiles["bot"].AllowedAgents; !slices.Equal(got, []string{"aide", "default"}) {
		t.Fatalf("after the rename: %v", got)
	}
}

package config

import (
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

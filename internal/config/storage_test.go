package config

import (
	"strings"
	"testing"
)

// [storage] backend: sqlite by default; postgres.<alias> must name a defined connection, and an unknown alias,
// a bare "postgres" or another value is one clear error naming the key.
func TestStorageBackendValidation(t *testing.T) {
	const head = "schema_version = 3\n"
	cfg, _, err := LoadBytes("config.toml", []byte(head), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if k, a := cfg.Storage.StorageBackend(); k != "sqlite" || a != "" || cfg.Storage.ClaimTTLSecs != DefaultClaimTTLSecs {
		t.Fatalf("default: %s %q ttl %d", k, a, cfg.Storage.ClaimTTLSecs)
	}
	ok := head + "[storage]\nbackend = \"postgres.shared\"\nclaim_ttl_secs = 5\n[storage.postgres.shared]\ndb_url = \"postgres:///x\"\n"
	cfg, _, err = LoadBytes("config.toml", []byte(ok), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if k, a := cfg.Storage.StorageBackend(); k != "postgres" || a != "shared" || cfg.Storage.ClaimTTLSecs != 5 {
		t.Fatalf("postgres.shared: %s %q ttl %d", k, a, cfg.Storage.ClaimTTLSecs)
	}
	for _, c := range []struct{ body, want string }{
		{"[storage]\nbackend = \"postgres.ghost\"\n", `storage.backend: storage "postgres.ghost" is not defined under [storage.postgres]`},
		{"[storage]\nbackend = \"postgres\"\n", `storage.backend: name the connection: "postgres.<alias>"`},
		{"[storage]\nbackend = \"mysql\"\n", `storage.backend: must be sqlite or postgres.<alias>, got "mysql"`},
		{"[storage]\nclaim_ttl_secs = 1\n", `storage.claim_ttl_secs: must be between 2 and 3600, got 1`},
	} {
		_, _, err := LoadBytes("config.toml", []byte(head+c.body), nil, nil)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: %v, want an error containing %q", c.body, err, c.want)
		}
	}
}

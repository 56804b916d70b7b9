package config

import (
	"os"
	"path/filepath"
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

// int64 keys ([storage] max_disk_bytes, observability.log_persistence_max_bytes) load like int ones; the lenient
// decoder once refused every int64 field ("expected int64, got integer") and disabled the entry.
func TestStorageBudgetLoadsAndIsValidated(t *testing.T) {
	base := "schema_version = 3\n\n[providers.models.echo.default]\nmodel = \"echo\"\n\n[agents.default]\n" +
		"model_provider = \"echo.default\"\nrisk_profile = \"s\"\n\n[risk_profiles.s]\nlevel = \"supervised\"\n\n" +
		"[observability]\nlog_persistence = \"rotating\"\nlog_persistence_max_bytes = 5000000000\n\n[storage]\n"
	p := filepath.Join(t.TempDir(), "config.toml")
	if err := os.WriteFile(p, []byte(base+"max_disk_bytes = 6000000000\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	m, err := OpenLenient(p, nil, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if c := m.Current(); c.Storage.MaxDiskBytes != 6_000_000_000 || c.Observability.LogPersistenceMaxBytes != 5_000_000_000 {
		t.Fatalf("max_disk_bytes %d, log_persistence_max_bytes %d", c.Storage.MaxDiskBytes, c.Observability.LogPersistenceMaxBytes)
	}
	raw := []byte(base + "max_disk_bytes = -1\n")
	_, _, problems, err := Check(p, raw, nil, nil)
	var found bool
	for _, pr := range problems {
		found = found || strings.Contains(pr.Path, "max_disk_bytes") && strings.Contains(pr.Message, "negative")
	}
	if !found {
		t.Fatalf("a negative budget: problems %v, err %v; want one naming storage.max_disk_bytes", problems, err)
	}
}

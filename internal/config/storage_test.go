package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

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

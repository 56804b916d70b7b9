package memory

import (
	"database/sql"
	"os"
	"testing"
)

func openPlain(path string) (*sql.DB, error) { return sql.Open("sqlite", path) }

// postgresFactory returns the PostgreSQL backend factory when ZEROCLAW_TEST_PG_DSN is set; in CI (CI=true) a
// missing DSN fails the test instead of silently running SQLite only.
func postgresFactory(t *testing.T) func(t *testing.T) Backend {
	dsn := os.Getenv("ZEROCLAW_TEST_PG_DSN")
	if dsn == "" {
		if os.Getenv("CI") == "true" {
			t.Fatal("CI=true but ZEROCLAW_TEST_PG_DSN is not set: .ci/run must start PostgreSQL")
		}
		return nil
	}
	return nil // filled in with the postgres backend
}

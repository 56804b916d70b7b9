package memory

import (
	"context"
	"database/sql"
	"os"
	"testing"

	"github.com/zeroclaw-go/zeroclaw/internal/pgdb/pgtest"
)

func openPlain(path string) (*sql.DB, error) { return sql.Open("sqlite", path) }

// pgDSN returns the PostgreSQL server the tests run against (ZEROCLAW_TEST_PG_DSN; .ci/run and
// scripts/pg-test-server.sh start one and export it). Without one the PostgreSQL half of the suite cannot run:
// under CI=true that fails the test, elsewhere the caller runs the SQLite half alone.
func pgDSN(t testing.TB) string {
	t.Helper()
	dsn := os.Getenv("ZEROCLAW_TEST_PG_DSN")
	if dsn == "" && os.Getenv("CI") == "true" {
		t.Fatal("ZEROCLAW_TEST_PG_DSN is not set: under CI=true the memory suite must run against PostgreSQL " +
			"(source scripts/pg-test-server.sh first, as .ci/run does)")
	}
	return dsn
}

// pgSchema creates a schema of its own for one test on the server dsn names and drops it when the test ends, so
// tests running at once never see each other's rows.
func pgSchema(t testing.TB, dsn string) string {
	t.Helper()
	return pgtest.Schema(t, dsn)
}

// openTestPostgres opens the PostgreSQL backend on a fresh schema of the test server.
func openTestPostgres(t testing.TB, dsn string) *Postgres {
	t.Helper()
	pg, err := OpenPostgres(context.Background(), PostgresOptions{URL: dsn, Schema: pgSchema(t, dsn), Now: nowFunc})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = pg.Close() })
	return pg
}

// postgresFactory returns the PostgreSQL backend factory for the backend suite, nil when no server is
// configured outside CI.
func postgresFactory(t *testing.T) func(t *testing.T) Backend {
	t.Helper()
	dsn := pgDSN(t)
	if dsn == "" {
		return nil
	}
	return func(t *testing.T) Backend { return openTestPostgres(t, dsn) }
}

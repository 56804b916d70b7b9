// Package pgtest gives tests a PostgreSQL database of their own: the server ZEROCLAW_TEST_PG_DSN names (.ci/run
// and scripts/pg-test-server.sh start one and export it), a fresh schema per call, dropped when the test ends.
package pgtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"testing"

	"github.com/zeroclaw-go/zeroclaw/internal/pgdb"
)

// DSN is the test server's URL. Without one the PostgreSQL tests cannot run: under CI=true that fails the test;
// elsewhere it logs why and returns "", and the caller has nothing to run against.
func DSN(t testing.TB) string {
	t.Helper()
	dsn := os.Getenv("ZEROCLAW_TEST_PG_DSN")
	if dsn == "" {
		if os.Getenv("CI") == "true" {
			t.Fatal("ZEROCLAW_TEST_PG_DSN is not set: under CI=true the PostgreSQL tests must run (source scripts/pg-test-server.sh first, as .ci/run does)")
		}
		t.Log("ZEROCLAW_TEST_PG_DSN not set: PostgreSQL tests not run (source scripts/pg-test-server.sh)")
	}
	return dsn
}

// Schema makes a fresh schema name and drops that schema when the test ends.
func Schema(t testing.TB, dsn string) string {
	t.Helper()
	var b [6]byte
	_, _ = rand.Read(b[:])
	schema := "zc_test_" + hex.EncodeToString(b[:])
	t.Cleanup(func() {
		p, err := pgdb.Open(context.Background(), dsn, pgdb.Options{Size: 1})
		if err != nil {
			t.Errorf("drop test schema: %v", err)
			return
		}
		defer p.Close()
		if _, err := p.Exec(context.Background(), "DROP SCHEMA IF EXISTS "+pgdb.Quote(schema)+" CASCADE"); err != nil {
			t.Errorf("drop test schema: %v", err)
		}
	})
	return schema
}

// Open is a pool on a fresh schema of the test server (nil when there is none outside CI). More pools on the
// same schema, as other daemons would have, come from OpenSchema.
func Open(t testing.TB) (*pgdb.Pool, string) {
	t.Helper()
	dsn := DSN(t)
	if dsn == "" {
		return nil, ""
	}
	schema := Schema(t, dsn)
	return OpenSchema(t, dsn, schema), schema
}

// OpenSchema is another pool on schema, closed when the test ends.
func OpenSchema(t testing.TB, dsn, schema string) *pgdb.Pool {
	t.Helper()
	p, err := pgdb.Open(context.Background(), dsn, pgdb.Options{Schema: schema})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Close)
	return p
}

package e2e

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
)

// testPG returns the PostgreSQL server of the tests (ZEROCLAW_TEST_PG_DSN, exported by
// scripts/pg-test-server.sh, which .ci/run sources) and a schema of this test's own, dropped when it ends. Under
// CI=true a missing server fails the test; elsewhere it returns "" and the test has nothing to run against.
func testPG(t *testing.T) (dsn, schema string) {
	t.Helper()
	dsn = os.Getenv("ZEROCLAW_TEST_PG_DSN")
	if dsn == "" {
		if os.Getenv("CI") == "true" {
			t.Fatal("ZEROCLAW_TEST_PG_DSN is not set: under CI=true the PostgreSQL memory tests must run (source scripts/pg-test-server.sh)")
		}
		t.Log("ZEROCLAW_TEST_PG_DSN not set: PostgreSQL test not run (source scripts/pg-test-server.sh)")
		return "", ""
	}
	var b [6]byte
	_, _ = rand.Read(b[:])
	schema = "zc_e2e_" + hex.EncodeToString(b[:])
	t.Cleanup(func() {
		ctx := context.Background()
		conn, err := pgx.Connect(ctx, dsn)
		if err != nil {
			t.Errorf("drop test schema: %v", err)
			return
		}
		defer conn.Close(ctx)
		if _, err := conn.Exec(ctx, "DROP SCHEMA IF EXISTS "+schema+" CASCADE"); err != nil {
			t.Errorf("drop test schema: %v", err)
		}
	})
	return dsn, schema
}

// homeWithPostgres is a fresh HOME whose install keeps its memories in PostgreSQL (memory.backend =
// "postgres.shared"), with the default echo agent.
func homeWithPostgres(t *testing.T, dsn, schema string) string {
	t.Helper()
	cfg := fmt.Sprintf(`schema_version = 3

[providers.models.echo.default]
model = "echo"

[agents.default]
model_provider = "echo.default"
risk_profile = "supervised"

[risk_profiles.supervised]
level = "supervised"
workspace_only = true

[memory]
backend = "postgres.shared"

[storage.postgres.shared]
db_url = %q
schema = %q
`, dsn, schema)
	h, _ := homeWithConfig(t, cfg)
	return h
}

// Two daemons on two installs pointing at one PostgreSQL database recall each other's facts: in the
// [Memory context] of a turn (the echo model repeats the provider request's last user message) and through
// `zeroclaw memory search`.
func TestMemoryPostgresSharedByTwoInstalls(t *testing.T) {
	dsn, schema := testPG(t)
	if dsn == "" {
		return
	}
	h1, h2 := homeWithPostgres(t, dsn, schema), homeWithPostgres(t, dsn, schema)
	d1 := start(t, env(h1), "daemon")
	waitSocket(t, d1, agentSock(h1))
	d2 := start(t, env(h2), "daemon")
	waitSocket(t, d2, agentSock(h2))

	// Install 1's agent stores a fact with its memory_store tool.
	runOK(t, env(h1), "", "agent", "-m", `/tool memory_store {"key":"home_city","content":"The user lives in Lisbon"}`)
	// Install 2's agent gets it in its next turn.
	out := runOK(t, env(h2), "", "agent", "-m", "where does the user live?")
	if !strings.Contains(out, "[Memory context]\n- home_city: The user lives in Lisbon\n[/Memory context]") {
		t.Fatalf("install 2's turn has no memory of install 1's fact:\n%s", out)
	}
	// Install 2 stores one (memory/store); install 1 finds it.
	c := dialRPC(t, agentSock(h2))
	c.Initialize()
	if r := c.Call("memory/store", map[string]any{"key": "favourite_food", "content": "The user loves pastel de nata",
		"category": "core", "agent": "default"}, 2); r["error"] != nil {
		t.Fatalf("memory/store on install 2: %v", r)
	}
	if out := runOK(t, env(h1), "", "memory", "search", "pastel", "--agent", "default"); !strings.Contains(out, "favourite_food") {
		t.Fatalf("install 1 does not find install 2's fact:\n%s", out)
	}
	out = runOK(t, env(h1), "", "agent", "-m", "which pastel does the user love?")
	if !strings.Contains(out, "- favourite_food: The user loves pastel de nata\n") {
		t.Fatalf("install 1's turn has no memory of install 2's fact:\n%s", out)
	}
	// Nothing was written to a brain.db.
	for _, h := range []string{h1, h2} {
		if _, err := os.Stat(filepath.Join(h, ".zeroclaw", "data", "memory", "brain.db")); err == nil {
			t.Fatalf("%s has a brain.db: the postgres backend was not used", h)
		}
	}
}

// A config change that names another memory backend takes effect without a restart: the daemon opens
// PostgreSQL, refuses the agent that wrote to brain.db with the lock's hint, and finds brain.db's memories
// again when the config names sqlite again.
func TestMemoryBackendReloadLock(t *testing.T) {
	dsn, schema := testPG(t)
	if dsn == "" {
		return
	}
	h := home(t)
	d := start(t, env(h), "daemon")
	waitSocket(t, d, agentSock(h))
	c := dialRPC(t, agentSock(h))
	c.Initialize()
	store := func(id int) map[string]any {
		return c.Call("memory/store", map[string]any{"key": "editor", "content": "The user edits with helix",
			"category": "core", "agent": "default"}, id)
	}
	if r := store(2); r["error"] != nil {
		t.Fatalf("memory/store on sqlite: %v", r)
	}
	r := c.Call("config/set-many", map[string]any{"sets": []map[string]any{
		{"prop": "storage.postgres.shared.db_url", "value": dsn},
		{"prop": "storage.postgres.shared.schema", "value": schema},
		{"prop": "memory.backend", "value": "postgres.shared"},
	}}, 3)
	if r["error"] != nil {
		t.Fatalf("config/set-many: %v", r)
	}
	r = store(4)
	e, _ := r["error"].(map[string]any)
	if e == nil || e["code"] != float64(-32602) || !strings.Contains(fmt.Sprint(e["message"]), `keeps its memories in "sqlite"`) ||
		!strings.Contains(fmt.Sprint(e["message"]), `"postgres.shared"`) {
		t.Fatalf("memory/store after the switch: %v", r)
	}
	// The daemon opened the PostgreSQL table (the install-wide list reads it: empty, not brain.db's row).
	if out := runOK(t, env(h), "", "memory", "list"); strings.Contains(out, "editor") {
		t.Fatalf("memory list after the switch still reads brain.db:\n%s", out)
	}
	conn, err := pgx.Connect(t.Context(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	var n int
	if err := conn.QueryRow(t.Context(), "SELECT count(*) FROM "+schema+".memories").Scan(&n); err != nil || n != 0 {
		t.Fatalf("the daemon did not create its table in PostgreSQL: %d %v", n, err)
	}
	if r := c.Call("config/set", map[string]any{"prop": "memory.backend", "value": "sqlite"}, 5); r["error"] != nil {
		t.Fatalf("config/set back: %v", r)
	}
	if out := runOK(t, env(h), "", "memory", "search", "helix", "--agent", "default"); !strings.Contains(out, "editor") {
		t.Fatalf("brain.db's memory after switching back:\n%s", out)
	}
}

package memory

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// needPG returns the test server's DSN; outside CI without one these PostgreSQL-only tests have nothing to run
// against and pass vacuously (CI=true fails instead, see pgDSN).
func needPG(t *testing.T) string {
	t.Helper()
	dsn := pgDSN(t)
	if dsn == "" {
		t.Log("ZEROCLAW_TEST_PG_DSN not set: PostgreSQL tests not run (source scripts/pg-test-server.sh)")
	}
	return dsn
}

func pgExec(t *testing.T, dsn, sql string) {
	t.Helper()
	conn, err := pgx.Connect(t.Context(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(t.Context(), sql); err != nil {
		t.Fatalf("%v\n%s", err, sql)
	}
}

// A table made by upstream before agent scoping (key UNIQUE, no agent_id, raw session ids) is brought to the
// scoped shape on open: its rows belong to the default agent, session ids are sanitized, and another agent may
// then store the same key.
func TestPostgresUpstreamPreAgentTable(t *testing.T) {
	dsn := needPG(t)
	if dsn == "" {
		return
	}
	schema := pgSchema(t, dsn)
	pgExec(t, dsn, `CREATE SCHEMA `+schema+`;
CREATE TABLE `+schema+`.memories (id TEXT PRIMARY KEY, key TEXT UNIQUE NOT NULL, content TEXT NOT NULL,
  category TEXT NOT NULL, created_at TIMESTAMPTZ NOT NULL, updated_at TIMESTAMPTZ NOT NULL, session_id TEXT);
INSERT INTO `+schema+`.memories VALUES ('0f8e7d6c-5b4a-4392-8170-6f5e4d3c2b1a', 'home_city', 'Lives in Lisbon', 'core',
  '2025-11-02T08:00:00+00:00', '2025-11-02T08:00:00+00:00', 'telegram:chat 42');`)
	p, err := OpenPostgres(t.Context(), PostgresOptions{URL: dsn, Schema: schema, Now: nowFunc})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	def, _ := p.EnsureAgent(t.Context(), "default")
	got, err := p.Recall(t.Context(), Query{Text: "Lisbon", Limit: 5, Agents: []string{def}})
	if err != nil || len(got) != 1 || got[0].SessionID == nil || *got[0].SessionID != "telegram_chat_42" ||
		got[0].Timestamp != "2025-11-02T08:00:00+00:00" || got[0].AgentAlias == nil || *got[0].AgentAlias != "default" {
		t.Fatalf("recall after migration: %+v %v", got, err)
	}
	other, _ := p.EnsureAgent(t.Context(), "other")
	if err := p.Store(t.Context(), other, Record{Key: "home_city", Content: "Lives in Porto", Category: CategoryCore, Now: fixedNow}); err != nil {
		t.Fatalf("unique(key) still in force: %v", err)
	}
	if e, _ := p.Get(t.Context(), "home_city", []string{def}); e == nil || e.Content != "Lives in Lisbon" {
		t.Fatalf("default's row: %+v", e)
	}
	// Opening again changes nothing (the migration is idempotent).
	again, err := OpenPostgres(t.Context(), PostgresOptions{URL: dsn, Schema: schema, Now: nowFunc})
	if err != nil {
		t.Fatalf("second open: %v", err)
	}
	again.Close()
}

// Two processes opening one table at once (two daemons starting) both succeed: the schema work is serialized.
func TestPostgresConcurrentOpen(t *testing.T) {
	dsn := needPG(t)
	if dsn == "" {
		return
	}
	schema := pgSchema(t, dsn)
	var wg sync.WaitGroup
	errs := make([]error, 4)
	for i := range errs {
		wg.Go(func() {
			p, err := OpenPostgres(t.Context(), PostgresOptions{URL: dsn, Schema: schema, Now: nowFunc})
			if err == nil {
				_, err = p.EnsureAgent(t.Context(), "default")
				p.Close()
			}
			errs[i] = err
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
}

// Bad settings are specific errors, and no error quotes the password of db_url.
func TestPostgresBadSettings(t *testing.T) {
	for _, c := range []struct {
		o    PostgresOptions
		want string
	}{
		{PostgresOptions{URL: "postgres://u:hunter2@127.0.0.1:1/db", Schema: "bad-name"}, `schema "bad-name"`},
		{PostgresOptions{URL: "postgres://u:hunter2@127.0.0.1:1/db", Table: "1memories"}, `table "1memories"`},
		{PostgresOptions{URL: " "}, "db_url is empty"},
		{PostgresOptions{URL: "postgres://u:hunter2@[::1/db"}, "not a PostgreSQL connection URL"},
	} {
		_, err := OpenPostgres(t.Context(), c.o)
		if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "hunter2") {
			t.Errorf("%+v: %v", c.o, err)
		}
	}
	// A server that is not there: a connection error, still without the password.
	_, err := OpenPostgres(t.Context(), PostgresOptions{URL: "postgres://u:hunter2@127.0.0.1:1/db?connect_timeout=2"})
	if err == nil || strings.Contains(err.Error(), "hunter2") {
		t.Fatalf("unreachable server: %v", err)
	}
}

// A trailing '*' is a prefix search, as in the SQLite backend; time bounds and the LIKE fallback apply.
func TestPostgresPrefixTimeAndFallback(t *testing.T) {
	dsn := needPG(t)
	if dsn == "" {
		return
	}
	p := openTestPostgres(t, dsn)
	ctx := t.Context()
	a, _ := p.EnsureAgent(ctx, "alpha")
	for _, r := range []Record{
		{Key: "lang", Content: "programs in Haskell", Category: CategoryCore, Now: fixedNow.Add(-48 * 3600e9)},
		{Key: "email", Content: "reach me at ada@example.org", Category: CategoryCore, Now: fixedNow},
	} {
		if err := p.Store(ctx, a, r); err != nil {
			t.Fatal(err)
		}
	}
	if got, _ := p.Recall(ctx, Query{Text: "hask*", Limit: 5, Agents: []string{a}}); len(got) != 1 || got[0].Key != "lang" {
		t.Fatalf("prefix: %+v", got)
	}
	if got, _ := p.Recall(ctx, Query{Text: "hask", Limit: 5, Agents: []string{a}}); len(got) != 0 {
		t.Fatalf("a bare word matched as a prefix: %+v", got)
	}
	since := fixedNow.Add(-3600e9).Format("2006-01-02T15:04:05Z07:00")
	if got, _ := p.Recall(ctx, Query{Text: "haskell", Limit: 5, Agents: []string{a}, Since: since}); len(got) != 0 {
		t.Fatalf("since ignored: %+v", got)
	}
	// "example.org" is one token to the text-search parser; "example" is found by the LIKE fallback.
	got, err := p.Recall(ctx, Query{Text: "example", Limit: 5, Agents: []string{a}})
	if err != nil || len(got) != 1 || got[0].Key != "email" || *got[0].Score != 1 {
		t.Fatalf("fallback: %+v %v", got, err)
	}
	if _, err := p.Recall(ctx, Query{Text: "x", Limit: 5, Since: "yesterday"}); !errors.Is(err, ErrInvalid) {
		t.Fatalf("bad since: %v", err)
	}
}

// A word half of the memories contain (by the server's statistics) does not select rows: the rows the other
// terms match come first, ranked with every term; rows only the common word matches fill the rest.
func TestPostgresCommonWordDoesNotSelect(t *testing.T) {
	dsn := needPG(t)
	if dsn == "" {
		return
	}
	p := openTestPostgres(t, dsn)
	ctx := t.Context()
	a, _ := p.EnsureAgent(ctx, "a")
	contents := []string{"about lisbon trams", "about lisbon and porto lisbon", "notes about a lisbon cafe"}
	for i := range 27 {
		contents = append(contents, fmt.Sprintf("note %d about the garden", i))
	}
	for i, c := range contents {
		if err := p.Store(ctx, a, Record{Key: fmt.Sprintf("k%02d", i), Content: c, Category: CategoryCore, Now: fixedNow.Add(time.Duration(i) * time.Second)}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := p.pool.Exec(ctx, "ANALYZE "+p.table); err != nil {
		t.Fatal(err)
	}
	sel, common, err := p.splitCommon(ctx, []string{"about", "lisbon"})
	if err != nil || !slices.Equal(sel, []string{"lisbon"}) || !slices.Equal(common, []string{"about"}) {
		t.Fatalf("split: %q %q %v", sel, common, err)
	}
	got, err := p.Recall(ctx, Query{Text: "about lisbon", Limit: 5, Agents: []string{a}})
	if err != nil || len(got) != 5 {
		t.Fatalf("recall: %+v %v", got, err)
	}
	if got[0].Key != "k01" || *got[0].Score != 1 {
		t.Fatalf("best: %+v", got[0])
	}
	for i, e := range got {
		if lisbon := strings.Contains(e.Content, "lisbon"); lisbon != (i < 3) {
			t.Fatalf("rank %d: %q", i, e.Content)
		}
	}
	if got[3].Key != "k29" || got[4].Key != "k28" {
		t.Fatalf("fill is not the newest common-word rows: %s %s", got[3].Key, got[4].Key)
	}
}

package pgdb_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zeroclaw-go/zeroclaw/internal/pgdb"
	"github.com/zeroclaw-go/zeroclaw/internal/pgdb/pgtest"
)

// Text arrays go to the server in the array input form and come back in its output form, which quotes only
// elements that need it; both directions keep quotes, backslashes, commas, braces and spaces.
func TestArrayText(t *testing.T) {
	in := []string{"plain", `with "quotes"`, `back\slash`, "a,b", "{braces}", "two words", ""}
	got, err := pgdb.ParseArray(pgdb.ArrayLiteral(in))
	if err != nil || !slices.Equal(got, in) {
		t.Fatalf("round trip of %q: %q, %v", in, got, err)
	}
	for _, bad := range []string{``, `x`, `{"open}`, `{"a"b}`} {
		if _, err := pgdb.ParseArray([]byte(bad)); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

func TestParseURLNeverQuotesTheURL(t *testing.T) {
	for _, u := range []string{"", "   ", "postgres://u:s3cret@host:notaport/db"} {
		_, err := pgdb.ParseURL(u)
		if !errors.Is(err, pgdb.ErrInvalid) {
			t.Fatalf("%q: %v, want ErrInvalid", u, err)
		}
		if u != "" && strings.Contains(err.Error(), "s3cret") {
			t.Fatalf("the error quotes the password: %v", err)
		}
	}
	if _, err := pgdb.Open(context.Background(), "postgres:///x?host=/nonexistent", pgdb.Options{Schema: "bad-name"}); !errors.Is(err, pgdb.ErrInvalid) {
		t.Fatalf("a schema that is not an identifier: %v", err)
	}
}

// Every parameter type round-trips through the server as text, NULL included, and results parse back.
func TestParamsRoundTrip(t *testing.T) {
	p, _ := pgtest.Open(t)
	if p == nil {
		return
	}
	ctx := t.Context()
	at := time.Date(2026, 12, 3, 7, 30, 0, 123456000, time.UTC)
	rows, err := p.Query(ctx, `SELECT $1::text, $2::bigint, $3::boolean, $4::timestamptz, $5::text[], $6::bytea, $7::text IS NULL, $8::float8`,
		"it's \"q\" \\ ünï", int64(-1<<40), true, at, []string{"a,b", `"`, ""}, []byte{0, 1, 0xff}, nil, 0.25)
	if err != nil {
		t.Fatal(err)
	}
	r := rows[0]
	if r.String(0) != "it's \"q\" \\ ünï" {
		t.Errorf("text: %q", r.String(0))
	}
	if n, err := r.Int64(1); err != nil || n != -1<<40 {
		t.Errorf("bigint: %d %v", n, err)
	}
	if !r.Bool(2) {
		t.Error("bool")
	}
	if got, err := r.Time(3); err != nil || !got.Equal(at) {
		t.Errorf("time: %v %v", got, err)
	}
	if arr, err := pgdb.ParseArray(r[4]); err != nil || !slices.Equal(arr, []string{"a,b", `"`, ""}) {
		t.Errorf("array: %q %v", arr, err)
	}
	if r.String(5) != `\x0001ff` {
		t.Errorf("bytea: %q", r.String(5))
	}
	if !r.Bool(6) {
		t.Error("nil was not NULL")
	}
	if _, err := p.Query(ctx, "SELECT $1::text", struct{}{}); err == nil {
		t.Error("an unsupported parameter type was sent")
	}
}

// A failed function rolls back everything it wrote; a nil one commits.
func TestInTxRollsBackOnError(t *testing.T) {
	p, _ := pgtest.Open(t)
	if p == nil {
		return
	}
	ctx := t.Context()
	if _, err := p.Exec(ctx, "CREATE TABLE t (v TEXT)"); err != nil {
		t.Fatal(err)
	}
	boom := errors.New("boom")
	err := p.InTx(ctx, func(tx *pgdb.Tx) error {
		if _, err := tx.Exec(ctx, "INSERT INTO t VALUES ('lost')"); err != nil {
			return err
		}
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatal(err)
	}
	if err := p.InTx(ctx, func(tx *pgdb.Tx) error {
		_, err := tx.Exec(ctx, "INSERT INTO t VALUES ('kept')")
		return err
	}); err != nil {
		t.Fatal(err)
	}
	rows, err := p.Query(ctx, "SELECT v FROM t ORDER BY v")
	if err != nil || len(rows) != 1 || rows[0].String(0) != "kept" {
		t.Fatalf("rows %v, %v", rows, err)
	}
}

// Daemons starting at once on one database each migrate; every step runs exactly once (a step that is not
// idempotent would fail the second time), all end at the last version, and a daemon that knows fewer steps
// than the database has refuses to touch it.
func TestMigrateConcurrentDaemonsApplyEachStepOnce(t *testing.T) {
	dsn := pgtest.DSN(t)
	if dsn == "" {
		return
	}
	schema := pgtest.Schema(t, dsn)
	steps := []pgdb.Migration{
		{Version: 1, Name: "table", SQL: "CREATE TABLE m (id INT PRIMARY KEY); INSERT INTO m VALUES (1)"},
		{Version: 2, Name: "column", SQL: "ALTER TABLE m ADD COLUMN note TEXT; INSERT INTO m VALUES (2, 'two')"},
		{Version: 3, Name: "index", SQL: "CREATE INDEX m_note ON m (note)"},
	}
	const daemons = 5
	var wg sync.WaitGroup
	errs := make([]error, daemons)
	vers := make([]int, daemons)
	for i := range daemons {
		p := pgtest.OpenSchema(t, dsn, schema)
		wg.Add(1)
		go func() {
			defer wg.Done()
			vers[i], errs[i] = pgdb.Migrate(context.Background(), p, "test", steps)
		}()
	}
	wg.Wait()
	for i := range daemons {
		if errs[i] != nil || vers[i] != 3 {
			t.Fatalf("daemon %d: version %d, %v", i, vers[i], errs[i])
		}
	}
	p := pgtest.OpenSchema(t, dsn, schema)
	ctx := t.Context()
	rows, err := p.Query(ctx, "SELECT count(*) FROM m")
	if err != nil || rows[0].String(0) != "2" {
		t.Fatalf("m holds %v rows (%v): a step ran more than once or not at all", rows, err)
	}
	rows, err = p.Query(ctx, "SELECT version, name FROM zc_schema_versions WHERE component = 'test' ORDER BY version")
	if err != nil || len(rows) != 3 || rows[2].String(1) != "index" {
		t.Fatalf("versions %v, %v", rows, err)
	}
	// A later step, added by an upgrade, is applied once on the next start.
	v, err := pgdb.Migrate(ctx, p, "test", append(steps, pgdb.Migration{Version: 4, Name: "more", SQL: "INSERT INTO m VALUES (4, 'four')"}))
	if err != nil || v != 4 {
		t.Fatalf("upgrade: %d %v", v, err)
	}
	// The older daemon, which knows three steps, refuses.
	if _, err := pgdb.Migrate(ctx, p, "test", steps); !errors.Is(err, pgdb.ErrSchemaNewer) {
		t.Fatalf("an older daemon on a newer schema: %v", err)
	}
	// Another component's versions are its own.
	if v, err := pgdb.Migrate(ctx, p, "other", steps[:1:1]); err == nil || v != 0 {
		// steps[0] creates m again, which exists: the failure is the step's own, and it is reported with its name.
		t.Fatalf("a failing step: %d, %v", v, err)
	} else if !strings.Contains(err.Error(), "other migration 1 (table)") {
		t.Fatalf("the failure does not name its step: %v", err)
	}
	if _, err := pgdb.Migrate(ctx, p, "gaps", []pgdb.Migration{{Version: 2, SQL: "SELECT 1"}}); err == nil {
		t.Fatal("a list with a gap was accepted")
	}
}

// The pool never holds more connections than its size, however many callers wait.
func TestPoolBoundsConnections(t *testing.T) {
	dsn := pgtest.DSN(t)
	if dsn == "" {
		return
	}
	schema := pgtest.Schema(t, dsn)
	app := fmt.Sprintf("zc_pool_test_%d", time.Now().UnixNano())
	p, err := pgdb.Open(t.Context(), dsn, pgdb.Options{Size: 3, Schema: schema, AppName: app})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	var wg sync.WaitGroup
	var mu sync.Mutex
	most := 0
	for range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rows, err := p.Query(context.Background(), "SELECT count(*) FROM pg_stat_activity WHERE application_name = $1", app)
			if err != nil {
				t.Error(err)
				return
			}
			n, _ := rows[0].Int64(0)
			mu.Lock()
			most = max(most, int(n))
			mu.Unlock()
		}()
	}
	wg.Wait()
	if most < 1 || most > 3 {
		t.Fatalf("the server saw %d connections of a pool of 3", most)
	}
}

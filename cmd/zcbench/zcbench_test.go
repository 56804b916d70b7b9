package main

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

var testBinary string

func TestMain(m *testing.M) {
	if path := os.Getenv(echoFloorEnv); path != "" { // the test binary re-executed as the echo floor
		os.Exit(serveEchoFloor(path))
	}
	if body := os.Getenv(httpFloorEnv); body != "" { // and as the gateway's floor
		os.Exit(serveHTTPFloor(body))
	}
	dir, err := os.MkdirTemp("", "zcbench-test-bin")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	testBinary = filepath.Join(dir, "zeroclaw")
	build := exec.Command("go", buildArgs(testBinary)...) // the README's build command, as zcbench runs it
	build.Dir, build.Env = "../..", append(os.Environ(), buildEnv)
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building zeroclaw:", err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// The bare insert loop opens its database with the daemon's own pragmas: the constant in internal/store/db.go
// and ours are the same string, so a change to the store's pragmas shows up here rather than as a silently
// unfair floor.
func TestBarePragmasAreTheStores(t *testing.T) {
	f, err := parser.ParseFile(token.NewFileSet(), "../../internal/store/db.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	var got string
	found := false
	ast.Inspect(f, func(n ast.Node) bool {
		vs, ok := n.(*ast.ValueSpec)
		if !ok || len(vs.Names) != 1 || vs.Names[0].Name != "dsnPragmas" || len(vs.Values) != 1 {
			return true
		}
		found = true
		got = concat(t, vs.Values[0])
		return false
	})
	if !found {
		t.Fatal("internal/store/db.go declares no dsnPragmas constant: update the bare loop's pragmas and this test")
	}
	if got != storePragmas {
		t.Fatalf("the store opens SQLite with %q, the bare loop with %q", got, storePragmas)
	}
}

// concat evaluates a constant expression made of string literals joined with +.
func concat(t *testing.T, e ast.Expr) string {
	switch e := e.(type) {
	case *ast.BasicLit:
		s, err := strconv.Unquote(e.Value)
		if err != nil {
			t.Fatal(err)
		}
		return s
	case *ast.BinaryExpr:
		return concat(t, e.X) + concat(t, e.Y)
	case *ast.ParenExpr:
		return concat(t, e.X)
	}
	t.Fatalf("dsnPragmas is not a concatenation of string literals: %T", e)
	return ""
}

// The floor for durable appends runs on the schema the real daemon created, FTS trigger included: after the
// bare loop every message is findable through sessions_fts, as it is in the daemon's store.
func TestBareLoopUsesTheDaemonsSchemaWithFTS(t *testing.T) {
	in, err := newInstall(installOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer in.remove()
	d, err := startDaemon(testBinary, in)
	if err != nil {
		t.Fatal(err)
	}
	c, _, err := dialInit(in.sock)
	if err != nil {
		t.Fatal(err)
	}
	c.Close()
	if err := d.stop(); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	schema, err := copySchema(ctx, filepath.Join(in.root, "data", "sessions", "sessions.db"))
	if err != nil {
		t.Fatal(err)
	}
	joined := strings.Join(schema, "\n")
	for _, want := range []string{"CREATE TABLE sessions", "session_metadata", "USING fts5", "CREATE TRIGGER sessions_ai"} {
		if !strings.Contains(strings.Join(strings.Fields(joined), " "), want) {
			t.Errorf("copied schema lacks %q:\n%s", want, joined)
		}
	}
	const n = 50
	path := filepath.Join(t.TempDir(), "bare.db")
	if rate, err := bareAppends(ctx, path, schema, n); err != nil || rate <= 0 {
		t.Fatalf("bare loop: %v, %v", rate, err)
	}
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var hits, count int
	if err := db.QueryRow(`SELECT COUNT(*) FROM sessions_fts WHERE sessions_fts MATCH 'go'`).Scan(&hits); err != nil || hits != n {
		t.Fatalf("FTS hits after the bare loop = %d, %v; want %d (the insert trigger indexes every row)", hits, err, n)
	}
	if err := db.QueryRow(`SELECT SUM(message_count) FROM session_metadata`).Scan(&count); err != nil || count != n {
		t.Fatalf("session_metadata counts %d messages, %v; want %d", count, err, n)
	}
}

// A whole quick bench against the real binary: every registered section produces its rows, in the table and in
// bench.json; the gateway, which this daemon may not have, is either measured or marked n/a with the reason;
// the connection storm serves exactly the limit and refuses the rest with -32004. Timings are not asserted.
func TestQuickBenchAllSections(t *testing.T) {
	out := t.TempDir()
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), []string{"-bin", testBinary, "-runs", "1", "-quick", "-out", out}, &stdout, &stderr)
	if code == 2 {
		t.Fatalf("zcbench failed (exit 2):\n%s\n%s", stdout.String(), stderr.String())
	}
	b, err := os.ReadFile(filepath.Join(out, "bench.json"))
	if err != nil {
		t.Fatal(err)
	}
	var rep report
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatal(err)
	}
	sections := map[string]bool{}
	for _, m := range rep.Metrics {
		sections[m.Section] = true
		if m.NA == "" && len(m.Values) != 1 {
			t.Errorf("%s / %s: %d values for one run", m.Section, m.Name, len(m.Values))
		}
		if m.NA != "" && !strings.Contains(m.NA, "not built yet") && m.Section != "binary" {
			t.Errorf("%s / %s is n/a for another reason: %s", m.Section, m.Name, m.NA)
		}
		if m.Section == "load" && strings.HasPrefix(m.Name, "of 2,000 attempts") && (m.Pass == nil || !*m.Pass) {
			t.Errorf("load: %s = %v, want %s", m.Name, m.Values, m.Target.Text)
		}
	}
	for _, s := range registry {
		if !sections[s.name] {
			t.Errorf("section %s produced no row", s.name)
		}
		if !strings.Contains(stdout.String(), "| "+s.name+" |") {
			t.Errorf("section %s is not in the table:\n%s", s.name, stdout.String())
		}
	}
	md, err := os.ReadFile(filepath.Join(out, "bench.md"))
	if err != nil {
		t.Fatal(err)
	}
	head, table, ok := bytes.Cut(md, []byte("\n\n"))
	if !ok || !bytes.Contains(stdout.Bytes(), table) || !bytes.Contains(head, []byte("- Machine: ")) || !bytes.Contains(head, []byte("- Command: `go run ./cmd/zcbench -bin ")) {
		t.Errorf("bench.md is not the run's header and the printed table:\n%s", md)
	}
}

// -sections keeps registry order, always keeps startup (it starts the daemon) and refuses a name it lacks.
func TestChooseSections(t *testing.T) {
	got, err := chooseSections("gateway, status")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, s := range got {
		names = append(names, s.name)
	}
	if strings.Join(names, ",") != "startup,status,gateway" {
		t.Fatalf("sections %v, want startup,status,gateway", names)
	}
	if all, _ := chooseSections(""); len(all) != len(registry) {
		t.Fatalf("no -sections ran %d sections of %d", len(all), len(registry))
	}
	if _, err := chooseSections("status,nope"); err == nil || !strings.Contains(err.Error(), `"nope"`) {
		t.Fatalf("an unknown section: %v", err)
	}
}

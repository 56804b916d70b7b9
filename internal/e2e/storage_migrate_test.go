package e2e

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/zeroclaw-go/zeroclaw/internal/pgdb"
	"github.com/zeroclaw-go/zeroclaw/internal/store"
	"github.com/zeroclaw-go/zeroclaw/internal/store/pgchat"
)

// zeroclaw storage migrate with the real binary: a daemon's sessions (and many more seeded into its SQLite
// file) are copied into PostgreSQL by a migration killed with SIGKILL mid-copy and then run again, which copies
// the rest once and verifies everything; the SQLite file is kept as it was. Then the PostgreSQL sessions are
// copied back into a fresh install, whose daemon serves the RPC session's history unchanged. A migration while
// the daemon runs is refused.
func TestStorageMigrateBothWaysAcrossKill(t *testing.T) {
	dsn, schema := testPG(t)
	if dsn == "" {
		return
	}
	h := home(t)
	sock := agentSock(h)
	d := start(t, env(h), "daemon")
	waitSocket(t, d, sock)
	c := dialStream(t, sock)
	c.Request("session/new", map[string]any{"session_id": "mig", "agent_alias": "default"}, 1)
	c.Result(1)
	for i := range 3 {
		c.Request("session/prompt", map[string]any{"session_id": "mig", "prompt": fmt.Sprintf("hello %d", i)}, 10+i)
		c.Result(10 + i)
	}
	want := messages(t, c, "mig", 20)
	if len(want) < 6 {
		t.Fatalf("the turns stored %d messages", len(want))
	}
	// Refused while the daemon runs: it holds the install lock.
	if _, errOut, code := run(t, env(h), dsn+"\n", "storage", "migrate", "--to", "postgres", "-", "--schema", schema); code == 0 || !strings.Contains(errOut, "a daemon runs") {
		t.Fatalf("migrate with the daemon running: exit %d, %s", code, errOut)
	}
	if _, errOut, code := run(t, env(h), "", "stop"); code != 0 {
		t.Fatalf("stop: %d %s", code, errOut)
	}
	d.wait(t, 30*time.Second)

	// Many more sessions, so that the kill lands mid-copy.
	dbPath := filepath.Join(h, ".zeroclaw", "data", "sessions", "sessions.db")
	ctx := context.Background()
	src, err := store.OpenChat(ctx, dbPath)
	if err != nil {
		t.Fatal(err)
	}
	const seeded = 1500
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for i := range seeded {
		key := fmt.Sprintf("seed_%04d", i)
		if _, err := src.BeginTurn(ctx, key, "default", "", "t", t0, "question "+key); err != nil {
			t.Fatal(err)
		}
		if _, err := src.EndTurn(ctx, key, "assistant", "answer "+key, t0.Add(time.Second), "idle"); err != nil {
			t.Fatal(err)
		}
	}
	before, err := src.List(ctx, "", 0)
	if err != nil {
		t.Fatal(err)
	}
	total := len(before)
	src.Close()

	cmd := exec.Command(binary, "storage", "migrate", "--to", "postgres", "-", "--schema", schema)
	cmd.Env = env(h)
	cmd.Stdin = strings.NewReader(dsn + "\n")
	m := startCmd(t, cmd, "storage migrate (killed)")
	if !waitStderr(m, "chat sessions: 200/") {
		t.Fatalf("the migration reported no progress: %s", m.stderr.String())
	}
	signal(t, m, syscall.SIGKILL)
	<-m.done
	if strings.Contains(m.stderr.String(), fmt.Sprintf("chat sessions: %d/%d", total, total)) {
		t.Fatal("the migration finished before the kill: the test cut nothing")
	}

	out, errOut, code := run(t, env(h), dsn+"\n", "storage", "migrate", "--to", "postgres", "-", "--schema", schema)
	if code != 0 {
		t.Fatalf("resumed migrate: exit %d\n%s\n%s", code, out, errOut)
	}
	var n, copied, skipped int
	if _, err := fmt.Sscanf(out, "chat sessions: %d (", &n); err != nil || n != total {
		t.Fatalf("resumed migrate reported %d sessions (%v), want %d:\n%s", n, err, total, out)
	}
	if i := strings.Index(out, "in PostgreSQL: "); i < 0 {
		t.Fatalf("output: %s", out)
	} else if _, err := fmt.Sscanf(out[i:], "in PostgreSQL: %d copied now, %d were", &copied, &skipped); err != nil || copied == 0 || skipped < 200 || copied+skipped != total {
		t.Fatalf("after a kill the resumed run copied %d and skipped %d of %d (%v):\n%s", copied, skipped, total, err, out)
	}
	t.Logf("the resumed run copied %d sessions and found %d copied before the kill", copied, skipped)
	if !strings.Contains(out, "counts and SHA-256 digests verified") || !strings.Contains(out, "SQLite files are kept") || strings.Contains(out+errOut, dsn) {
		t.Fatalf("output: %s %s", out, errOut)
	}

	// In PostgreSQL: each session once, every message once.
	pool, err := pgdb.Open(ctx, dsn, pgdb.Options{Schema: schema})
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	rows, err := pool.Query(ctx, "SELECT (SELECT count(*) FROM zc_chat_sessions), (SELECT count(*) FROM zc_chat_messages), (SELECT count(*) FROM zc_chat_messages WHERE session_key LIKE 'seed_%')")
	if err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(rows[0].String(0), " ", rows[0].String(2)); got != fmt.Sprint(total, " ", 2*seeded) {
		t.Fatalf("PostgreSQL holds %s sessions / seeded messages, want %d / %d", got, total, 2*seeded)
	}
	pg, err := pgchat.Open(ctx, pool, pgchat.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer pg.Close()
	got, err := pg.All(ctx, "rpc_mig")
	if err != nil || len(got) != len(want) {
		t.Fatalf("rpc_mig in PostgreSQL: %d messages, %v", len(got), err)
	}
	// The SQLite file is kept and still holds everything.
	src, err = store.OpenChat(ctx, dbPath)
	if err != nil {
		t.Fatal(err)
	}
	after, err := src.List(ctx, "", 0)
	src.Close()
	if err != nil || len(after) != total {
		t.Fatalf("the SQLite file after the migration: %d sessions, %v", len(after), err)
	}

	// Back into a fresh install, whose daemon serves the history.
	h2 := home(t)
	d2 := start(t, env(h2), "daemon") // creates the install
	waitSocket(t, d2, agentSock(h2))
	if _, errOut, code := run(t, env(h2), "", "stop"); code != 0 {
		t.Fatalf("stop: %d %s", code, errOut)
	}
	d2.wait(t, 30*time.Second)
	out, errOut, code = run(t, env(h2), dsn+"\n", "storage", "migrate", "--to", "sqlite", "-", "--schema", schema)
	if code != 0 || !strings.Contains(out, fmt.Sprintf("chat sessions: %d (", total)) || !strings.Contains(out, fmt.Sprintf("%d copied now, 0 were already there", total)) {
		t.Fatalf("migrate back: exit %d\n%s\n%s", code, out, errOut)
	}
	d2 = start(t, env(h2), "daemon")
	waitSocket(t, d2, agentSock(h2))
	c2 := dialStream(t, agentSock(h2))
	if back := messages(t, c2, "mig", 2); !slices.Equal(back, want) {
		t.Fatalf("the history after the round trip:\n%q\nwant\n%q", back, want)
	}
}

// waitStderr waits (a generous minute) until the process's stderr holds sub or the process ended.
func waitStderr(p *proc, sub string) bool {
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		if strings.Contains(p.stderr.String(), sub) {
			return true
		}
		if p.exited() {
			return strings.Contains(p.stderr.String(), sub)
		}
		time.Sleep(5 * time.Millisecond)
	}
	return false
}

package e2e

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/zeroclaw-go/zeroclaw/internal/store"
)

// digest sums what sessions.db holds, so a file rewritten by compaction can be compared with the original.
func digest(t *testing.T, p string) string {
	t.Helper()
	c, err := sql.Open("sqlite", "file:"+p+"?mode=ro&_pragma=busy_timeout(5000)")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var n, bytes, maxID int64
	var last string
	if err := c.QueryRow("SELECT count(*), coalesce(sum(length(content)), 0), coalesce(max(id), 0) FROM sessions").Scan(&n, &bytes, &maxID); err != nil {
		t.Fatalf("reading %s: %v", p, err)
	}
	if err := c.QueryRow("SELECT coalesce(group_concat(content, '|'), '') FROM (SELECT content FROM sessions WHERE session_key != 'bulk' ORDER BY id)").Scan(&last); err != nil {
		t.Fatalf("reading %s: %v", p, err)
	}
	return fmt.Sprintf("%d rows, %d bytes, max id %d, %s", n, bytes, maxID, last)
}

// zeroclaw storage compact with the real binary, killed with SIGKILL while it copies: each time the store is
// the old file or the new one, whole (integrity_check clean, the same rows); a later compaction removes the
// half-written copy and finishes; the daemon then serves the session it had before. A running daemon's stores
// are never compacted under it.
func TestStorageCompactSurvivesKill9(t *testing.T) {
	t.Parallel()
	h := home(t)
	sock := agentSock(h)
	d := start(t, env(h), "daemon")
	waitSocket(t, d, sock)
	c := dialStream(t, sock)
	c.Request("session/new", map[string]any{"session_id": "keep", "agent_alias": "default"}, 1)
	c.Result(1)
	for i := range 3 {
		c.Request("session/prompt", map[string]any{"session_id": "keep", "prompt": fmt.Sprintf("kept-%d", i)}, 10+i)
		c.Result(10 + i)
	}
	want := messages(t, c, "keep", 90)
	c.Conn().Close()

	// While the daemon runs the command refuses and names the way out.
	_, stderr, code := run(t, env(h), "", "storage", "compact")
	if code == 0 || !strings.Contains(stderr, "zeroclaw stop") || !strings.Contains(stderr, "a daemon (pid") {
		t.Fatalf("compact under a running daemon: exit %d\n%s", code, stderr)
	}
	signal(t, d, syscall.SIGTERM)
	if code := d.wait(t, time.Minute); code != 0 {
		t.Fatalf("daemon exit %d\n%s", code, d.stderr.String())
	}

	// Bulk rows, most deleted again, so the file is mostly free pages and the copy takes a while.
	db := filepath.Join(h, ".zeroclaw", "data", "sessions", "sessions.db")
	w, err := sql.Open("sqlite", db+"?_pragma=busy_timeout(5000)&_pragma=journal_mode(WAL)")
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		`WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM n WHERE i < 3000)
		 INSERT INTO sessions (session_key, role, content, created_at) SELECT 'bulk', 'user', hex(randomblob(6000)), '2026-01-01T00:00:00Z' FROM n`,
		`DELETE FROM sessions WHERE session_key = 'bulk' AND id % 3 != 0`,
	} {
		if _, err := w.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	before := digest(t, db)
	fi, err := os.Stat(db)
	if err != nil {
		t.Fatal(err)
	}
	sizeBefore := fi.Size()

	tmp := db + store.CompactSuffix
	duringCopy := 0
	for round := range 6 {
		p := start(t, env(h), "storage", "compact", "--store", "sessions")
		for !p.exited() {
			if fi, err := os.Stat(tmp); err == nil && fi.Size() > 0 {
				break
			}
			time.Sleep(time.Millisecond)
		}
		time.Sleep(time.Duration(round) * 15 * time.Millisecond) // later and later into the copy
		if !p.exited() {
			if _, err := os.Stat(tmp); err == nil {
				duringCopy++
			}
			signal(t, p, syscall.SIGKILL)
		}
		p.wait(t, time.Minute)
		problems, err := store.IntegrityCheck(context.Background(), db)
		if err != nil || len(problems) > 0 {
			t.Fatalf("round %d: after kill -9 the store fails its integrity check: %v %v", round, problems, err)
		}
		if got := digest(t, db); got != before {
			t.Fatalf("round %d: after kill -9 the store holds %q, want %q", round, got, before)
		}
	}
	if duringCopy == 0 {
		t.Fatal("no SIGKILL landed while the copy was being written: the test proved nothing about a cut compaction")
	}
	t.Logf("%d of 6 kills landed during the copy", duringCopy)

	out := runOK(t, env(h), "", "storage", "compact")
	if !strings.Contains(out, "sessions: ") {
		t.Fatalf("compact output:\n%s", out)
	}
	if _, err := os.Lstat(tmp); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the copy a kill left behind is still there: %v", err)
	}
	if got := digest(t, db); got != before {
		t.Fatalf("after compaction the store holds %q, want %q", got, before)
	}
	fi, err = os.Stat(db)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Size() >= sizeBefore {
		t.Fatalf("sessions.db is %d bytes after compaction, %d before: no space given back", fi.Size(), sizeBefore)
	}

	d = start(t, env(h), "daemon")
	waitSocket(t, d, sock)
	c = dialStream(t, sock)
	defer c.Conn().Close()
	if got := messages(t, c, "keep", 91); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("after compaction the session holds\n%v\nwant\n%v", got, want)
	}
}

package e2e

import (
	"database/sql"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/zeroclaw-go/zeroclaw/internal/rpctest/ndjson"
)

// outsideReaderEnv makes the test binary an outside SQLite reader (see TestMain): it opens the database the
// variable names, reads its schema and closes it, as `sqlite3 FILE .tables` or Python's sqlite3 would.
const outsideReaderEnv = "ZC_E2E_OUTSIDE_READER"

// outsideRead is the child process's whole job.
func outsideRead(path string) int {
	db, err := sql.Open("sqlite", "file:"+path+"?mode=rw&_pragma=busy_timeout(5000)")
	if err == nil {
		var n int
		err = db.QueryRow("SELECT count(*) FROM sqlite_master").Scan(&n)
		err = errors.Join(err, db.Close())
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "outside reader:", err)
		return 1
	}
	return 0
}

// readOutside opens and closes the database at path from another process.
func readOutside(t *testing.T, path string) {
	t.Helper()
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), outsideReaderEnv+"="+path)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("outside reader of %s: %v\n%s", path, err, out)
	}
}

// sqliteLockHolder returns the pid of the process holding SQLite's SHARED lock (a read lock on the 510 bytes
// after the pending byte) on the database at path, 0 when none does. A connection in WAL mode keeps that lock
// while it is open: it is how another process's connection knows it is not the last one, and must not
// checkpoint and delete the WAL on close. The probe only asks (F_GETLK); this process takes no lock.
func sqliteLockHolder(t *testing.T, path string) int {
	t.Helper()
	fd, err := syscall.Open(path, syscall.O_RDONLY, 0)
	if err != nil {
		t.Fatalf("lock probe: %v", err)
	}
	defer syscall.Close(fd)
	const pendingByte = 0x40000000
	lk := syscall.Flock_t{Type: syscall.F_WRLCK, Whence: 0, Start: pendingByte + 2, Len: 510}
	if err := syscall.FcntlFlock(uintptr(fd), syscall.F_GETLK, &lk); err != nil {
		t.Fatalf("lock probe: %v", err)
	}
	if lk.Type == syscall.F_UNLCK {
		return 0
	}
	return int(lk.Pid)
}

// liveEnv is one store case's install, daemon and client.
type liveEnv struct {
	t       *testing.T
	h, root string
	sock    string
	d       *proc
	c       *ndjson.Client
	rid     int
	gateway string // the gateway's base URL
}

func (e *liveEnv) call(method string, params any) map[string]any {
	e.t.Helper()
	e.rid++
	e.c.Request(method, params, e.rid)
	return e.c.Result(e.rid)
}

func (e *liveEnv) start() {
	e.t.Helper()
	e.d = start(e.t, env(e.h), "daemon")
	waitSocket(e.t, e.d, e.sock)
	e.c = dialStream(e.t, e.sock)
	listening := regexp.MustCompile(`msg="gateway listening" component=gateway addr=([0-9.:]+)`)
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if m := listening.FindStringSubmatch(e.d.stderr.String()); m != nil {
			e.gateway = "http://" + m[1]
			return
		}
	}
	e.t.Fatalf("the gateway does not listen:\n%s", e.d.stderr.String())
}

// liveStore is one SQLite store of the daemon: a write the daemon acknowledges, and how to find it again.
type liveStore struct {
	name  string
	file  string                          // under the data dir
	seed  func(t *testing.T, root string) // the install before the daemon's first start (nil: fresh)
	write func(e *liveEnv, n int)
	has   func(e *liveEnv, n int) bool
}

// memoryWrite and memoryHas: brain.db's acknowledged write is a memory/store.
func memoryWrite(e *liveEnv, n int) {
	e.call("memory/store", map[string]any{"key": fmt.Sprintf("live_%d", n), "content": fmt.Sprintf("fact %d", n),
		"category": "core", "agent": "default"})
}

func memoryHas(e *liveEnv, n int) bool {
	e.rid++
	e.c.Request("memory/get", map[string]any{"key": fmt.Sprintf("live_%d", n), "agent": "default"}, e.rid)
	f := e.c.Frame()
	return f.Error == nil && strings.Contains(string(f.Result), fmt.Sprintf("fact %d", n))
}

// seedPreAgentBrain writes an upstream brain.db from before agent scoping, which the daemon backs up and
// rebuilds when it opens it.
func seedPreAgentBrain(t *testing.T, root string) {
	p := filepath.Join(root, "data", "memory", "brain.db")
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("sqlite", p)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(`
CREATE TABLE memories (id TEXT PRIMARY KEY, key TEXT NOT NULL UNIQUE, content TEXT NOT NULL,
  category TEXT NOT NULL DEFAULT 'core', embedding BLOB, created_at TEXT NOT NULL, updated_at TEXT NOT NULL,
  session_id TEXT, namespace TEXT DEFAULT 'default', importance REAL DEFAULT 0.5, superseded_by TEXT);
CREATE VIRTUAL TABLE memories_fts USING fts5(key, content, content=memories, content_rowid=rowid);
CREATE TRIGGER memories_ai AFTER INSERT ON memories BEGIN
  INSERT INTO memories_fts(rowid, key, content) VALUES (new.rowid, new.key, new.content); END;
INSERT INTO memories (id, key, content, category, created_at, updated_at)
VALUES ('11111111-2222-4333-8444-555555555555', 'home_city', 'Lives in Lisbon', 'core',
  '2025-11-02T08:00:00+00:00', '2025-11-02T08:00:00+00:00');`); err != nil {
		t.Fatal(err)
	}
}

var liveStores = []liveStore{
	{name: "sessions", file: "sessions/sessions.db",
		write: func(e *liveEnv, n int) {
			if n == 1 {
				e.call("session/new", map[string]any{"session_id": "live", "agent_alias": "default"})
			}
			if r := e.call("session/prompt", map[string]any{"session_id": "live", "prompt": fmt.Sprintf("turn-%d", n)}); r["outcome"] != "completed" {
				e.t.Fatalf("turn %d: %v", n, r)
			}
		},
		has: func(e *liveEnv, n int) bool {
			e.rid++
			return strings.Contains(strings.Join(messages(e.t, e.c, "live", e.rid), "|"), fmt.Sprintf("user:turn-%d|", n))
		}},
	{name: "acp-sessions", file: "sessions/acp-sessions.db",
		write: func(e *liveEnv, n int) {
			if n == 1 {
				e.call("session/new", map[string]any{"session_id": "acp-live", "agent_alias": "default", "chat_mode": "acp"})
			}
			if r := e.call("session/prompt", map[string]any{"session_id": "acp-live", "prompt": fmt.Sprintf("acp-turn-%d", n)}); r["outcome"] != "completed" {
				e.t.Fatalf("ACP turn %d: %v", n, r)
			}
		},
		has: func(e *liveEnv, n int) bool {
			if n == 1 { // resume it once
				e.call("session/new", map[string]any{"session_id": "acp-live", "agent_alias": "default", "chat_mode": "acp"})
			}
			e.rid++
			return strings.Contains(strings.Join(messages(e.t, e.c, "acp-live", e.rid), "|"), fmt.Sprintf("user:acp-turn-%d|", n))
		}},
	{name: "cron", file: "cron/jobs.db",
		write: func(e *liveEnv, n int) {
			e.call("cron/add", map[string]any{"agent": "default", "name": fmt.Sprintf("live-%d", n),
				"schedule": map[string]any{"kind": "every", "every_ms": 3600_000}, "command": "true"})
		},
		has: func(e *liveEnv, n int) bool {
			return strings.Contains(fmt.Sprint(e.call("cron/list", map[string]any{})), fmt.Sprintf("live-%d", n))
		}},
	{name: "control-plane", file: "control_plane.db",
		write: func(e *liveEnv, n int) {
			job := e.call("cron/add", map[string]any{"agent": "default", "name": fmt.Sprintf("task-%d", n),
				"schedule": map[string]any{"kind": "every", "every_ms": 3600_000}, "command": "echo ran"})
			if r := e.call("cron/trigger", map[string]any{"id": job["id"]}); r["status"] != "ok" {
				e.t.Fatalf("cron/trigger %d: %v", n, r)
			}
		},
		has: func(e *liveEnv, n int) bool {
			// The task of job task-N's run: its idem_key is cron:<job id>#<run id>.
			var id string
			for _, j := range e.call("cron/list", map[string]any{})["jobs"].([]any) {
				if jm := j.(map[string]any); jm["name"] == fmt.Sprintf("task-%d", n) {
					id = jm["id"].(string)
				}
			}
			db, err := sql.Open("sqlite", "file:"+filepath.Join(e.root, "data", "control_plane.db")+"?mode=ro")
			if err != nil {
				e.t.Fatal(err)
			}
			defer db.Close()
			var k int
			if err := db.QueryRow("SELECT count(*) FROM tasks WHERE idem_key LIKE ? AND status = 'completed'", "cron:"+id+"#%").Scan(&k); err != nil {
				e.t.Fatal(err)
			}
			return id != "" && k == 1
		}},
	{name: "devices", file: "devices.db",
		write: func(e *liveEnv, n int) {
			code := e.call("pair/code", map[string]any{})["pairing_code"].(string)
			req, _ := http.NewRequest("POST", e.gateway+"/api/pair",
				strings.NewReader(fmt.Sprintf(`{"code":%q,"device_name":"device-%d"}`, code, n)))
			req.Header.Set("Content-Type", "application/json")
			res, err := (&http.Client{Transport: &http.Transport{Proxy: nil}}).Do(req)
			if err != nil {
				e.t.Fatal(err)
			}
			res.Body.Close()
			if res.StatusCode != 200 {
				e.t.Fatalf("pair device %d: HTTP %d", n, res.StatusCode)
			}
		},
		has: func(e *liveEnv, n int) bool {
			return strings.Contains(fmt.Sprint(e.call("devices/list", map[string]any{})), fmt.Sprintf("device-%d", n))
		}},
	{name: "brain", file: "memory/brain.db", write: memoryWrite, has: memoryHas},
	// The rebuild of an upstream brain.db copies it first: through SQLite, never as a file.
	{name: "brain-rebuilt", file: "memory/brain.db", seed: seedPreAgentBrain, write: memoryWrite, has: memoryHas},
}

// The operator's doctor never costs the daemon an acknowledged write, whatever another program does next. For
// each SQLite store of the real daemon: a write, `zeroclaw doctor` (run inside the daemon), a program that
// opens and closes the database file (an operator's sqlite3, a backup), a second write the daemon
// acknowledges, kill -9, a restart: both writes are there. The daemon also still holds SQLite's lock on the
// file after the doctor: had anything in the daemon opened and closed the file outside SQLite, the kernel
// would have dropped the lock, and the outside program's close would have taken the daemon's WAL with it.
func TestDoctorThenOutsideReaderKeepsAcknowledgedWrites(t *testing.T) {
	t.Parallel()
	for _, s := range liveStores {
		t.Run(s.name, func(t *testing.T) {
			h, root := cronHome(t)
			appendFile(t, filepath.Join(root, "config.toml"), "\n[gateway]\nport = 0\n")
			if s.seed != nil {
				s.seed(t, root)
			}
			e := &liveEnv{t: t, h: h, root: root, sock: filepath.Join(root, "data", "daemon.sock")}
			e.start()
			db := filepath.Join(root, "data", filepath.FromSlash(s.file))
			if s.seed != nil {
				if copies, _ := filepath.Glob(db + ".backup-*"); len(copies) != 1 {
					t.Fatalf("the seeded database was not backed up before its rebuild: %q", copies)
				}
			}
			s.write(e, 1)
			pid := e.d.cmd.Process.Pid
			if got := sqliteLockHolder(t, db); got != pid {
				t.Errorf("before the doctor, the SHARED lock on %s is held by pid %d, want the daemon's %d", s.file, got, pid)
			}

			out, errOut, _ := run(t, env(h), "", "doctor", "--offline")
			if !strings.Contains(out, "checked by the running daemon") {
				t.Fatalf("doctor did not run in the daemon:\n%s\n%s", out, errOut)
			}
			if got := sqliteLockHolder(t, db); got != pid {
				t.Errorf("after the doctor, the SHARED lock on %s is held by pid %d, want the daemon's %d", s.file, got, pid)
			}
			readOutside(t, db)
			s.write(e, 2)

			signal(t, e.d, syscall.SIGKILL)
			e.d.wait(t, 10*time.Second)
			e.start()
			for n := 1; n <= 2; n++ {
				if !s.has(e, n) {
					t.Errorf("write %d to %s, acknowledged before kill -9, is lost", n, s.file)
				}
			}
		})
	}
}

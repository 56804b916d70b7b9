package e2e

import (
	"database/sql"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	_ "modernc.org/sqlite"
)

// The upstream chat schema of state.md §4 (sessions + session_metadata), as an old install leaves it.
const upstreamChatSchema = `
CREATE TABLE sessions (id INTEGER PRIMARY KEY AUTOINCREMENT, session_key TEXT NOT NULL, role TEXT NOT NULL,
    content TEXT NOT NULL, created_at TEXT NOT NULL);
CREATE INDEX idx_sessions_key ON sessions(session_key);
CREATE INDEX idx_sessions_key_id ON sessions(session_key, id);
CREATE TABLE session_metadata (session_key TEXT PRIMARY KEY, created_at TEXT NOT NULL, last_activity TEXT NOT NULL,
    message_count INTEGER NOT NULL DEFAULT 0, name TEXT, state TEXT NOT NULL DEFAULT 'idle', turn_id TEXT,
    turn_started_at TEXT, agent_alias TEXT, channel_id TEXT, room_id TEXT, sender_id TEXT);
CREATE INDEX idx_session_metadata_agent_alias ON session_metadata(agent_alias);
CREATE INDEX idx_session_metadata_channel_id ON session_metadata(channel_id);
INSERT INTO sessions (session_key, role, content, created_at) VALUES
    ('telegram_42', 'user', 'remind me about the dentist', '2025-01-02T03:04:05.123+00:00'),
    ('telegram_42', 'assistant', 'Noted: dentist on Friday', '2025-01-02T03:04:06+00:00');
INSERT INTO session_metadata (session_key, created_at, last_activity, message_count, name, agent_alias) VALUES
    ('telegram_42', '2025-01-02T03:04:05.123+00:00', '2025-01-02T03:04:06+00:00', 2, 'Dentist', 'default');
`

// legacyConfig is an upstream schema v2 config, as an old install has it: the offline provider named by the v2
// globals, and the agent v2 ran implicitly.
const legacyConfig = `# my zeroclaw, written by hand
schema_version = 2

# offline provider for now
[providers]
default_provider = "echo" # no key needed
`

// An upstream install with the legacy <install>/workspace layout keeps its sessions: the daemon backs the
// workspace up, moves it into the current layout, leaves config.toml as it is (moving files never changes
// schema_version), and serves the old history. A restart does not migrate again.
func TestLegacyWorkspaceMigration(t *testing.T) {
	t.Parallel()
	h := home(t)
	root := filepath.Join(h, ".zeroclaw")
	ws := filepath.Join(root, "workspace")
	if err := os.MkdirAll(filepath.Join(ws, "sessions"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "config.toml"), []byte(legacyConfig), 0o600); err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("sqlite", filepath.Join(ws, "sessions", "sessions.db"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.ExecContext(t.Context(), upstreamChatSchema); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(ws, "skills", "bundle"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ws, "AGENTS.md"), []byte("be brief\n"), 0o644); err != nil {
		t.Fatal(err)
	}

	sock := filepath.Join(root, "data", "daemon.sock")
	d := start(t, env(h), "daemon")
	waitSocket(t, d, sock)
	c := dialRPC(t, sock)
	c.Initialize()
	r := c.Call("session/messages", map[string]any{"session_id": "telegram_42"}, 2)
	res, ok := r["result"].(map[string]any)
	if !ok {
		t.Fatalf("session/messages: %v", r)
	}
	msgs, _ := res["messages"].([]any)
	var got []string
	for _, m := range msgs {
		mm := m.(map[string]any)
		got = append(got, mm["role"].(string)+": "+mm["content"].(string))
	}
	if want := "user: remind me about the dentist|assistant: Noted: dentist on Friday"; strings.Join(got, "|") != want {
		t.Fatalf("migrated history: %q, want %q", strings.Join(got, "|"), want)
	}

	backups, _ := filepath.Glob(filepath.Join(root, "backup-*", "legacy-workspace", "sessions", "sessions.db"))
	if len(backups) != 1 {
		t.Fatalf("backup of the legacy sessions.db: %v", backups)
	}
	if b, err := os.ReadFile(filepath.Join(filepath.Dir(filepath.Dir(backups[0])), "AGENTS.md")); err != nil || string(b) != "be brief\n" {
		t.Fatalf("backup AGENTS.md = %q, %v", b, err)
	}
	for _, p := range []string{
		filepath.Join(root, "data", "sessions", "sessions.db"),
		filepath.Join(root, "shared", "skills", "bundle"),
		filepath.Join(root, "agents", "default", "workspace", "AGENTS.md"),
	} {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("not migrated: %v", err)
		}
	}
	if _, err := os.Stat(ws); !os.IsNotExist(err) {
		t.Errorf("legacy workspace still there: %v", err)
	}
	if cfg, err := os.ReadFile(filepath.Join(root, "config.toml")); err != nil || string(cfg) != legacyConfig {
		t.Errorf("config.toml changed by the layout migration (err %v):\n%s", err, cfg)
	}
	if !strings.Contains(d.stderr.String(), "legacy workspace entry moved") {
		t.Errorf("the daemon did not log the moves:\n%s", d.stderr.String())
	}

	// A restart finds the current layout: no second backup, the history still there.
	signal(t, d, syscall.SIGTERM)
	if code := d.wait(t, 15*time.Second); code != 0 {
		t.Fatalf("daemon exit code %d", code)
	}
	d2 := start(t, env(h), "daemon")
	waitSocket(t, d2, sock)
	c2 := dialRPC(t, sock)
	c2.Initialize()
	r2 := c2.Call("session/messages", map[string]any{"session_id": "telegram_42"}, 2)
	if res, ok := r2["result"].(map[string]any); !ok || res["total"] != float64(2) {
		t.Fatalf("session/messages after restart: %v", r2)
	}
	if all, _ := filepath.Glob(filepath.Join(root, "backup-*")); len(all) != 1 {
		t.Fatalf("backups after a restart: %v", all)
	}
	if strings.Contains(d2.stderr.String(), "legacy workspace") {
		t.Errorf("the restarted daemon migrated again:\n%s", d2.stderr.String())
	}
}

// The first contact with a legacy install is often `zeroclaw agent`, which spawns the daemon: nothing the
// spawning client creates may block the migration (its log lives in data/, not in a migration target).
func TestLegacyMigrationThroughSpawnedDaemon(t *testing.T) {
	t.Parallel()
	h := home(t)
	root := filepath.Join(h, ".zeroclaw")
	ws := filepath.Join(root, "workspace")
	if err := os.MkdirAll(filepath.Join(ws, "state"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "config.toml"), []byte(legacyConfig), 0o600); err != nil {
		t.Fatal(err)
	}
	old := `{"id":"c1","usage":{"model":"m","input_tokens":1,"output_tokens":2,"total_tokens":3,"cost_usd":0,"timestamp":"2025-01-01T00:00:00Z"},"session_id":"s"}` + "\n"
	if err := os.WriteFile(filepath.Join(ws, "state", "costs.jsonl"), []byte(old), 0o600); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := run(t, env(h), "", "agent", "-m", "hello legacy")
	if code != 0 || out != "hello legacy\n" {
		t.Fatalf("agent: exit %d\nstdout %q\nstderr %s", code, out, errOut)
	}
	costs, err := os.ReadFile(filepath.Join(root, "data", "state", "costs.jsonl"))
	if err != nil || !strings.HasPrefix(string(costs), old) || strings.Count(string(costs), "\n") != 2 {
		t.Fatalf("costs.jsonl after migration + one turn: %q, %v", costs, err)
	}
	if _, err := os.Stat(ws); !os.IsNotExist(err) {
		t.Errorf("legacy workspace still there: %v", err)
	}
}

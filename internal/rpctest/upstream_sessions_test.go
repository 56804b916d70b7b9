package rpctest

import (
	"database/sql"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/zeroclaw-go/zeroclaw/internal/api"
)

// upstreamSessionsDDL is the schema upstream's SQLite session backend creates when it opens sessions.db
// (tables, FTS index and triggers, then its metadata columns added one by one, then the metadata indexes),
// with no user_version.
const upstreamSessionsDDL = `
PRAGMA journal_mode = WAL;
CREATE TABLE IF NOT EXISTS sessions (id INTEGER PRIMARY KEY AUTOINCREMENT, session_key TEXT NOT NULL,
    role TEXT NOT NULL, content TEXT NOT NULL, created_at TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS idx_sessions_key ON sessions(session_key);
CREATE INDEX IF NOT EXISTS idx_sessions_key_id ON sessions(session_key, id);
CREATE TABLE IF NOT EXISTS session_metadata (session_key TEXT PRIMARY KEY, created_at TEXT NOT NULL,
    last_activity TEXT NOT NULL, message_count INTEGER NOT NULL DEFAULT 0, name TEXT);
CREATE TABLE IF NOT EXISTS jsonl_import_receipts (source_name TEXT PRIMARY KEY, session_key TEXT NOT NULL,
    source_hash TEXT NOT NULL, source_len INTEGER NOT NULL, imported_at TEXT NOT NULL);
CREATE VIRTUAL TABLE IF NOT EXISTS sessions_fts USING fts5(session_key, content, content=sessions, content_rowid=id);
CREATE TRIGGER IF NOT EXISTS sessions_ai AFTER INSERT ON sessions BEGIN
    INSERT INTO sessions_fts(rowid, session_key, content) VALUES (new.id, new.session_key, new.content);
END;
CREATE TRIGGER IF NOT EXISTS sessions_ad AFTER DELETE ON sessions BEGIN
    INSERT INTO sessions_fts(sessions_fts, rowid, session_key, content) VALUES ('delete', old.id, old.session_key, old.content);
END;
CREATE TRIGGER IF NOT EXISTS sessions_au AFTER UPDATE ON sessions BEGIN
    INSERT INTO sessions_fts(sessions_fts, rowid, session_key, content) VALUES ('delete', old.id, old.session_key, old.content);
    INSERT INTO sessions_fts(rowid, session_key, content) VALUES (new.id, new.session_key, new.content);
END;
ALTER TABLE session_metadata ADD COLUMN state TEXT NOT NULL DEFAULT 'idle';
ALTER TABLE session_metadata ADD COLUMN turn_id TEXT;
ALTER TABLE session_metadata ADD COLUMN turn_started_at TEXT;
ALTER TABLE session_metadata ADD COLUMN agent_alias TEXT;
ALTER TABLE session_metadata ADD COLUMN channel_id TEXT;
ALTER TABLE session_metadata ADD COLUMN room_id TEXT;
ALTER TABLE session_metadata ADD COLUMN sender_id TEXT;
CREATE INDEX IF NOT EXISTS idx_session_metadata_agent_alias ON session_metadata(agent_alias);
CREATE INDEX IF NOT EXISTS idx_session_metadata_channel_id ON session_metadata(channel_id);
CREATE INDEX IF NOT EXISTS idx_session_metadata_room_id ON session_metadata(room_id);
CREATE INDEX IF NOT EXISTS idx_session_metadata_sender_id ON session_metadata(sender_id);
`

// upstreamWriter writes sessions.db rows with the statements upstream's session backend runs, stamping them
// with its RFC 3339 "+00:00" timestamps.
type upstreamWriter struct {
	t   *testing.T
	db  *sql.DB
	now time.Time
}

func (w *upstreamWriter) stamp() string {
	w.now = w.now.Add(1500 * time.Millisecond)
	return w.now.Format("2006-01-02T15:04:05.999999999") + "+00:00"
}

func (w *upstreamWriter) exec(q string, args ...any) {
	w.t.Helper()
	if _, err := w.db.ExecContext(w.t.Context(), q, args...); err != nil {
		w.t.Fatalf("upstream write: %v\n%s", err, q)
	}
}

// setAgentAlias is what session/new (key rpc_<id>) and the gateway's WebSocket chat (gw_<id>) run first.
func (w *upstreamWriter) setAgentAlias(key, alias string) {
	now := w.stamp()
	w.exec(`INSERT INTO session_metadata (session_key, created_at, last_activity, message_count, agent_alias)
		VALUES (?1, ?2, ?3, 0, ?4) ON CONFLICT(session_key) DO UPDATE SET agent_alias = excluded.agent_alias`,
		key, now, now, alias)
}

// setContext is what a channel stamps on its conversation's key.
func (w *upstreamWriter) setContext(key, channel, room, sender string) {
	now := w.stamp()
	w.exec(`INSERT INTO session_metadata (session_key, created_at, last_activity, message_count, channel_id, room_id, sender_id)
		VALUES (?1, ?2, ?3, 0, ?4, ?5, ?6) ON CONFLICT(session_key) DO UPDATE SET
		channel_id = COALESCE(excluded.channel_id, session_metadata.channel_id),
		room_id = COALESCE(excluded.room_id, session_metadata.room_id),
		sender_id = COALESCE(excluded.sender_id, session_metadata.sender_id)`, key, now, now, channel, room, sender)
}

// append is the backend's append: the message, then the metadata upsert.
func (w *upstreamWriter) append(key, role, content string) {
	now := w.stamp()
	w.exec(`INSERT INTO sessions (session_key, role, content, created_at) VALUES (?1, ?2, ?3, ?4)`, key, role, content, now)
	w.exec(`INSERT INTO session_metadata (session_key, created_at, last_activity, message_count) VALUES (?1, ?2, ?3, 1)
		ON CONFLICT(session_key) DO UPDATE SET last_activity = excluded.last_activity, message_count = message_count + 1`,
		key, now, now)
}

// writeUpstreamSessions makes <configDir>/data/sessions/sessions.db as an upstream daemon leaves it: an RPC
// session, a gateway session, a channel conversation and an orphan (a key with neither agent nor channel).
func writeUpstreamSessions(t *testing.T, configDir string) string {
	dir := filepath.Join(configDir, "data", "sessions")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "sessions.db")
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	w := &upstreamWriter{t: t, db: db, now: time.Date(2026, 5, 4, 9, 0, 0, 0, time.UTC)}
	w.exec(upstreamSessionsDDL)

	w.setAgentAlias("rpc_7d3c1f0e-upstream", "default")
	w.append("rpc_7d3c1f0e-upstream", "user", "My cat is called Miso.")
	w.append("rpc_7d3c1f0e-upstream", "assistant", "Miso is a lovely name.")
	w.append("rpc_7d3c1f0e-upstream", "user", "She is three years old.")
	w.append("rpc_7d3c1f0e-upstream", "assistant", "Noted: Miso, three.")

	w.setAgentAlias("gw_web-1", "default")
	w.append("gw_web-1", "user", "hello from the browser")
	w.append("gw_web-1", "assistant", "hello, browser")

	w.setContext("telegram_work_123_456", "telegram.work", "123", "456")
	w.append("telegram_work_123_456", "user", "remind me about the dentist")
	w.append("telegram_work_123_456", "assistant", "Noted: dentist on Friday")

	w.append("orphan_1", "user", "a line nobody attributed")
	return path
}

// metaKeys reads every session_metadata key and the sessions row count per key, straight from the file.
func metaKeys(t *testing.T, path string) (keys []string, rows map[string]int) {
	t.Helper()
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	q, err := db.QueryContext(t.Context(), "SELECT session_key FROM session_metadata ORDER BY session_key")
	if err != nil {
		t.Fatal(err)
	}
	for q.Next() {
		var k string
		if err := q.Scan(&k); err != nil {
			t.Fatal(err)
		}
		keys = append(keys, k)
	}
	q.Close()
	rows = map[string]int{}
	q, err = db.QueryContext(t.Context(), "SELECT session_key, COUNT(*) FROM sessions GROUP BY session_key")
	if err != nil {
		t.Fatal(err)
	}
	defer q.Close()
	for q.Next() {
		var k string
		var n int
		if err := q.Scan(&k, &n); err != nil {
			t.Fatal(err)
		}
		rows[k] = n
	}
	return keys, rows
}

// An upstream install's sessions.db, written the way upstream's code writes it, resumes by bare id over the
// socket: session/new finds rpc_<id> with its message count, the next prompt sends the stored history to the
// provider, and its messages land under rpc_<id> with no second row for the bare id. gw_ and channel keys are
// reachable by their ids, and session/list shows bare ids.
func TestUpstreamSessionsResumeByBareID(t *testing.T) {
	t.Parallel()
	model := newLLM(t, stream(ctSSE, openAIText(40, 3, "Miso is three.")))
	cfgDir := filepath.Join(ShortTempDir(t), "install")
	dbPath := writeUpstreamSessions(t, cfgDir)
	cfg := `schema_version = 3

` + fakeProviderTOML("openai", model.URL) + `
[agents.default]
model_provider = "openai.fake"
risk_profile = "full"

[risk_profiles.full]
level = "full"
workspace_only = true
`
	d := StartOn(t, cfgDir, WithConfig(cfg))
	c := dialRC(t, d, "")

	const sid = "7d3c1f0e-upstream"
	res := c.newSession(api.SessionNewParams{SessionID: sid})
	if res.SessionID != sid || res.MessageCount != 4 || res.AgentAlias != "default" {
		t.Fatalf("session/new = %+v, want %s resumed with 4 messages", res, sid)
	}
	tr := c.prompt(sid, "How old is my cat?", hooks{})
	if tr.err != nil || tr.result.Content != "Miso is three." {
		t.Fatalf("prompt: %+v %s", tr.result, tr.err)
	}

	// The provider got the stored conversation, in order, before the new prompt.
	_, bodies := model.requests()
	if len(bodies) != 1 {
		t.Fatalf("provider saw %d requests, want 1", len(bodies))
	}
	var body struct {
		Messages []struct{ Role, Content string } `json:"messages"`
	}
	if err := json.Unmarshal(bodies[0], &body); err != nil {
		t.Fatal(err)
	}
	var sent []string
	for _, m := range body.Messages {
		if m.Role != "system" {
			sent = append(sent, m.Role+": "+m.Content)
		}
	}
	want := []string{
		"user: My cat is called Miso.", "assistant: Miso is a lovely name.",
		"user: She is three years old.", "assistant: Noted: Miso, three.",
		"user: How old is my cat?",
	}
	if !slices.Equal(sent, want) {
		t.Fatalf("provider request messages:\n %q\nwant\n %q", sent, want)
	}

	// Reads by bare id: the rpc_ session with the new turn, the gateway session, the channel conversation.
	if got := c.messages(sid); got.Total != 6 || got.Messages[5].Content != "Miso is three." {
		t.Fatalf("session/messages %s: %+v", sid, got)
	}
	if got := c.messages("web-1"); got.Total != 2 || got.Messages[0].Content != "hello from the browser" {
		t.Fatalf("session/messages web-1: %+v", got)
	}
	if got := c.messages("telegram_work_123_456"); got.Total != 2 || got.Messages[1].Content != "Noted: dentist on Friday" {
		t.Fatalf("session/messages telegram_work_123_456: %+v", got)
	}
	if st := c.state(sid); st != "idle" {
		t.Fatalf("session/state %s = %q", sid, st)
	}

	// session/list: bare ids, the stored key beside each, the channel named; the orphan is not listed.
	var list api.SessionListResult
	c.mustCall(api.MethodSessionList, api.SessionListParams{}, &list)
	type entry struct {
		key, channel string
		count        int
	}
	got := map[string]entry{}
	for _, s := range list.Sessions {
		if _, dup := got[s.SessionID]; dup {
			t.Errorf("session/list shows %s twice", s.SessionID)
		}
		got[s.SessionID] = entry{s.SessionKey, s.ChannelID, s.MessageCount}
	}
	wantList := map[string]entry{
		sid:                     {"rpc_" + sid, "", 6},
		"web-1":                 {"gw_web-1", "", 2},
		"telegram_work_123_456": {"telegram_work_123_456", "telegram.work", 2},
	}
	if len(got) != len(wantList) {
		t.Errorf("session/list = %+v, want exactly %v", list.Sessions, wantList)
	}
	for id, w := range wantList {
		if got[id] != w {
			t.Errorf("session/list %s = %+v, want %+v", id, got[id], w)
		}
	}

	if err := d.Stop(); err != nil {
		t.Fatal(err)
	}
	keys, rows := metaKeys(t, dbPath)
	if want := []string{"gw_web-1", "orphan_1", "rpc_" + sid, "telegram_work_123_456"}; !slices.Equal(keys, want) {
		t.Fatalf("session_metadata keys = %v, want %v (no row for the bare id)", keys, want)
	}
	if rows[sid] != 0 || rows["rpc_"+sid] != 6 {
		t.Fatalf("sessions rows: bare %d, rpc_ %d; want 0 and 6", rows[sid], rows["rpc_"+sid])
	}
}

package store

import (
	"context"
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"
)

func openTestACP(t testing.TB) (*ACPStore, string) {
	t.Helper()
	p := filepath.Join(t.TempDir(), "data", "sessions", "acp-sessions.db")
	s, err := OpenACP(context.Background(), p)
	if err != nil {
		t.Fatalf("OpenACP: %v", err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s, p
}

func mustCreateACP(t testing.TB, s *ACPStore, id string, now time.Time) {
	t.Helper()
	if err := s.Create(t.Context(), ACPSession{UUID: id, AgentAlias: "a", WorkspaceDir: "/w/" + id, Surface: "acp"}, now); err != nil {
		t.Fatalf("Create(%s): %v", id, err)
	}
}

// rawDB opens the file with a plain connection (foreign keys on), for what the store does not expose.
func rawDB(t testing.TB, p string) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite", p+"?_pragma=foreign_keys(ON)&_pragma=busy_timeout(5000)")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func countRows(t testing.TB, db *sql.DB, table string) int {
	t.Helper()
	var n int
	if err := db.QueryRow("SELECT COUNT(*) FROM " + table).Scan(&n); err != nil {
		t.Fatalf("count %s: %v", table, err)
	}
	return n
}

func TestACPOpenSchemaAndPragmas(t *testing.T) {
	s, p := openTestACP(t)
	fi, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("acp-sessions.db mode = %v, want 0600", fi.Mode().Perm())
	}
	for pragma, want := range map[string]string{"journal_mode": "wal", "synchronous": "1", "busy_timeout": "5000", "foreign_keys": "1", "user_version": "2"} {
		var got string
		if err := s.d.w.QueryRow("PRAGMA " + pragma).Scan(&got); err != nil {
			t.Fatalf("PRAGMA %s: %v", pragma, err)
		}
		if got != want {
			t.Errorf("PRAGMA %s = %s, want %s", pragma, got, want)
		}
	}
	db := rawDB(t, p)
	for _, table := range []string{"acp_sessions", "acp_messages", "acp_tool_calls", "acp_session_events", "acp_checkpoints"} {
		countRows(t, db, table) // fails when the table is missing
	}
	var cols []string
	rows, err := db.Query("SELECT name FROM pragma_table_info('acp_sessions') ORDER BY cid")
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var c string
		_ = rows.Scan(&c)
		cols = append(cols, c)
	}
	rows.Close()
	want := []string{"id", "session_uuid", "agent_alias", "workspace_dir", "token_count", "killed_at", "created_at",
		"last_activity", "plan_json", "interaction_surface"}
	if !reflect.DeepEqual(cols, want) {
		t.Errorf("acp_sessions columns = %q, want %q", cols, want)
	}
}

func TestACPCreateAndSession(t *testing.T) {
	s, _ := openTestACP(t)
	ctx := t.Context()
	mustCreateACP(t, s, "s1", t0)
	got, err := s.Session(ctx, "s1")
	if err != nil {
		t.Fatal(err)
	}
	want := ACPSession{UUID: "s1", AgentAlias: "a", WorkspaceDir: "/w/s1", CreatedAt: t0, LastActivity: t0, Surface: "acp"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Session = %+v, want %+v", got, want)
	}
	if err := s.Create(ctx, ACPSession{UUID: "s1", AgentAlias: "b", WorkspaceDir: "/x"}, t0); !errors.Is(err, ErrExists) {
		t.Errorf("second Create: %v, want ErrExists", err)
	}
	if _, err := s.Session(ctx, "nope"); !errors.Is(err, ErrNotFound) {
		t.Errorf("Session(unknown): %v, want ErrNotFound", err)
	}
	if _, err := s.Messages(ctx, "nope"); !errors.Is(err, ErrNotFound) {
		t.Errorf("Messages(unknown): %v, want ErrNotFound", err)
	}
	if err := s.Create(ctx, ACPSession{UUID: "s2"}, t0); !errors.Is(err, ErrInvalid) {
		t.Errorf("Create without alias: %v, want ErrInvalid", err)
	}
}

// turnFixture is one turn with a tool call: the prompt, the assistant's call and its result, the answer.
func turnFixture() []ACPMessage {
	return []ACPMessage{
		{Role: "user", Content: "list the files"},
		{Role: "assistant", Content: "", Reasoning: "look first",
			Calls:   []ACPToolCall{{ID: "call_1", Name: "shell", Arguments: `{"command":"ls"}`}},
			Results: []ACPToolResult{{ID: "call_1", Content: "a.txt\nb.txt", Outcome: ACPOutcomeSuccess}}},
		{Role: "assistant", Content: "two files: a.txt and b.txt"},
	}
}

func TestACPAppendTurnRoundTrip(t *testing.T) {
	s, _ := openTestACP(t)
	ctx := t.Context()
	mustCreateACP(t, s, "s1", t0)
	if err := s.BeginTurn(ctx, "s1", "turn-1", "list the files", t0.Add(time.Second)); err != nil {
		t.Fatal(err)
	}
	cp, ok, err := s.Checkpoint(ctx, "s1")
	if err != nil || !ok || cp.TurnID != "turn-1" || cp.TurnPrompt != "list the files" || cp.Snapshot != nil {
		t.Fatalf("Checkpoint during the turn = %+v, %v, %v", cp, ok, err)
	}
	in := turnFixture()
	t1 := t0.Add(2 * time.Second)
	if err := s.AppendTurn(ctx, "s1", in, t1); err != nil {
		t.Fatal(err)
	}
	got, err := s.Messages(ctx, "s1")
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 {
		t.Fatalf("Messages: %d rows, want 3: %+v", len(got), got)
	}
	for i := range got {
		if got[i].ID != in[i].ID || got[i].ID == 0 {
			t.Errorf("message %d id = %d, AppendTurn assigned %d", i, got[i].ID, in[i].ID)
		}
		if !got[i].CreatedAt.Equal(t1) {
			t.Errorf("message %d created_at = %v", i, got[i].CreatedAt)
		}
		in[i].CreatedAt = got[i].CreatedAt
	}
	in[1].Results[0].Name = "shell" // taken from the call when the result names none
	if !reflect.DeepEqual(got, in) {
		t.Errorf("Messages =\n %+v\nwant\n %+v", got, in)
	}
	meta, err := s.Session(ctx, "s1")
	if err != nil {
		t.Fatal(err)
	}
	if !meta.LastActivity.Equal(t1) || meta.MessageCount != 3 {
		t.Errorf("after the turn: last_activity %v, message_count %d", meta.LastActivity, meta.MessageCount)
	}
	if cp, ok, err := s.Checkpoint(ctx, "s1"); err != nil || !ok || cp.TurnID != "" || cp.TurnStartedAt != nil {
		t.Errorf("Checkpoint after the turn = %+v, %v, %v; want the turn cleared", cp, ok, err)
	}
}

// A turn is stored whole or not at all: a failure on its last row leaves none of its rows behind.
func TestACPAppendTurnIsOneTransaction(t *testing.T) {
	s, p := openTestACP(t)
	ctx := t.Context()
	mustCreateACP(t, s, "s1", t0)
	if err := s.AppendTurn(ctx, "s1", []ACPMessage{{Role: "user", Content: "first"}}, t0); err != nil {
		t.Fatal(err)
	}
	db := rawDB(t, p)
	if _, err := db.Exec(`CREATE TRIGGER boom BEFORE INSERT ON acp_tool_calls WHEN NEW.payload = 'boom'
		BEGIN SELECT RAISE(ABORT, 'injected failure'); END`); err != nil {
		t.Fatal(err)
	}
	msgs := turnFixture()
	msgs[1].Results[0].Content = "boom"
	if err := s.AppendTurn(ctx, "s1", msgs, t0.Add(time.Minute)); err == nil {
		t.Fatal("AppendTurn succeeded despite the injected failure")
	}
	got, err := s.Messages(ctx, "s1")
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].Content != "first" {
		t.Errorf("after a failed turn: %+v, want only the first message", got)
	}
	if n := countRows(t, db, "acp_tool_calls"); n != 0 {
		t.Errorf("%d tool-call rows left by the failed turn", n)
	}
	meta, _ := s.Session(ctx, "s1")
	if !meta.LastActivity.Equal(t0) {
		t.Errorf("last_activity moved to %v by a failed turn", meta.LastActivity)
	}
	if err := s.AppendTurn(ctx, "nope", turnFixture(), t0); !errors.Is(err, ErrNotFound) {
		t.Errorf("AppendTurn(unknown) = %v, want ErrNotFound", err)
	}
	if n := countRows(t, db, "acp_messages"); n != 1 {
		t.Errorf("%d message rows, want 1", n)
	}
}

func TestACPKillListDelete(t *testing.T) {
	s, p := openTestACP(t)
	ctx := t.Context()
	mustCreateACP(t, s, "old", t0)
	mustCreateACP(t, s, "new", t0.Add(time.Hour))
	mustCreateACP(t, s, "dead", t0.Add(2*time.Hour))
	for _, id := range []string{"old", "dead"} {
		if err := s.AppendTurn(ctx, id, turnFixture(), t0.Add(3*time.Hour)); err != nil {
			t.Fatal(err)
		}
		if err := s.BeginTurn(ctx, id, "t", "p", t0.Add(3*time.Hour)); err != nil {
			t.Fatal(err)
		}
		if err := s.AppendEvent(ctx, id, "start", "success", "", t0); err != nil {
			t.Fatal(err)
		}
	}
	k1 := t0.Add(4 * time.Hour)
	if ok, err := s.Kill(ctx, "dead", k1); !ok || err != nil {
		t.Fatalf("Kill = %v, %v", ok, err)
	}
	if ok, err := s.Kill(ctx, "dead", k1.Add(time.Hour)); !ok || err != nil {
		t.Fatalf("second Kill = %v, %v", ok, err)
	}
	if ok, err := s.Kill(ctx, "nope", k1); ok || err != nil {
		t.Errorf("Kill(unknown) = %v, %v; want false, nil", ok, err)
	}
	dead, err := s.Session(ctx, "dead")
	if err != nil {
		t.Fatal(err)
	}
	if dead.KilledAt == nil || !dead.KilledAt.Equal(k1) {
		t.Errorf("killed_at = %v, want the first kill %v", dead.KilledAt, k1)
	}
	if msgs, err := s.Messages(ctx, "dead"); err != nil || len(msgs) != 3 {
		t.Errorf("a killed session keeps its history: %d messages, %v", len(msgs), err)
	}
	list, err := s.List(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, a := range list {
		ids = append(ids, a.UUID)
	}
	if !reflect.DeepEqual(ids, []string{"old", "new"}) {
		t.Errorf("List = %q, want [old new] (killed left out, most recent activity first)", ids)
	}
	if list[0].MessageCount != 3 {
		t.Errorf("List message_count = %d", list[0].MessageCount)
	}
	if l, _ := s.List(ctx, 1); len(l) != 1 {
		t.Errorf("List(1) = %d rows", len(l))
	}

	db := rawDB(t, p)
	if ok, err := s.Delete(ctx, "old"); !ok || err != nil {
		t.Fatalf("Delete = %v, %v", ok, err)
	}
	if ok, err := s.Delete(ctx, "old"); ok || err != nil {
		t.Errorf("second Delete = %v, %v; want false, nil", ok, err)
	}
	// Only "dead" has children left: the cascade removed old's messages, tool calls, events and checkpoint.
	for table, want := range map[string]int{"acp_messages": 3, "acp_tool_calls": 2, "acp_session_events": 1, "acp_checkpoints": 1} {
		if n := countRows(t, db, table); n != want {
			t.Errorf("%s: %d rows after delete, want %d", table, n, want)
		}
	}
}

func TestACPClosed(t *testing.T) {
	s, _ := openTestACP(t)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if _, err := s.Session(t.Context(), "x"); !errors.Is(err, ErrClosed) {
		t.Errorf("Session after Close: %v", err)
	}
}

// upstreamACPDDL is the schema upstream's first ACP store created: no killed_at or plan_json yet.
const upstreamACPDDL = `
CREATE TABLE acp_sessions (id INTEGER PRIMARY KEY AUTOINCREMENT, session_uuid TEXT NOT NULL UNIQUE,
    agent_alias TEXT NOT NULL, workspace_dir TEXT NOT NULL, token_count INTEGER NOT NULL DEFAULT 0,
    created_at TEXT NOT NULL, last_activity TEXT NOT NULL);
CREATE INDEX idx_acp_sessions_uuid ON acp_sessions(session_uuid);
CREATE INDEX idx_acp_sessions_alias ON acp_sessions(agent_alias);
CREATE TABLE acp_messages (id INTEGER PRIMARY KEY AUTOINCREMENT,
    session_id INTEGER NOT NULL REFERENCES acp_sessions(id) ON DELETE CASCADE, role TEXT NOT NULL,
    content TEXT NOT NULL, reasoning_content TEXT, created_at TEXT NOT NULL);
CREATE INDEX idx_acp_messages_session ON acp_messages(session_id, id);
CREATE TABLE acp_tool_calls (id INTEGER PRIMARY KEY AUTOINCREMENT,
    message_id INTEGER NOT NULL REFERENCES acp_messages(id) ON DELETE CASCADE, tool_call_id TEXT NOT NULL,
    tool_name TEXT NOT NULL, event_kind TEXT NOT NULL, payload TEXT NOT NULL, outcome TEXT, created_at TEXT NOT NULL);
CREATE INDEX idx_acp_tool_calls_message ON acp_tool_calls(message_id, id);
CREATE INDEX idx_acp_tool_calls_lookup ON acp_tool_calls(tool_call_id);
CREATE TABLE acp_session_events (id INTEGER PRIMARY KEY AUTOINCREMENT,
    session_id INTEGER NOT NULL REFERENCES acp_sessions(id) ON DELETE CASCADE, action TEXT NOT NULL,
    outcome TEXT NOT NULL, payload TEXT, created_at TEXT NOT NULL);
CREATE INDEX idx_acp_session_events_session ON acp_session_events(session_id, id);
`

// upstreamACPRows are rows as upstream's append_turn writes them: RFC 3339 with "+00:00", a tool-call turn whose
// 'in' and 'out' rows hang off the assistant message, the result's outcome "unknown", a NULL reasoning.
const upstreamACPRows = `
INSERT INTO acp_sessions (session_uuid, agent_alias, workspace_dir, token_count, created_at, last_activity) VALUES
    ('0b7c6a3e-1111-4c1e-9a3e-5f0f3e0c2a10', 'default', '/home/u/proj', 1234,
     '2025-06-01T10:00:00.123456+00:00', '2025-06-01T10:05:00+00:00');
INSERT INTO acp_messages (session_id, role, content, reasoning_content, created_at) VALUES
    (1, 'user', 'what is in this dir?', NULL, '2025-06-01T10:04:00+00:00'),
    (1, 'assistant', '', 'I should list it', '2025-06-01T10:04:00+00:00'),
    (1, 'assistant', 'Two files.', NULL, '2025-06-01T10:04:00+00:00');
INSERT INTO acp_tool_calls (message_id, tool_call_id, tool_name, event_kind, payload, outcome, created_at) VALUES
    (2, 'call_9', 'shell', 'in', '{"command":"ls"}', NULL, '2025-06-01T10:04:00+00:00'),
    (2, 'call_9', 'shell', 'out', 'a\nb', 'unknown', '2025-06-01T10:04:00+00:00');
INSERT INTO acp_session_events (session_id, action, outcome, payload, created_at) VALUES
    (1, 'start', 'success', NULL, '2025-06-01T10:00:00+00:00');
`

func TestACPOpensUpstreamDatabase(t *testing.T) {
	p := filepath.Join(t.TempDir(), "acp-sessions.db")
	raw, err := sql.Open("sqlite", p)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := raw.Exec(upstreamACPDDL + upstreamACPRows); err != nil {
		t.Fatal(err)
	}
	raw.Close()

	s, err := OpenACP(t.Context(), p)
	if err != nil {
		t.Fatalf("OpenACP on an upstream database: %v", err)
	}
	defer s.Close()
	ctx := t.Context()
	id := "0b7c6a3e-1111-4c1e-9a3e-5f0f3e0c2a10"
	meta, err := s.Session(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	wantCreated := time.Date(2025, 6, 1, 10, 0, 0, 123456000, time.UTC)
	if meta.AgentAlias != "default" || meta.WorkspaceDir != "/home/u/proj" || meta.TokenCount != 1234 ||
		!meta.CreatedAt.Equal(wantCreated) || meta.KilledAt != nil || meta.MessageCount != 3 {
		t.Errorf("upstream session = %+v", meta)
	}
	msgs, err := s.Messages(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	want := []ACPMessage{
		{ID: 1, Role: "user", Content: "what is in this dir?"},
		{ID: 2, Role: "assistant", Reasoning: "I should list it",
			Calls:   []ACPToolCall{{ID: "call_9", Name: "shell", Arguments: `{"command":"ls"}`}},
			Results: []ACPToolResult{{ID: "call_9", Name: "shell", Content: `a\nb`, Outcome: ACPOutcomeUnknown}}},
		{ID: 3, Role: "assistant", Content: "Two files."},
	}
	for i := range msgs {
		msgs[i].CreatedAt = time.Time{}
	}
	if !reflect.DeepEqual(msgs, want) {
		t.Errorf("upstream messages =\n %+v\nwant\n %+v", msgs, want)
	}
	// The adopted database takes new turns, and the upstream rows keep their ids.
	mustCreateACP(t, s, "ours", t0)
	if err := s.AppendTurn(ctx, id, []ACPMessage{{Role: "user", Content: "more"}}, t0); err != nil {
		t.Fatal(err)
	}
	if ok, err := s.Kill(ctx, id, t0); !ok || err != nil {
		t.Fatalf("Kill on an adopted row = %v, %v", ok, err)
	}
	if l, _ := s.List(ctx, 0); len(l) != 1 || l[0].UUID != "ours" {
		t.Errorf("List after killing the upstream row = %+v", l)
	}
	// Reopening is a no-op for the schema.
	s.Close()
	s2, err := OpenACP(ctx, p)
	if err != nil {
		t.Fatalf("reopen: %v", err)
	}
	defer s2.Close()
	if msgs, err := s2.Messages(ctx, id); err != nil || len(msgs) != 4 {
		t.Errorf("after reopen: %d messages, %v", len(msgs), err)
	}
}

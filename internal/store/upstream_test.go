package store

import (
	"database/sql"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// Raw schema scripts as an upstream install leaves them (user_version 0, default journal mode), from the
// oldest shape we accept (no FTS, five metadata columns) to the current one.
const (
	upstreamBase = `
CREATE TABLE sessions (id INTEGER PRIMARY KEY AUTOINCREMENT, session_key TEXT NOT NULL, role TEXT NOT NULL,
    content TEXT NOT NULL, created_at TEXT NOT NULL);
CREATE INDEX idx_sessions_key ON sessions(session_key);
CREATE INDEX idx_sessions_key_id ON sessions(session_key, id);
CREATE TABLE session_metadata (session_key TEXT PRIMARY KEY, created_at TEXT NOT NULL, last_activity TEXT NOT NULL,
    message_count INTEGER NOT NULL DEFAULT 0, name TEXT);
CREATE TABLE jsonl_import_receipts (source_name TEXT PRIMARY KEY, session_key TEXT NOT NULL,
    source_hash TEXT NOT NULL, source_len INTEGER NOT NULL, imported_at TEXT NOT NULL);
`
	upstreamFTS = `
CREATE VIRTUAL TABLE sessions_fts USING fts5(session_key, content, content=sessions, content_rowid=id);
CREATE TRIGGER sessions_ai AFTER INSERT ON sessions BEGIN
    INSERT INTO sessions_fts(rowid, session_key, content) VALUES (new.id, new.session_key, new.content);
END;
CREATE TRIGGER sessions_ad AFTER DELETE ON sessions BEGIN
    INSERT INTO sessions_fts(sessions_fts, rowid, session_key, content)
    VALUES ('delete', old.id, old.session_key, old.content);
END;
CREATE TRIGGER sessions_au AFTER UPDATE ON sessions BEGIN
    INSERT INTO sessions_fts(sessions_fts, rowid, session_key, content)
    VALUES ('delete', old.id, old.session_key, old.content);
    INSERT INTO sessions_fts(rowid, session_key, content) VALUES (new.id, new.session_key, new.content);
END;
`
	upstreamColumns = `
ALTER TABLE session_metadata ADD COLUMN state TEXT NOT NULL DEFAULT 'idle';
ALTER TABLE session_metadata ADD COLUMN turn_id TEXT;
ALTER TABLE session_metadata ADD COLUMN turn_started_at TEXT;
ALTER TABLE session_metadata ADD COLUMN agent_alias TEXT;
ALTER TABLE session_metadata ADD COLUMN channel_id TEXT;
ALTER TABLE session_metadata ADD COLUMN room_id TEXT;
ALTER TABLE session_metadata ADD COLUMN sender_id TEXT;
CREATE INDEX idx_session_metadata_agent_alias ON session_metadata(agent_alias);
CREATE INDEX idx_session_metadata_channel_id ON session_metadata(channel_id);
`
	// Upstream writes RFC 3339 with "+00:00" and a variable fraction.
	upstreamRows = `
INSERT INTO sessions (session_key, role, content, created_at) VALUES
    ('telegram_42', 'user', 'remind me about the dentist', '2025-01-02T03:04:05.123456789+00:00'),
    ('telegram_42', 'assistant', 'Noted: dentist on Friday', '2025-01-02T03:04:06+00:00'),
    ('cli_1', 'user', 'hello', '2025-01-01T00:00:00.5+00:00');
INSERT INTO session_metadata (session_key, created_at, last_activity, message_count, name) VALUES
    ('telegram_42', '2025-01-02T03:04:05.123456789+00:00', '2025-01-02T03:04:06+00:00', 2, 'Dentist'),
    ('cli_1', '2025-01-01T00:00:00.5+00:00', '2025-01-01T00:00:00.5+00:00', 1, NULL);
`
)

func TestOpenExistingUpstreamDatabase(t *testing.T) {
	cases := []struct{ name, script string }{
		{"oldest without FTS", upstreamBase + upstreamRows},
		{"FTS, five metadata columns", upstreamBase + upstreamFTS + upstreamRows},
		{"current", upstreamBase + upstreamFTS + upstreamColumns + upstreamRows},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ctx := t.Context()
			p := filepath.Join(t.TempDir(), "sessions.db")
			raw, err := sql.Open("sqlite", p)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := raw.ExecContext(ctx, tc.script); err != nil {
				t.Fatalf("upstream script: %v", err)
			}
			if err := raw.Close(); err != nil {
				t.Fatal(err)
			}

			s, err := OpenChat(ctx, p)
			if err != nil {
				t.Fatalf("OpenChat on upstream db: %v", err)
			}
			defer s.Close()

			all, err := s.All(ctx, "telegram_42")
			if err != nil {
				t.Fatal(err)
			}
			wantFirst := time.Date(2025, 1, 2, 3, 4, 5, 123456789, time.UTC)
			if len(all) != 2 || all[1].Content != "Noted: dentist on Friday" || !all[0].CreatedAt.Equal(wantFirst) {
				t.Fatalf("upstream messages: %+v", all)
			}
			m, err := s.Meta(ctx, "telegram_42")
			if err != nil {
				t.Fatal(err)
			}
			if m.Name != "Dentist" || m.MessageCount != 2 || m.State != "idle" {
				t.Fatalf("upstream meta: %+v", m)
			}
			if got := listKeys(t, s, "dentist"); !slices.Equal(got, []string{"telegram_42"}) {
				t.Fatalf("search over upstream rows = %v", got)
			}
			if got := listKeys(t, s, ""); !slices.Equal(got, []string{"telegram_42", "cli_1"}) {
				t.Fatalf("List order over upstream timestamps = %v", got)
			}

			// New writes land next to the old ones, indexed once.
			if idx := mustAppend(t, s, "telegram_42", "user", "and the dentist again", t0); idx != 2 {
				t.Fatalf("index after upstream rows = %d, want 2", idx)
			}
			var n int
			if err := s.d.r.QueryRowContext(ctx, "SELECT COUNT(*) FROM sessions_fts WHERE sessions_fts MATCH 'dentist'").Scan(&n); err != nil || n != 3 {
				t.Fatalf("FTS hits for dentist = %d, %v; want 3 (no duplicate triggers)", n, err)
			}
			if err := s.d.r.QueryRowContext(ctx, "SELECT COUNT(*) FROM sqlite_master WHERE type = 'trigger'").Scan(&n); err != nil || n != 3 {
				t.Fatalf("triggers = %d, %v; want 3", n, err)
			}
			if err := s.SetState(ctx, "telegram_42", "running", "t1", &t0); err != nil {
				t.Fatalf("SetState on upstream row: %v", err)
			}
			assertIntegrity(t, s.d.w)
		})
	}
}

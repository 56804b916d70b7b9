-- Ours, not upstream's. The Go step before this script adds the acp_sessions columns an older database may lack:
-- killed_at and plan_json (upstream's later additions) and interaction_surface (ours: the surface a row was
-- created for, state.md §6).
--
-- acp_checkpoints: one row per session generation. generation 0 exists from the session's first turn; each
-- compaction starts the next one. snapshot_json is the retained provider context (a JSON array of messages; NULL:
-- no snapshot, the history is replayed; '[]' is an explicitly empty snapshot) and boundary_message_id the last
-- acp_messages.id it covers. turn_id, turn_prompt and turn_started_at describe the turn in progress (NULL when
-- none): a row still holding them after a restart is a turn the previous process did not finish.
CREATE TABLE IF NOT EXISTS acp_checkpoints (
    id                  INTEGER PRIMARY KEY AUTOINCREMENT,
    session_id          INTEGER NOT NULL REFERENCES acp_sessions(id) ON DELETE CASCADE,
    generation          INTEGER NOT NULL,
    snapshot_json       TEXT,
    boundary_message_id INTEGER,
    turn_id             TEXT,
    turn_prompt         TEXT,
    turn_started_at     TEXT,
    created_at          TEXT NOT NULL,
    updated_at          TEXT NOT NULL,
    UNIQUE (session_id, generation)
);
CREATE INDEX IF NOT EXISTS idx_acp_checkpoints_session ON acp_checkpoints(session_id, generation);

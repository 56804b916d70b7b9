-- ACP sessions schema (state.md §6): upstream's tables, unchanged. Every statement is IF NOT EXISTS because a
-- database written by the upstream daemon already has them with user_version 0, under the same names.

CREATE TABLE IF NOT EXISTS acp_sessions (
    id            INTEGER PRIMARY KEY AUTOINCREMENT,
    session_uuid  TEXT NOT NULL UNIQUE,
    agent_alias   TEXT NOT NULL,
    workspace_dir TEXT NOT NULL,
    token_count   INTEGER NOT NULL DEFAULT 0,
    killed_at     TEXT,
    created_at    TEXT NOT NULL,
    last_activity TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS idx_acp_sessions_uuid  ON acp_sessions(session_uuid);
CREATE INDEX IF NOT EXISTS idx_acp_sessions_alias ON acp_sessions(agent_alias);

CREATE TABLE IF NOT EXISTS acp_messages (
    id                INTEGER PRIMARY KEY AUTOINCREMENT,
    session_id        INTEGER NOT NULL REFERENCES acp_sessions(id) ON DELETE CASCADE,
    role              TEXT NOT NULL,
    content           TEXT NOT NULL,
    reasoning_content TEXT,
    created_at        TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS idx_acp_messages_session ON acp_messages(session_id, id);

CREATE TABLE IF NOT EXISTS acp_tool_calls (
    id           INTEGER PRIMARY KEY AUTOINCREMENT,
    message_id   INTEGER NOT NULL REFERENCES acp_messages(id) ON DELETE CASCADE,
    tool_call_id TEXT NOT NULL,
    tool_name    TEXT NOT NULL,
    event_kind   TEXT NOT NULL,
    payload      TEXT NOT NULL,
    outcome      TEXT,
    created_at   TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS idx_acp_tool_calls_message ON acp_tool_calls(message_id, id);
CREATE INDEX IF NOT EXISTS idx_acp_tool_calls_lookup  ON acp_tool_calls(tool_call_id);

CREATE TABLE IF NOT EXISTS acp_session_events (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    session_id INTEGER NOT NULL REFERENCES acp_sessions(id) ON DELETE CASCADE,
    action     TEXT NOT NULL,
    outcome    TEXT NOT NULL,
    payload    TEXT,
    created_at TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS idx_acp_session_events_session ON acp_session_events(session_id, id);

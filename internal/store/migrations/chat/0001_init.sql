-- Chat sessions schema (state.md §4). Every statement is IF NOT EXISTS because an install written by the
-- upstream daemon already has these objects with user_version 0; object names (tables, indexes, triggers)
-- match upstream so that nothing is created twice (a second insert trigger would double every FTS row).

CREATE TABLE IF NOT EXISTS sessions (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    session_key TEXT NOT NULL,
    role        TEXT NOT NULL,
    content     TEXT NOT NULL,
    created_at  TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS idx_sessions_key ON sessions(session_key);
CREATE INDEX IF NOT EXISTS idx_sessions_key_id ON sessions(session_key, id);

CREATE TABLE IF NOT EXISTS session_metadata (
    session_key     TEXT PRIMARY KEY,
    created_at      TEXT NOT NULL,
    last_activity   TEXT NOT NULL,
    message_count   INTEGER NOT NULL DEFAULT 0,
    name            TEXT,
    state           TEXT NOT NULL DEFAULT 'idle',
    turn_id         TEXT,
    turn_started_at TEXT,
    agent_alias     TEXT,
    channel_id      TEXT,
    room_id         TEXT,
    sender_id       TEXT
);

CREATE TABLE IF NOT EXISTS jsonl_import_receipts (
    source_name TEXT PRIMARY KEY,
    session_key TEXT NOT NULL,
    source_hash TEXT NOT NULL,
    source_len  INTEGER NOT NULL,
    imported_at TEXT NOT NULL
);

CREATE VIRTUAL TABLE IF NOT EXISTS sessions_fts USING fts5(
    session_key, content, content=sessions, content_rowid=id
);

CREATE TRIGGER IF NOT EXISTS sessions_ai AFTER INSERT ON sessions BEGIN
    INSERT INTO sessions_fts(rowid, session_key, content)
    VALUES (new.id, new.session_key, new.content);
END;
CREATE TRIGGER IF NOT EXISTS sessions_ad AFTER DELETE ON sessions BEGIN
    INSERT INTO sessions_fts(sessions_fts, rowid, session_key, content)
    VALUES ('delete', old.id, old.session_key, old.content);
END;
CREATE TRIGGER IF NOT EXISTS sessions_au AFTER UPDATE ON sessions BEGIN
    INSERT INTO sessions_fts(sessions_fts, rowid, session_key, content)
    VALUES ('delete', old.id, old.session_key, old.content);
    INSERT INTO sessions_fts(rowid, session_key, content)
    VALUES (new.id, new.session_key, new.content);
END;

-- An older install may hold messages that were never indexed (its FTS table is newer than its rows);
-- rebuilding once from the content table makes the index exact. On a fresh database this is instant.
INSERT INTO sessions_fts(sessions_fts) VALUES ('rebuild');

-- Ours, not upstream's: the principal that owns each session (protocol.md §8), so that a non-admin principal
-- finds its sessions after a restart. A side table that upstream's reader never opens. A session without a row
-- (created by upstream, imported from JSONL, or older than this table) is reachable by admins only until one
-- revives it. ChatStore.Delete removes a session's row in the transaction that deletes the session.
CREATE TABLE IF NOT EXISTS session_owners (
    session_key TEXT PRIMARY KEY,
    principal   TEXT NOT NULL
);

-- Ours: session/list orders by the instant of last_activity (julianday, since upstream and we spell timestamps
-- differently), then by the text and the key. This index on exactly that order lets a page of the list read its
-- rows in order instead of sorting a full scan. SQLite builds it from the rows already stored (the backfill)
-- and keeps it up to date on every write, upstream's included: the canonical value lives in the index, so no
-- trigger or writer has to maintain a column.
CREATE INDEX IF NOT EXISTS idx_session_metadata_activity
    ON session_metadata(julianday(last_activity) DESC, last_activity DESC, session_key);

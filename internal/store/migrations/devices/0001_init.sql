-- devices.db (state.md §7): metadata of paired gateway devices, keyed by the SHA-256 of their token. It never
-- grants access: the configured gateway.paired_tokens do, and rows are reconciled against them.
CREATE TABLE IF NOT EXISTS devices (
    token_hash TEXT PRIMARY KEY,
    id TEXT NOT NULL,
    name TEXT,
    device_type TEXT,
    paired_at TEXT NOT NULL,
    last_seen TEXT NOT NULL,
    ip_address TEXT,
    capabilities TEXT
);
CREATE INDEX IF NOT EXISTS devices_id ON devices(id);

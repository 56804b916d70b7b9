-- Ours, not upstream's: the durable record of channel delivery (internal/channel). Each platform event is
-- recorded before the adapter acknowledges it (UNIQUE makes a redelivery recognisable across restarts); each
-- reply is recorded before it is sent, then marked with the platform's message id.
CREATE TABLE IF NOT EXISTS channel_events (
    id                INTEGER PRIMARY KEY AUTOINCREMENT,
    channel_id        TEXT NOT NULL,
    platform_event_id TEXT NOT NULL,
    kind              TEXT NOT NULL,
    sender            TEXT NOT NULL,
    sender_name       TEXT NOT NULL,
    reply_target      TEXT NOT NULL,
    thread            TEXT NOT NULL,
    message_id        TEXT NOT NULL,
    content           TEXT NOT NULL,
    session_key       TEXT NOT NULL DEFAULT '',
    state             TEXT NOT NULL,
    error             TEXT NOT NULL DEFAULT '',
    received_at       TEXT NOT NULL,
    UNIQUE (channel_id, platform_event_id)
);
CREATE INDEX IF NOT EXISTS idx_channel_events_state ON channel_events(channel_id, state);
CREATE TABLE IF NOT EXISTS channel_outbox (
    id                  INTEGER PRIMARY KEY AUTOINCREMENT,
    channel_id          TEXT NOT NULL,
    event_id            INTEGER NOT NULL DEFAULT 0,
    seq                 INTEGER NOT NULL,
    reply_target        TEXT NOT NULL,
    thread              TEXT NOT NULL,
    reply_to            TEXT NOT NULL,
    content             TEXT NOT NULL,
    state               TEXT NOT NULL,
    attempts            INTEGER NOT NULL DEFAULT 0,
    platform_message_id TEXT NOT NULL DEFAULT '',
    error               TEXT NOT NULL DEFAULT '',
    created_at          TEXT NOT NULL,
    updated_at          TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS idx_channel_outbox_state ON channel_outbox(channel_id, state);

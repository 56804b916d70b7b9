-- Ours: the heartbeat's load_session_context reads the newest session of one channel (channel_id) with one peer.
-- This index walks a channel's sessions newest first (session/list's order), so the lookup stops at the first
-- session that matches the peer instead of sorting all of the channel's rows.
CREATE INDEX IF NOT EXISTS idx_session_metadata_channel_activity
    ON session_metadata(channel_id, julianday(last_activity) DESC, last_activity DESC, session_key);

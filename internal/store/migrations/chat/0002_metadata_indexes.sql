-- Metadata lookups by agent and channel. Runs after the Go step that adds columns an older upstream
-- session_metadata table may lack (CREATE TABLE IF NOT EXISTS does not add them).
CREATE INDEX IF NOT EXISTS idx_session_metadata_agent_alias ON session_metadata(agent_alias);
CREATE INDEX IF NOT EXISTS idx_session_metadata_channel_id ON session_metadata(channel_id);
CREATE INDEX IF NOT EXISTS idx_session_metadata_room_id ON session_metadata(room_id);
CREATE INDEX IF NOT EXISTS idx_session_metadata_sender_id ON session_metadata(sender_id);

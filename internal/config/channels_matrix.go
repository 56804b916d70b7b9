package config

// MatrixConfig is channels.matrix.<alias>: a Matrix account spoken to over the client-server API (/sync long
// polling), upstream's MatrixConfig without E2EE and streaming drafts. access_token and password are secrets
// (enc2: in the file). Without access_token, user_id + password log in (m.login.password), reusing device_id,
// or the device the first login was given (kept in the channel's data directory).
type MatrixConfig struct {
	Enabled             bool     `toml:"enabled" desc:"Sync this Matrix account and answer its rooms."`
	Homeserver          string   `toml:"homeserver" desc:"Homeserver base URL, e.g. https://matrix.org."`
	AccessToken         string   `toml:"access_token" note:"empty: log in with user_id + password" desc:"The bot account's access token (a secret, stored encrypted)."`
	UserID              string   `toml:"user_id" note:"empty: asked of the homeserver (whoami)" desc:"The bot's Matrix user id, e.g. @bot:example.org."`
	Password            string   `toml:"password" desc:"Login password used when access_token is empty (a secret, stored encrypted)."`
	DeviceID            string   `toml:"device_id" note:"empty: the device the first login gets, reused" desc:"Device id the password login uses."`
	AllowedRooms        []string `toml:"allowed_rooms" note:"empty: every joined room" desc:"Canonical room ids (!id:server) the bot answers in and accepts invites to."`
	MentionOnly         bool     `toml:"mention_only" desc:"In rooms with more than two members, answer only messages that mention the bot."`
	ReplyInThread       bool     `toml:"reply_in_thread" desc:"Send replies in a thread started from the message they answer (a threaded message is always answered in its thread)."`
	ApprovalTimeoutSecs int      `toml:"approval_timeout_secs" desc:"Seconds an approval prompt waits for a yes/no reply before the call is denied."`
	ExcludedTools       []string `toml:"excluded_tools" desc:"Tools left out of the turns this channel's messages start."`
}

func (c *MatrixConfig) setDefaults() { c.ReplyInThread, c.ApprovalTimeoutSecs = true, 300 }

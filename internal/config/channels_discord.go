package config

// DiscordConfig is channels.discord.<alias>: a Discord bot on the Gateway WebSocket v10 and REST v10 (upstream's
// DiscordConfig). BotToken is a secret (enc2: in the file). The keys after ExcludedTools are upstream's, accepted
// so a migrated file loads without warnings, and not used by this runtime (see the README's Discord section).
type DiscordConfig struct {
	Enabled             bool     `toml:"enabled" desc:"Connect this bot to the Discord gateway and answer its messages."`
	BotToken            string   `toml:"bot_token" desc:"The bot's token from the Discord Developer Portal (a secret, stored encrypted)."`
	GuildIDs            []string `toml:"guild_ids" note:"empty: every guild" desc:"Guild (server) ids whose messages are read; direct messages are read regardless."`
	ChannelIDs          []string `toml:"channel_ids" note:"empty: every channel" desc:"Guild channel ids whose messages are read; direct messages are read regardless."`
	ListenToBots        bool     `toml:"listen_to_bots" desc:"Read messages other bots send (never the bot's own)."`
	MentionOnly         bool     `toml:"mention_only" desc:"In guild channels, answer only messages that @-mention the bot."`
	IntentsMask         int64    `toml:"intents_mask" note:"0: GUILDS|GUILD_MESSAGES|DIRECT_MESSAGES|MESSAGE_CONTENT" desc:"Gateway intents sent in IDENTIFY instead of the derived mask."`
	ApprovalTimeoutSecs int      `toml:"approval_timeout_secs" desc:"Seconds an approval prompt waits for a button press before the call is denied."`
	ExcludedTools       []string `toml:"excluded_tools" desc:"Tools left out of the turns this channel's messages start."`
	// APIBaseURL is ours (a loopback fake in tests, a proxy): REST is <api_base_url>/api/v10.
	APIBaseURL string `toml:"api_base_url" desc:"Base URL of the Discord REST API (the gateway URL is asked of it)."`

	Archive               bool   `toml:"archive" desc:"Upstream's discord.db message archive (accepted, not used by this runtime)."`
	InterruptOnNewMessage bool   `toml:"interrupt_on_new_message" desc:"Upstream's cancel-on-new-message (accepted, not used by this runtime)."`
	SlashCommands         bool   `toml:"slash_commands" desc:"Upstream's /ask slash command (accepted, not used by this runtime)."`
	SlashCommandScope     string `toml:"slash_command_scope" desc:"Upstream's slash command scope (accepted, not used by this runtime)."`
	ProxyURL              string `toml:"proxy_url" desc:"Upstream's per-channel proxy (accepted, not used by this runtime)."`
	StreamMode            string `toml:"stream_mode" desc:"Upstream's draft streaming (accepted, not used: one message per reply chunk)."`
	DraftUpdateIntervalMs int    `toml:"draft_update_interval_ms" desc:"Upstream's draft edit interval (accepted, not used by this runtime)."`
	MultiMessageDelayMs   int    `toml:"multi_message_delay_ms" desc:"Upstream's multi-message delay (accepted, not used by this runtime)."`
	StallTimeoutSecs      int    `toml:"stall_timeout_secs" desc:"Upstream's stall watchdog (accepted, not used: liveness is judged by progress)."`
	ReactionNotifications string `toml:"reaction_notifications" desc:"Upstream's reaction recording (accepted, not used by this runtime)."`
	ReplyMinIntervalSecs  int    `toml:"reply_min_interval_secs" desc:"Upstream's outbound pacing floor (accepted, not used by this runtime)."`
	ReplyQueueDepthMax    int    `toml:"reply_queue_depth_max" desc:"Upstream's outbound pacing queue (accepted, not used by this runtime)."`
}

func (c *DiscordConfig) setDefaults() {
	c.APIBaseURL, c.ApprovalTimeoutSecs, c.SlashCommandScope, c.StreamMode = "https://discord.com", 300, "global", "off"
	c.DraftUpdateIntervalMs, c.MultiMessageDelayMs, c.ReactionNotifications = 1000, 800, "off"
}

package config

// TelegramConfig is channels.telegram.<alias>: a Telegram bot reached by Bot API long polling (upstream's
// TelegramConfig). BotToken is a secret (enc2: in the file).
type TelegramConfig struct {
	Enabled             bool     `toml:"enabled" desc:"Poll this bot and answer its chats."`
	BotToken            string   `toml:"bot_token" desc:"The bot's token from @BotFather (a secret, stored encrypted)."`
	APIBaseURL          string   `toml:"api_base_url" desc:"Base URL of the Bot API."`
	ApprovalTimeoutSecs int      `toml:"approval_timeout_secs" desc:"Seconds an approval prompt waits for a button press before the call is denied."`
	MentionOnly         bool     `toml:"mention_only" desc:"In groups, answer only messages that mention the bot."`
	ExcludedTools       []string `toml:"excluded_tools" desc:"Tools left out of the turns this channel's messages start."`
	// PollTimeoutSecs is getUpdates' long-poll timeout (upstream: 30).
	PollTimeoutSecs int `toml:"poll_timeout_secs" desc:"Seconds one getUpdates long poll waits for an update."`
}

func (t *TelegramConfig) setDefaults() {
	t.APIBaseURL, t.ApprovalTimeoutSecs, t.PollTimeoutSecs = "https://api.telegram.org", 120, 30
}

// PeerGroupConfig is peer_groups.<name>: which platform senders may talk to which agents on a channel (upstream's
// PeerGroupConfig). ExternalPeers empty means nobody; ["*"] means anyone.
type PeerGroupConfig struct {
	Channel       string   `toml:"channel" desc:"Channel type (telegram: every alias) or <type>.<alias> the group applies to."`
	Agents        []string `toml:"agents" desc:"Agents the group's peers may talk to."`
	ExternalPeers []string `toml:"external_peers" note:"empty: nobody; [\"*\"]: anyone" desc:"Platform user ids or @usernames allowed to talk to the agents."`
	Ignore        []string `toml:"ignore" desc:"Senders ignored even when external_peers lets them in."`
}

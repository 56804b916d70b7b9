package config

// SlackConfig is channels.slack.<alias>: a Slack app reached over Socket Mode (events and button presses on
// a WebSocket opened with the app-level token) and the Web API (replies with the bot token), upstream's
// SlackConfig. BotToken and AppToken are secrets (enc2: in the file); empty, they fall back to the environment
// (ZEROCLAW_SLACK_BOT_TOKEN, then SLACK_BOT_TOKEN; ZEROCLAW_SLACK_APP_TOKEN, then SLACK_APP_TOKEN). APIBaseURL
// is ours (upstream always speaks to https://slack.com/api).
type SlackConfig struct {
	Enabled             bool     `toml:"enabled" desc:"Connect this Slack app over Socket Mode and answer its channels."`
	BotToken            string   `toml:"bot_token" note:"empty: $ZEROCLAW_SLACK_BOT_TOKEN, then $SLACK_BOT_TOKEN" desc:"The bot user OAuth token (xoxb-...), a secret, stored encrypted."`
	AppToken            string   `toml:"app_token" note:"empty: $ZEROCLAW_SLACK_APP_TOKEN, then $SLACK_APP_TOKEN" desc:"The app-level token (xapp-...) with connections:write that opens Socket Mode, a secret."`
	APIBaseURL          string   `toml:"api_base_url" desc:"Base URL of the Slack Web API (ours; upstream always uses https://slack.com/api)."`
	ChannelIDs          []string `toml:"channel_ids" note:"empty: every conversation the app is in" desc:"Conversation ids (C..., G..., D...) whose messages are answered."`
	ThreadReplies       bool     `toml:"thread_replies" desc:"Answer in a thread under the message (a thread is then its own conversation)."`
	MentionOnly         bool     `toml:"mention_only" desc:"Outside direct messages, answer only messages that mention the bot."`
	ApprovalTimeoutSecs int      `toml:"approval_timeout_secs" desc:"Seconds an approval prompt waits for a button press before the call is denied."`
	ExcludedTools       []string `toml:"excluded_tools" desc:"Tools left out of the turns this channel's messages start."`
}

func (c *SlackConfig) setDefaults() {
	c.APIBaseURL, c.ThreadReplies, c.ApprovalTimeoutSecs = "https://slack.com/api", true, 300
}

package config

// IRCConfig is channels.irc.<alias>: one IRC server connection (upstream's IrcConfig). The passwords are
// secrets (enc2: in the file). UseTLS is ours: upstream always speaks TLS; false allows a plain-text server
// on a trusted network (a local ngIRCd).
type IRCConfig struct {
	Enabled          bool     `toml:"enabled" desc:"Connect to this IRC server and answer its messages."`
	Server           string   `toml:"server" desc:"IRC server host name."`
	Port             int      `toml:"port" desc:"IRC server port (6697: TLS)."`
	Nickname         string   `toml:"nickname" desc:"The bot's nick (an _ is appended while it is taken)."`
	Username         string   `toml:"username" note:"empty: the nickname" desc:"USER name sent at registration."`
	Channels         []string `toml:"channels" desc:"Channels to join (#name); direct messages are answered too."`
	ServerPassword   string   `toml:"server_password" desc:"Server password (PASS), a secret."`
	NickServPassword string   `toml:"nickserv_password" desc:"Password sent to NickServ IDENTIFY after registration, a secret."`
	SASLPassword     string   `toml:"sasl_password" desc:"SASL PLAIN password (with the nickname), a secret."`
	VerifyTLS        bool     `toml:"verify_tls" desc:"Verify the server's TLS certificate."`
	UseTLS           bool     `toml:"use_tls" desc:"Speak TLS to the server (ours; upstream always does)."`
	MentionOnly      bool     `toml:"mention_only" desc:"In channels, answer only messages that mention the bot's nick."`
	ExcludedTools    []string `toml:"excluded_tools" desc:"Tools left out of the turns this channel's messages start."`
}

func (c *IRCConfig) setDefaults() { c.Port, c.VerifyTLS, c.UseTLS = 6697, true, true }

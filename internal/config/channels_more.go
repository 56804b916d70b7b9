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

// EmailConfig is channels.email.<alias>: a mailbox read over IMAP (IDLE, or polling without it) and answered
// over SMTP (upstream's EmailConfig). password and smtp_password are secrets. ImapTLS is ours: upstream always
// speaks TLS to IMAP; false allows a plain-text server on a trusted network (a local Dovecot).
type EmailConfig struct {
	Enabled          bool     `toml:"enabled" desc:"Read this mailbox and answer its mail."`
	IMAPHost         string   `toml:"imap_host" desc:"IMAP server host."`
	IMAPPort         int      `toml:"imap_port" desc:"IMAP server port (993: TLS)."`
	IMAPFolder       string   `toml:"imap_folder" desc:"Folder read for new mail."`
	IMAPTLS          bool     `toml:"imap_tls" desc:"Speak TLS to the IMAP server (ours; upstream always does)."`
	SMTPHost         string   `toml:"smtp_host" desc:"SMTP server host for replies."`
	SMTPPort         int      `toml:"smtp_port" desc:"SMTP server port (465: implicit TLS; 587: STARTTLS with smtp_tls = false)."`
	SMTPTLS          bool     `toml:"smtp_tls" desc:"Implicit TLS to the SMTP server (false: STARTTLS when offered)."`
	SMTPUsername     string   `toml:"smtp_username" note:"empty: username" desc:"SMTP login; empty: no SMTP authentication unless username is set."`
	SMTPPassword     string   `toml:"smtp_password" note:"empty: password" desc:"SMTP password, a secret."`
	Username         string   `toml:"username" desc:"IMAP login."`
	Password         string   `toml:"password" desc:"IMAP password, a secret."`
	FromAddress      string   `toml:"from_address" desc:"From: address of replies."`
	IdleTimeoutSecs  int      `toml:"idle_timeout_secs" desc:"Seconds one IMAP IDLE lasts before it is renewed."`
	PollIntervalSecs int      `toml:"poll_interval_secs" desc:"Seconds between polls when the server has no IDLE."`
	DefaultSubject   string   `toml:"default_subject" desc:"Subject of a reply whose original subject is unknown."`
	ObserverMode     bool     `toml:"observer_mode" desc:"Never set \\Seen (read with BODY.PEEK only); mail is then deduped by Message-ID alone."`
	ExcludedTools    []string `toml:"excluded_tools" desc:"Tools left out of the turns this channel's mail starts."`
}

func (c *EmailConfig) setDefaults() {
	c.IMAPPort, c.IMAPFolder, c.IMAPTLS, c.SMTPPort, c.SMTPTLS = 993, "INBOX", true, 465, true
	c.IdleTimeoutSecs, c.PollIntervalSecs, c.DefaultSubject = 1740, 60, "Re: Message"
}

package discord

import (
	"encoding/json"
	"slices"
	"strings"
	"time"

	"github.com/zeroclaw-go/zeroclaw/internal/channel"
)

// The gateway's opcodes (v10).
const (
	opDispatch       = 0
	opHeartbeat      = 1
	opIdentify       = 2
	opResume         = 6
	opReconnect      = 7
	opInvalidSession = 9
	opHello          = 10
	opHeartbeatAck   = 11
)

// Gateway intents.
const (
	intentGuilds         = 1 << 0
	intentGuildMessages  = 1 << 9
	intentDirectMessages = 1 << 12
	intentMessageContent = 1 << 15
	// defaultIntents is upstream's derived mask without reactions.
	defaultIntents = intentGuilds | intentGuildMessages | intentDirectMessages | intentMessageContent
)

// payload is one gateway frame: {"op", "d", "s", "t"}.
type payload struct {
	Op int             `json:"op"`
	D  json.RawMessage `json:"d"`
	S  *int64          `json:"s"`
	T  string          `json:"t"`
}

type hello struct {
	HeartbeatInterval int64 `json:"heartbeat_interval"`
}

type ready struct {
	SessionID        string `json:"session_id"`
	ResumeGatewayURL string `json:"resume_gateway_url"`
	User             user   `json:"user"`
}

type user struct {
	ID       string `json:"id"`
	Username string `json:"username"`
	Bot      bool   `json:"bot"`
}

type message struct {
	ID        string `json:"id"`
	ChannelID string `json:"channel_id"`
	GuildID   string `json:"guild_id"`
	Author    *user  `json:"author"`
	Content   string `json:"content"`
	Type      int    `json:"type"`
	WebhookID string `json:"webhook_id"`
	Mentions  []user `json:"mentions"`
	Timestamp string `json:"timestamp"`
}

type interaction struct {
	ID        string `json:"id"`
	Token     string `json:"token"`
	Type      int    `json:"type"`
	ChannelID string `json:"channel_id"`
	GuildID   string `json:"guild_id"`
	Member    *struct {
		User *user `json:"user"`
	} `json:"member"`
	User *user `json:"user"`
	Data *struct {
		CustomID      string `json:"custom_id"`
		ComponentType int    `json:"component_type"`
	} `json:"data"`
}

// Message types a person writes: DEFAULT and REPLY (joins, pins, boosts are not chat).
const (
	msgTypeDefault = 0
	msgTypeReply   = 19
	// interactionComponent is a button press (MESSAGE_COMPONENT).
	interactionComponent = 3
	componentButton      = 2
)

// customPrefix starts the custom_id of the approval buttons: zc:<token>:<a|d>.
const customPrefix = "zc:"

// Filter is what decides whether a MESSAGE_CREATE is taken (the entry's guild_ids, channel_ids,
// listen_to_bots, mention_only and the bot's own user id from READY).
type Filter struct {
	BotID        string
	GuildIDs     []string
	ChannelIDs   []string
	ListenToBots bool
	MentionOnly  bool
}

// snowflake reports whether s is a Discord id: 1 to 20 decimal digits. Ids from the gateway end up in REST
// paths, so anything else (a "../" from a hostile peer) is refused.
func snowflake(s string) bool {
	if len(s) == 0 || len(s) > 20 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// DecodeMessage turns a MESSAGE_CREATE's d into an event for the core; ok is false for a message the channel
// does not take (its own, another bot's, a system message, an empty one, outside the guild and channel
// filters, or without the mention mention_only asks for).
func DecodeMessage(raw []byte, f Filter) (ev channel.Inbound, ok bool, err error) {
	var m message
	if err := json.Unmarshal(raw, &m); err != nil {
		return ev, false, err
	}
	if !snowflake(m.ID) || !snowflake(m.ChannelID) || m.Author == nil || !snowflake(m.Author.ID) ||
		(m.GuildID != "" && !snowflake(m.GuildID)) {
		return ev, false, nil
	}
	if m.Type != msgTypeDefault && m.Type != msgTypeReply {
		return ev, false, nil
	}
	if m.Author.ID == f.BotID || (m.Author.Bot || m.WebhookID != "") && !f.ListenToBots {
		return ev, false, nil
	}
	group := m.GuildID != ""
	if group {
		if len(f.GuildIDs) > 0 && !slices.Contains(f.GuildIDs, m.GuildID) {
			return ev, false, nil
		}
		if len(f.ChannelIDs) > 0 && !slices.Contains(f.ChannelIDs, m.ChannelID) {
			return ev, false, nil
		}
	}
	text := m.Content
	if f.BotID != "" {
		mentioned := slices.ContainsFunc(m.Mentions, func(u user) bool { return u.ID == f.BotID }) ||
			strings.Contains(text, "<@"+f.BotID+">") || strings.Contains(text, "<@!"+f.BotID+">")
		if group && f.MentionOnly && !mentioned {
			return ev, false, nil
		}
		text = strings.ReplaceAll(strings.ReplaceAll(text, "<@!"+f.BotID+">", ""), "<@"+f.BotID+">", "")
	} else if group && f.MentionOnly {
		return ev, false, nil // READY not seen: the bot's id, and so a mention, is unknown
	}
	text = strings.TrimSpace(text)
	if text == "" {
		return ev, false, nil // an attachment alone, or MESSAGE_CONTENT not granted
	}
	ev = channel.Inbound{EventID: m.ID, Kind: channel.KindMessage, Sender: m.Author.ID, SenderName: m.Author.Username,
		ReplyTarget: m.ChannelID, MessageID: m.ID, Text: text, Group: group}
	if t, err := time.Parse(time.RFC3339Nano, m.Timestamp); err == nil {
		ev.At = t
	}
	return ev, true, nil
}

// DecodeInteraction turns an INTERACTION_CREATE's d into an approval answer; ok is false for anything but a
// press of one of our buttons. AckID is "<interaction id>:<interaction token>", what the callback needs.
func DecodeInteraction(raw []byte) (ev channel.Inbound, ok bool, err error) {
	var in interaction
	if err := json.Unmarshal(raw, &in); err != nil {
		return ev, false, err
	}
	if in.Type != interactionComponent || in.Data == nil || in.Data.ComponentType != componentButton ||
		!snowflake(in.ID) || in.Token == "" || len(in.Token) > 512 || !snowflake(in.ChannelID) {
		return ev, false, nil
	}
	u := in.User
	if in.Member != nil && in.Member.User != nil {
		u = in.Member.User
	}
	if u == nil || !snowflake(u.ID) || u.Bot {
		return ev, false, nil
	}
	rest, found := strings.CutPrefix(in.Data.CustomID, customPrefix)
	token, act, found2 := strings.Cut(rest, ":")
	if !found || !found2 || token == "" || len(in.Data.CustomID) > 100 {
		return ev, false, nil
	}
	var d string
	switch act {
	case "a":
		d = channel.DecisionAllowOnce
	case "d":
		d = channel.DecisionRejectOnce
	default:
		return ev, false, nil
	}
	return channel.Inbound{EventID: in.ID, Kind: channel.KindApproval, Sender: u.ID, SenderName: u.Username,
		ReplyTarget: in.ChannelID, Group: in.GuildID != "",
		Approval: &channel.ApprovalAnswer{Token: token, Decision: d, AckID: in.ID + ":" + in.Token}}, true, nil
}

// escapeMarkdown backslash-escapes Discord's markdown and mention syntax, so the text of an approval prompt
// shows exactly what would run: no masked link, spoiler, code fence or heading can hide or restyle part of it.
func escapeMarkdown(s string) string {
	var b strings.Builder
	b.Grow(len(s) + len(s)/8)
	for _, r := range s {
		if strings.ContainsRune("\\*_~`|>#[]()<@:-", r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

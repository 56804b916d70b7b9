package slack

import (
	"encoding/json"
	"errors"
	"strings"

	"github.com/zeroclaw-go/zeroclaw/internal/channel"
)

// The Socket Mode and Web API JSON, only the fields the adapter reads.

// Envelope is one Socket Mode frame: hello, disconnect, or an events_api / interactive / slash_commands
// envelope to acknowledge by its envelope_id.
type Envelope struct {
	Type         string          `json:"type"`
	EnvelopeID   string          `json:"envelope_id"`
	Reason       string          `json:"reason"` // disconnect: refresh_requested, warning, link_disabled
	RetryAttempt int             `json:"retry_attempt"`
	RetryReason  string          `json:"retry_reason"`
	Payload      json.RawMessage `json:"payload"`
}

type eventCallback struct {
	Type    string `json:"type"` // event_callback
	EventID string `json:"event_id"`
	Event   struct {
		Type        string `json:"type"` // message, app_mention
		Subtype     string `json:"subtype"`
		Channel     string `json:"channel"`
		ChannelType string `json:"channel_type"` // im, channel, group, mpim
		User        string `json:"user"`
		BotID       string `json:"bot_id"`
		Text        string `json:"text"`
		TS          string `json:"ts"`
		ThreadTS    string `json:"thread_ts"`
	} `json:"event"`
}

type blockActions struct {
	Type string `json:"type"` // block_actions
	User struct {
		ID       string `json:"id"`
		Username string `json:"username"`
	} `json:"user"`
	Channel struct {
		ID string `json:"id"`
	} `json:"channel"`
	Container struct {
		MessageTS string `json:"message_ts"`
		ChannelID string `json:"channel_id"`
		ThreadTS  string `json:"thread_ts"`
	} `json:"container"`
	TriggerID string `json:"trigger_id"`
	Actions   []struct {
		ActionID string `json:"action_id"`
		Value    string `json:"value"`
		ActionTS string `json:"action_ts"`
	} `json:"actions"`
}

// actionPrefix starts the value (and action_id) of the approval buttons: zc:<token>:<a|d>.
const actionPrefix = "zc:"

// maxIDLen bounds the ids the adapter takes from an event (Slack's are ~11 bytes; a ts is 17).
const maxIDLen = 64

// view is how the adapter decodes: who the bot is and whether threads are answered in.
type view struct {
	botUser       string
	threadReplies bool
}

// errNoEnvelope is a frame that is no JSON object with a type: it cannot be acknowledged, it is skipped.
var errNoEnvelope = errors.New("slack: frame is not a Socket Mode envelope")

// DecodeEnvelope reads one Socket Mode frame.
func DecodeEnvelope(raw []byte) (Envelope, error) {
	var e Envelope
	if err := json.Unmarshal(raw, &e); err != nil || e.Type == "" {
		return Envelope{}, errNoEnvelope
	}
	return e, nil
}

// decode turns an events_api or interactive envelope into an event for the core; ok is false for one
// carrying nothing the core takes (the bot's own message, an edit, a join, a stranger's odd shape), which is
// acknowledged and dropped.
func (v view) decode(e Envelope) (ev channel.Inbound, ok bool) {
	switch e.Type {
	case "events_api":
		var cb eventCallback
		if json.Unmarshal(e.Payload, &cb) != nil || cb.Type != "event_callback" {
			return ev, false
		}
		m := cb.Event
		if m.Type != "message" && m.Type != "app_mention" {
			return ev, false
		}
		if m.Subtype != "" && m.Subtype != "thread_broadcast" && m.Subtype != "file_share" {
			return ev, false // edits, deletions, joins, bot_message
		}
		if m.BotID != "" || m.User == "" || m.User == v.botUser || m.Text == "" {
			return ev, false
		}
		if !idLike(m.Channel) || !idLike(m.User) || !tsLike(m.TS) || m.ThreadTS != "" && !tsLike(m.ThreadTS) {
			return ev, false
		}
		// One message can arrive twice, as message and as app_mention (different event_ids), and again as a
		// retry: its (channel, ts) names it.
		ev.EventID = "msg:" + m.Channel + ":" + m.TS
		ev.Kind, ev.Text, ev.Sender = channel.KindMessage, m.Text, m.User
		ev.ReplyTarget, ev.MessageID = m.Channel, m.TS
		ev.Group = m.ChannelType != "im" && !strings.HasPrefix(m.Channel, "D")
		switch {
		case m.ThreadTS != "":
			ev.Thread = m.ThreadTS
		case v.threadReplies:
			ev.Thread = m.TS // the answer opens a thread under the message: the conversation lives there
		}
		return ev, true
	case "interactive":
		var ba blockActions
		if json.Unmarshal(e.Payload, &ba) != nil || ba.Type != "block_actions" || len(ba.Actions) == 0 {
			return ev, false
		}
		act := ba.Actions[0]
		rest, found := strings.CutPrefix(act.Value, actionPrefix)
		token, what, found2 := strings.Cut(rest, ":")
		if !found || !found2 || token == "" || len(token) > maxIDLen {
			return ev, false
		}
		d := ""
		switch what {
		case "a":
			d = channel.DecisionAllowOnce
		case "d":
			d = channel.DecisionRejectOnce
		default:
			return ev, false
		}
		ch := ba.Channel.ID
		if ch == "" {
			ch = ba.Container.ChannelID
		}
		if !idLike(ba.User.ID) || !idLike(ch) || !tsLike(ba.Container.MessageTS) || act.ActionTS != "" && !tsLike(act.ActionTS) {
			return ev, false
		}
		// A press has no event id: who pressed which message's button when names it.
		ev.EventID = "act:" + ch + ":" + ba.Container.MessageTS + ":" + ba.User.ID + ":" + act.ActionTS
		ev.Kind, ev.Sender, ev.SenderName = channel.KindApproval, ba.User.ID, clip(ba.User.Username, maxIDLen)
		ev.ReplyTarget, ev.Thread = ch, ba.Container.ThreadTS
		if ev.Thread != "" && !tsLike(ev.Thread) {
			ev.Thread = ""
		}
		ev.Approval = &channel.ApprovalAnswer{Token: token, Decision: d, AckID: ch + " " + ba.User.ID}
		return ev, true
	}
	return ev, false
}

// idLike reports a Slack id: 1..64 ASCII letters and digits (U0123ABC, C0123, D0123).
func idLike(s string) bool {
	if s == "" || len(s) > maxIDLen {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

// tsLike reports a Slack ts: digits, one dot, digits (1700000000.000100).
func tsLike(s string) bool {
	if s == "" || len(s) > 32 {
		return false
	}
	whole, frac, ok := strings.Cut(s, ".")
	return ok && whole != "" && frac != "" && digits(whole) && digits(frac)
}

func digits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

func clip(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}

// escape makes text literal for Slack: &, < and > are the only characters its mrkdwn treats as control
// (<!channel>, <@U...>, <https://...|label>), so a model or a tool summary cannot ping a channel or disguise a
// link.
func escape(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;").Replace(s)
}

// apiResponse is the Web API's common answer.
type apiResponse struct {
	OK       bool   `json:"ok"`
	Error    string `json:"error"`
	URL      string `json:"url"`     // apps.connections.open
	UserID   string `json:"user_id"` // auth.test
	Channel  string `json:"channel"` // chat.postMessage
	TS       string `json:"ts"`      // chat.postMessage
	Messages []struct {
		TS       string `json:"ts"`
		Metadata *struct {
			EventType    string `json:"event_type"`
			EventPayload struct {
				Key string `json:"key"`
			} `json:"event_payload"`
		} `json:"metadata"`
	} `json:"messages"` // conversations.history / replies
	HasMore          bool `json:"has_more"`
	ResponseMetadata struct {
		NextCursor string `json:"next_cursor"`
	} `json:"response_metadata"`
}

// metadataType is the event_type of the metadata every message we send carries: its payload's key is the
// core's Outbound.Key, what WasSent looks for.
const metadataType = "zeroclaw_reply"

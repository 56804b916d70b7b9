package heartbeat

import (
	"context"
	"fmt"
	"strings"
	"time"
)

// HistoryMessage is one message of a chat session, as load_session_context reads it.
type HistoryMessage struct {
	Role    string // "user" or "assistant"; others are ignored
	Content string
}

// History returns the newest session's messages with target (oldest first) and when its last message came.
type History func(ctx context.Context, target Target) ([]HistoryMessage, time.Time, error)

// Session context bounds (upstream's): the last 20 user/assistant messages, each cut to 500 bytes.
const (
	SessionContextMessages = 20
	SessionContextChars    = 500
)

// SessionContext is upstream's "[Recent conversation history …]" block for msgs, or "" when the window holds
// no user message (a heartbeat's own outputs are not fed back to it). Each message is scrubbed of secrets
// (scrub may be nil) before it is cut, so a secret cannot survive as a truncated prefix, and keeps to one line.
func SessionContext(msgs []HistoryMessage, age time.Duration, scrub func(string) string) string {
	var recent []HistoryMessage
	for i := len(msgs) - 1; i >= 0 && len(recent) < SessionContextMessages; i-- {
		if m := msgs[i]; m.Role == "user" || m.Role == "assistant" {
			recent = append(recent, m)
		}
	}
	user := false
	for _, m := range recent {
		user = user || m.Role == "user"
	}
	if !user {
		return ""
	}
	var b strings.Builder
	b.WriteString("[Recent conversation history — use this for context when composing your message] ")
	if age >= 0 {
		mins := int(age / time.Minute)
		switch {
		case mins < 60:
			fmt.Fprintf(&b, "(last message ~%d minutes ago)\n", mins)
		case mins%60 == 0:
			fmt.Fprintf(&b, "(last message ~%dh ago)\n", mins/60)
		default:
			fmt.Fprintf(&b, "(last message ~%dh %dm ago)\n", mins/60, mins%60)
		}
	}
	for i := len(recent) - 1; i >= 0; i-- {
		m := recent[i]
		label := "You"
		if m.Role == "user" {
			label = "User"
		}
		c := m.Content
		if scrub != nil {
			c = scrub(c)
		}
		c = oneLine.Replace(c)
		if len(c) > SessionContextChars {
			c = strings.ToValidUTF8(c[:SessionContextChars], "") + "..."
		}
		fmt.Fprintf(&b, "%s: %s\n", label, c)
	}
	return b.String()
}

// oneLine writes a message's line breaks as " ⏎ ": a channel message is anyone's, and a line of its own would
// read as a line of the block ("You: ..." as the agent's earlier words, "[Heartbeat Task | high] ..." as the
// owner's task).
var oneLine = strings.NewReplacer("\r\n", " ⏎ ", "\n", " ⏎ ", "\r", " ⏎ ", "\v", " ⏎ ", "\f", " ⏎ ",
	"\u0085", " ⏎ ", "\u2028", " ⏎ ", "\u2029", " ⏎ ")

// sessionContext loads the block for this tick, or "" (key off, no target, a path separator in target/to, no
// history, or an error, which is logged).
func (h *Heartbeat) sessionContext(ctx context.Context, channel, to string) string {
	if h.o.History == nil || channel == "" || to == "" || strings.ContainsAny(channel+to, `/\`) {
		return ""
	}
	msgs, last, err := h.o.History(ctx, Target{Channel: channel, To: to})
	if err != nil {
		h.log.Warn("heartbeat session context not loaded", "err", err)
		return ""
	}
	age := time.Duration(-1)
	if !last.IsZero() {
		age = max(h.o.Clock.Now().Sub(last), 0)
	}
	return SessionContext(msgs, age, h.o.Scrub)
}

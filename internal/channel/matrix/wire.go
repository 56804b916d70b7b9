package matrix

import (
	"encoding/json"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/zeroclaw-go/zeroclaw/internal/channel"
)

// The client-server API's JSON, only the fields the adapter reads. Every field is attacker input: a field of
// an unexpected shape makes its event (not the batch) undecodable, and the event is skipped.

// maxIDBytes bounds an event or room id (the spec's limit is 255 bytes).
const maxIDBytes = 255

type syncResponse struct {
	NextBatch string `json:"next_batch"`
	Rooms     struct {
		Join   map[string]json.RawMessage `json:"join"`
		Invite map[string]json.RawMessage `json:"invite"`
	} `json:"rooms"`
}

type joinedRoom struct {
	Timeline struct {
		Events    []json.RawMessage `json:"events"`
		Limited   bool              `json:"limited"`
		PrevBatch string            `json:"prev_batch"`
	} `json:"timeline"`
	Summary struct {
		Joined *int `json:"m.joined_member_count"`
	} `json:"summary"`
}

type invitedRoom struct {
	InviteState struct {
		Events []json.RawMessage `json:"events"`
	} `json:"invite_state"`
}

type strippedState struct {
	Type     string `json:"type"`
	StateKey string `json:"state_key"`
	Sender   string `json:"sender"`
	Content  struct {
		Membership string `json:"membership"`
	} `json:"content"`
}

type relatesTo struct {
	RelType   string `json:"rel_type"`
	EventID   string `json:"event_id"`
	InReplyTo *struct {
		EventID string `json:"event_id"`
	} `json:"m.in_reply_to"`
}

type roomEvent struct {
	Type     string `json:"type"`
	EventID  string `json:"event_id"`
	Sender   string `json:"sender"`
	OriginTS int64  `json:"origin_server_ts"`
	Content  struct {
		MsgType   string     `json:"msgtype"`
		Body      string     `json:"body"`
		RelatesTo *relatesTo `json:"m.relates_to"`
		Mentions  *struct {
			UserIDs []string `json:"user_ids"`
		} `json:"m.mentions"`
	} `json:"content"`
	Unsigned struct {
		TransactionID string `json:"transaction_id"`
	} `json:"unsigned"`
}

type matrixError struct {
	ErrCode      string `json:"errcode"`
	Error        string `json:"error"`
	RetryAfterMS int64  `json:"retry_after_ms"`
}

// Batch is one /sync answer as the adapter uses it: the next token, the timeline events of joined rooms (rooms
// in id order, each room's events in timeline order), the invites, and what the rooms' summaries said.
type Batch struct {
	NextBatch string
	Events    []RoomEvent
	Invites   []Invite
	// Members are the joined member counts the summaries carried (a room absent: not said in this batch).
	Members map[string]int
	// Gaps are the rooms whose timeline was limited (more events arrived than the filter's limit), in room id
	// order, each with the token from which the missing events are read back (/messages).
	Gaps []Gap
}

// RoomEvent is one timeline event of a room: Raw is the event, decoded by Inbound.
type RoomEvent struct {
	Room string
	Raw  json.RawMessage
}

// Gap is a room's limited timeline: the events before PrevBatch (back to the last sync's token) were left out.
type Gap struct {
	Room, PrevBatch string
}

// Invite is a pending invitation of the bot to a room.
type Invite struct {
	Room, Inviter string
}

// DecodeSync reads a /sync answer. A room whose object is undecodable is skipped (its events are lost to this
// token, as to a client that cannot read them); an answer that is not a sync object at all is an error.
func DecodeSync(raw []byte, self string) (Batch, error) {
	var r syncResponse
	if err := json.Unmarshal(raw, &r); err != nil {
		return Batch{}, err
	}
	b := Batch{NextBatch: r.NextBatch, Members: map[string]int{}}
	for _, room := range sortedKeys(r.Rooms.Join) {
		var jr joinedRoom
		if !validID(room) || json.Unmarshal(r.Rooms.Join[room], &jr) != nil {
			continue
		}
		if jr.Summary.Joined != nil {
			b.Members[room] = *jr.Summary.Joined
		}
		if jr.Timeline.Limited {
			b.Gaps = append(b.Gaps, Gap{Room: room, PrevBatch: jr.Timeline.PrevBatch})
		}
		for _, ev := range jr.Timeline.Events {
			b.Events = append(b.Events, RoomEvent{Room: room, Raw: ev})
		}
	}
	for _, room := range sortedKeys(r.Rooms.Invite) {
		var ir invitedRoom
		if !validID(room) || json.Unmarshal(r.Rooms.Invite[room], &ir) != nil {
			continue
		}
		for _, raw := range ir.InviteState.Events {
			var st strippedState
			if json.Unmarshal(raw, &st) != nil {
				continue
			}
			if st.Type == "m.room.member" && st.StateKey == self && st.Content.Membership == "invite" && st.Sender != "" {
				b.Invites = append(b.Invites, Invite{Room: room, Inviter: st.Sender})
				break
			}
		}
	}
	return b, nil
}

func validID(s string) bool { return s != "" && len(s) <= maxIDBytes }

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// Skip reasons of Inbound (ok = false).
const (
	skipUndecodable = "undecodable"
	skipNotMessage  = "not a message"
	skipOwn         = "own message"
	skipEncrypted   = "encrypted"
	skipNotText     = "not text"
	skipEdit        = "an edit"
)

// approvalReply is the reply convention of an approval answer: "yes <token>" or "no <token>".
// Compiled on first use (sync.OnceValue): a package-level regexp costs every zeroclaw command ~1,400
// allocations at init (cmd/zcbench TestInitAllocations).
var approvalReply = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?i)^\s*(yes|no)\s+([A-Za-z0-9]{1,64})\s*$`)
})

// Inbound turns one timeline event into an event for the core; ok is false (with a reason) for an event the
// core does not take: not an m.room.message, the bot's own, a notice (bots answer with notices: two bots must
// not loop), an edit, an empty or redacted body, an encrypted event (E2EE is not supported). A thread root is
// carried in MessageID ("<event>|<root>") so the reply continues the thread; Thread stays empty: as upstream,
// a room's conversation with a sender is one session whatever thread it is in.
func Inbound(room string, raw []byte, self string) (ev channel.Inbound, ok bool, reason string) {
	var e roomEvent
	if err := json.Unmarshal(raw, &e); err != nil || !validID(e.EventID) || e.Sender == "" || len(e.Sender) > maxIDBytes {
		return ev, false, skipUndecodable
	}
	switch {
	case e.Type == "m.room.encrypted":
		return ev, false, skipEncrypted
	case e.Type != "m.room.message":
		return ev, false, skipNotMessage
	case e.Sender == self:
		return ev, false, skipOwn
	case e.Content.MsgType != "m.text" && e.Content.MsgType != "m.emote":
		return ev, false, skipNotText
	case e.Content.RelatesTo != nil && e.Content.RelatesTo.RelType == "m.replace":
		return ev, false, skipEdit
	}
	text := stripReplyFallback(e.Content.Body)
	if strings.TrimSpace(text) == "" {
		return ev, false, skipNotText
	}
	ev = channel.Inbound{EventID: e.EventID, Kind: channel.KindMessage, Sender: e.Sender, ReplyTarget: room,
		MessageID: e.EventID, Text: text, Group: true}
	if r := e.Content.RelatesTo; r != nil && r.RelType == "m.thread" && validID(r.EventID) && !strings.Contains(r.EventID, "|") {
		ev.MessageID = e.EventID + "|" + r.EventID
	}
	if e.OriginTS > 0 && e.OriginTS < 1<<53 {
		ev.At = time.UnixMilli(e.OriginTS)
	}
	if m := approvalReply().FindStringSubmatch(text); m != nil {
		d := channel.DecisionRejectOnce
		if strings.EqualFold(m[1], "yes") {
			d = channel.DecisionAllowOnce
		}
		ev.Kind, ev.Text = channel.KindApproval, ""
		ev.Approval = &channel.ApprovalAnswer{Token: m[2], Decision: d, AckID: room}
	}
	return ev, true, ""
}

// ownJoin reports whether the event is the bot joining the room (not a profile change of an existing member).
func ownJoin(raw []byte, self string) bool {
	var e struct {
		Type     string `json:"type"`
		StateKey string `json:"state_key"`
		Content  struct {
			Membership string `json:"membership"`
		} `json:"content"`
		Unsigned struct {
			PrevContent struct {
				Membership string `json:"membership"`
			} `json:"prev_content"`
		} `json:"unsigned"`
	}
	return json.Unmarshal(raw, &e) == nil && e.Type == "m.room.member" && e.StateKey == self && self != "" &&
		e.Content.Membership == "join" && e.Unsigned.PrevContent.Membership != "join"
}

// mentions reports whether the event names self: in m.mentions (intentional mentions) or in its body.
func mentions(raw []byte, self string) bool {
	var e roomEvent
	if json.Unmarshal(raw, &e) != nil || self == "" {
		return false
	}
	if e.Content.Mentions != nil && slices.Contains(e.Content.Mentions.UserIDs, self) {
		return true
	}
	body := strings.ToLower(stripReplyFallback(e.Content.Body))
	if strings.Contains(body, strings.ToLower(self)) {
		return true
	}
	local, _, _ := strings.Cut(strings.TrimPrefix(self, "@"), ":")
	return local != "" && strings.Contains(body, strings.ToLower(local))
}

// stripReplyFallback drops the quoted "> " lines a rich reply's body starts with (the replied-to message, which
// must not pass for the sender's words) and the blank line after them.
func stripReplyFallback(body string) string {
	if !strings.HasPrefix(body, "> ") && body != ">" && !strings.HasPrefix(body, ">\n") {
		return body
	}
	rest := body
	for rest != "" {
		line, tail, found := strings.Cut(rest, "\n")
		if !strings.HasPrefix(line, ">") {
			break
		}
		rest = tail
		if !found {
			rest = ""
		}
	}
	return strings.TrimPrefix(rest, "\n")
}

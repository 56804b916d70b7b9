package telegram

import (
	"encoding/json"
	"strconv"
	"strings"

	"github.com/zeroclaw-go/zeroclaw/internal/channel"
)

// The Bot API's JSON, only the fields the adapter reads.

type apiResponse struct {
	OK          bool            `json:"ok"`
	Result      json.RawMessage `json:"result"`
	ErrorCode   int             `json:"error_code"`
	Description string          `json:"description"`
	Parameters  *struct {
		RetryAfter int `json:"retry_after"`
	} `json:"parameters"`
}

type update struct {
	UpdateID      int64          `json:"update_id"`
	Message       *message       `json:"message"`
	CallbackQuery *callbackQuery `json:"callback_query"`
}

type message struct {
	MessageID int64  `json:"message_id"`
	ThreadID  int64  `json:"message_thread_id"`
	From      *user  `json:"from"`
	Chat      chat   `json:"chat"`
	Date      int64  `json:"date"`
	Text      string `json:"text"`
	Caption   string `json:"caption"`
}

type user struct {
	ID       int64  `json:"id"`
	IsBot    bool   `json:"is_bot"`
	Username string `json:"username"`
}

type chat struct {
	ID   int64  `json:"id"`
	Type string `json:"type"`
}

type callbackQuery struct {
	ID      string   `json:"id"`
	From    user     `json:"from"`
	Message *message `json:"message"`
	Data    string   `json:"data"`
}

// callbackPrefix starts the callback_data of the approval buttons: zc:<token>:<a|d>.
const callbackPrefix = "zc:"

// DecodeUpdates reads a getUpdates result: the updates, in order, and the highest update_id seen (every update
// counts towards the offset, even one that carries nothing the core takes). An update the adapter does not
// take (a bot's own message, an edit, a sticker) gives ok = false from DecodeUpdate.
func DecodeUpdates(raw []byte) ([]json.RawMessage, error) {
	var ups []json.RawMessage
	if err := json.Unmarshal(raw, &ups); err != nil {
		return nil, err
	}
	return ups, nil
}

// DecodeUpdate turns one update into an event for the core. id is the update_id (valid whenever err is nil);
// ok is false for an update carrying nothing the core takes.
func DecodeUpdate(raw []byte) (ev channel.Inbound, id int64, ok bool, err error) {
	var u update
	if err := json.Unmarshal(raw, &u); err != nil {
		return channel.Inbound{}, 0, false, err
	}
	ev.EventID = strconv.FormatInt(u.UpdateID, 10)
	switch {
	case u.Message != nil:
		m := u.Message
		if m.From == nil || m.From.IsBot {
			return ev, u.UpdateID, false, nil
		}
		text := m.Text
		if text == "" {
			text = m.Caption
		}
		if text == "" {
			return ev, u.UpdateID, false, nil
		}
		ev.Kind, ev.Text = channel.KindMessage, text
		ev.Sender, ev.SenderName = strconv.FormatInt(m.From.ID, 10), m.From.Username
		ev.ReplyTarget, ev.MessageID = strconv.FormatInt(m.Chat.ID, 10), strconv.FormatInt(m.MessageID, 10)
		if m.ThreadID != 0 {
			ev.Thread = strconv.FormatInt(m.ThreadID, 10)
		}
		ev.Group = m.Chat.Type != "private"
		return ev, u.UpdateID, true, nil
	case u.CallbackQuery != nil:
		q := u.CallbackQuery
		rest, found := strings.CutPrefix(q.Data, callbackPrefix)
		token, act, found2 := strings.Cut(rest, ":")
		if !found || !found2 || token == "" || q.From.IsBot {
			return ev, u.UpdateID, false, nil
		}
		d := ""
		switch act {
		case "a":
			d = channel.DecisionAllowOnce
		case "d":
			d = channel.DecisionRejectOnce
		default:
			return ev, u.UpdateID, false, nil
		}
		ev.Kind = channel.KindApproval
		ev.Sender, ev.SenderName = strconv.FormatInt(q.From.ID, 10), q.From.Username
		if q.Message != nil {
			ev.ReplyTarget = strconv.FormatInt(q.Message.Chat.ID, 10)
		}
		ev.Approval = &channel.ApprovalAnswer{Token: token, Decision: d, AckID: q.ID}
		return ev, u.UpdateID, true, nil
	}
	return ev, u.UpdateID, false, nil
}

package telegram

import (
	"strconv"
	"testing"
	"unicode/utf8"

	"github.com/zeroclaw-go/zeroclaw/internal/channel"
)

// FuzzDecodeUpdate: any bytes decode without panicking; a taken update has a platform id equal to its
// update_id, a kind, and an approval only with a token and a known decision.
func FuzzDecodeUpdate(f *testing.F) {
	f.Add([]byte(`{"update_id":1,"message":{"message_id":5,"from":{"id":42,"username":"o"},"chat":{"id":42,"type":"private"},"text":"hi"}}`))
	f.Add([]byte(`{"update_id":2,"callback_query":{"id":"q","from":{"id":42},"message":{"message_id":1,"chat":{"id":42}},"data":"zc:abc:a"}}`))
	f.Add([]byte(`{"update_id":3,"callback_query":{"id":"q","from":{"id":42},"data":"zc::x"}}`))
	f.Add([]byte(`{"update_id":4,"message":{"from":{"id":1,"is_bot":true},"chat":{"id":1},"text":"loop"}}`))
	f.Add([]byte(`[]`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		ev, id, ok, err := DecodeUpdate(raw)
		if err != nil || !ok {
			return
		}
		if ev.EventID != strconv.FormatInt(id, 10) {
			t.Fatalf("event id %q for update %d", ev.EventID, id)
		}
		switch ev.Kind {
		case channel.KindMessage:
			if ev.Text == "" || ev.Sender == "" || ev.ReplyTarget == "" {
				t.Fatalf("message %+v", ev)
			}
		case channel.KindApproval:
			if ev.Approval == nil || ev.Approval.Token == "" ||
				ev.Approval.Decision != channel.DecisionAllowOnce && ev.Approval.Decision != channel.DecisionRejectOnce {
				t.Fatalf("approval %+v", ev)
			}
		default:
			t.Fatalf("kind %q", ev.Kind)
		}
		if !utf8.ValidString(ev.Sender) {
			t.Fatalf("sender %q", ev.Sender)
		}
	})
}

package slack

import (
	"strings"
	"testing"

	"github.com/zeroclaw-go/zeroclaw/internal/channel"
)

// FuzzSlackDecode feeds hostile Socket Mode frames to the decoder: it never panics, and whatever it takes has
// a platform id, a Slack-shaped sender and conversation, and an approval only with a token and a known decision.
func FuzzSlackDecode(f *testing.F) {
	f.Add([]byte(`{"envelope_id":"e1","type":"events_api","payload":{"type":"event_callback","event_id":"Ev1","event":{"type":"message","channel":"D1","user":"U1","text":"hi","ts":"1.2","channel_type":"im"}}}`))
	f.Add([]byte(`{"envelope_id":"e2","type":"interactive","payload":{"type":"block_actions","user":{"id":"U1","username":"u"},"channel":{"id":"C1"},"container":{"message_ts":"1.2","thread_ts":"1.1"},"actions":[{"value":"zc:tok:a","action_ts":"1.3"}]}}`))
	f.Add([]byte(`{"type":"disconnect","reason":"refresh_requested"}`))
	f.Add([]byte(`{"type":"hello","num_connections":1}`))
	f.Add([]byte(`{"envelope_id":"e3","type":"events_api","payload":{"type":"event_callback","event":{"type":"message","subtype":"bot_message","bot_id":"B1","channel":"C1","text":"x","ts":"1.2"}}}`))
	f.Add([]byte(`[1,2`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		e, err := DecodeEnvelope(raw)
		if err != nil {
			return
		}
		for _, v := range []view{{botUser: "UBOT", threadReplies: true}, {}} {
			ev, ok := v.decode(e)
			if !ok {
				continue
			}
			if ev.EventID == "" || !idLike(ev.Sender) || !idLike(ev.ReplyTarget) || ev.Sender == "UBOT" && v.botUser != "" && ev.Kind == channel.KindMessage {
				t.Fatalf("took %+v", ev)
			}
			switch ev.Kind {
			case channel.KindMessage:
				if ev.Text == "" || !tsLike(ev.MessageID) || ev.Approval != nil {
					t.Fatalf("message %+v", ev)
				}
			case channel.KindApproval:
				a := ev.Approval
				if a == nil || a.Token == "" ||
					a.Decision != channel.DecisionAllowOnce && a.Decision != channel.DecisionRejectOnce {
					t.Fatalf("approval %+v", ev)
				}
			default:
				t.Fatalf("kind %q", ev.Kind)
			}
		}
	})
}

// escape leaves no control sequence: no '<' or '>' survives, and '&' only starts an entity.
func TestEscape(t *testing.T) {
	got := escape("<!channel> & <@U1> <https://evil|docs>")
	if strings.ContainsAny(got, "<>") || got != "&lt;!channel&gt; &amp; &lt;@U1&gt; &lt;https://evil|docs&gt;" {
		t.Fatalf("escape: %q", got)
	}
}

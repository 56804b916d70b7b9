package matrix

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/zeroclaw-go/zeroclaw/internal/channel"
)

const self = "@bot:example.org"

func TestInboundTakesTextOnly(t *testing.T) {
	msg := func(sender, content string) []byte {
		return []byte(`{"type":"m.room.message","event_id":"$e1","sender":"` + sender + `","origin_server_ts":1700000000000,"content":` + content + `}`)
	}
	for _, c := range []struct {
		name string
		raw  []byte
		ok   bool
		why  string
	}{
		{"text", msg("@a:x", `{"msgtype":"m.text","body":"hi"}`), true, ""},
		{"own", msg(self, `{"msgtype":"m.text","body":"hi"}`), false, skipOwn},
		{"notice", msg("@a:x", `{"msgtype":"m.notice","body":"hi"}`), false, skipNotText},
		{"image", msg("@a:x", `{"msgtype":"m.image","body":"x.png"}`), false, skipNotText},
		{"edit", msg("@a:x", `{"msgtype":"m.text","body":"* hi","m.relates_to":{"rel_type":"m.replace","event_id":"$e0"}}`), false, skipEdit},
		{"redacted", msg("@a:x", `{}`), false, skipNotText},
		{"body a number", msg("@a:x", `{"msgtype":"m.text","body":5}`), false, skipUndecodable},
		{"encrypted", []byte(`{"type":"m.room.encrypted","event_id":"$e","sender":"@a:x","content":{}}`), false, skipEncrypted},
		{"no event id", []byte(`{"type":"m.room.message","sender":"@a:x","content":{"msgtype":"m.text","body":"hi"}}`), false, skipUndecodable},
		{"long event id", []byte(`{"type":"m.room.message","event_id":"$` + strings.Repeat("a", 300) + `","sender":"@a:x","content":{"msgtype":"m.text","body":"hi"}}`), false, skipUndecodable},
		{"only a quote", msg("@a:x", `{"msgtype":"m.text","body":"> quoted\n> more"}`), false, skipNotText},
	} {
		ev, ok, why := Inbound("!r:x", c.raw, self)
		if ok != c.ok || why != c.why {
			t.Errorf("%s: ok %v why %q, want %v %q (%+v)", c.name, ok, why, c.ok, c.why, ev)
		}
	}
	ev, _, _ := Inbound("!r:x", msg("@a:x", `{"msgtype":"m.text","body":"> <@bot:example.org> yes 123\n\nno abc123","m.relates_to":{"rel_type":"m.thread","event_id":"$root"}}`), self)
	if ev.Kind != channel.KindApproval || ev.Approval.Token != "abc123" || ev.Approval.Decision != channel.DecisionRejectOnce ||
		ev.MessageID != "$e1|$root" || ev.Approval.AckID != "!r:x" || ev.At.IsZero() {
		t.Fatalf("threaded approval %+v %+v", ev, ev.Approval)
	}
}

func TestMentions(t *testing.T) {
	for body, want := range map[string]bool{"bot: hi": true, "hi @bot:example.org": true, "hello": false, "> bot said\n\nhello": false} {
		raw := []byte(`{"content":{"body":` + quote(body) + `}}`)
		if mentions(raw, self) != want {
			t.Errorf("%q: want %v", body, want)
		}
	}
}

func quote(s string) string {
	return `"` + strings.ReplaceAll(strings.ReplaceAll(s, `\`, `\\`), "\n", `\n`) + `"`
}

// FuzzSyncDecode: any bytes decode without panicking; every event taken has the platform's event id, a room,
// a sender that is not the bot, valid UTF-8, and an approval only with a token and a known decision.
func FuzzSyncDecode(f *testing.F) {
	f.Add([]byte(`{"next_batch":"s9","rooms":{"join":{"!r:x":{"timeline":{"events":[{"type":"m.room.message","event_id":"$e","sender":"@a:x","content":{"msgtype":"m.text","body":"yes abc"}}],"limited":true},"summary":{"m.joined_member_count":2}}},"invite":{"!i:x":{"invite_state":{"events":[{"type":"m.room.member","state_key":"@bot:example.org","sender":"@a:x","content":{"membership":"invite"}}]}}}}}`))
	f.Add([]byte(`{"next_batch":"s1","rooms":{"join":{"!r:x":{"timeline":{"events":[{"type":"m.room.message","event_id":"$e","sender":"@bot:example.org","content":{"msgtype":"m.text","body":"hi"}},5,null,"x"]}}}}}`))
	f.Add([]byte(`{"rooms":{"join":[]}}`))
	f.Add([]byte(`[]`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		b, err := DecodeSync(raw, self)
		if err != nil {
			return
		}
		for _, in := range b.Invites {
			if in.Room == "" || in.Inviter == "" {
				t.Fatalf("invite %+v", in)
			}
		}
		for _, re := range b.Events {
			ev, ok, _ := Inbound(re.Room, re.Raw, self)
			_ = mentions(re.Raw, self)
			if !ok {
				continue
			}
			if ev.EventID == "" || len(ev.EventID) > maxIDBytes || ev.ReplyTarget != re.Room || ev.Sender == "" || ev.Sender == self {
				t.Fatalf("event %+v", ev)
			}
			if !utf8.ValidString(ev.Text) || !utf8.ValidString(ev.Sender) {
				t.Fatalf("invalid UTF-8 %+v", ev)
			}
			switch ev.Kind {
			case channel.KindMessage:
				if strings.TrimSpace(ev.Text) == "" {
					t.Fatalf("empty message %+v", ev)
				}
			case channel.KindApproval:
				if ev.Approval == nil || ev.Approval.Token == "" ||
					ev.Approval.Decision != channel.DecisionAllowOnce && ev.Approval.Decision != channel.DecisionRejectOnce {
					t.Fatalf("approval %+v", ev)
				}
			default:
				t.Fatalf("kind %q", ev.Kind)
			}
		}
	})
}

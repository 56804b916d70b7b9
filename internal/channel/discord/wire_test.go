package discord

import (
	"net/http"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/zeroclaw-go/zeroclaw/internal/channel"
)

const bot = "900000000000000001"

func msg(extra string) []byte {
	return []byte(`{"id":"1200","channel_id":"555","type":0,"author":{"id":"42","username":"owner"},"content":"hi <@` + bot + `>"` + extra + `}`)
}

// What MESSAGE_CREATE is taken: the bot's own and other bots' messages are not (unless listen_to_bots, never
// its own), guild and channel filters apply to guild messages only, mention_only needs the bot's mention
// (which is cut from the text), and a system message or a path-like id is refused.
func TestDecodeMessageFilters(t *testing.T) {
	cases := []struct {
		name string
		raw  string
		f    Filter
		ok   bool
		text string
	}{
		{"dm", string(msg("")), Filter{BotID: bot}, true, "hi"},
		{"own", `{"id":"1","channel_id":"5","type":0,"author":{"id":"` + bot + `","bot":true},"content":"x"}`, Filter{BotID: bot, ListenToBots: true}, false, ""},
		{"other bot", `{"id":"1","channel_id":"5","type":0,"author":{"id":"7","bot":true},"content":"x"}`, Filter{BotID: bot}, false, ""},
		{"other bot listened", `{"id":"1","channel_id":"5","type":0,"author":{"id":"7","bot":true},"content":"x"}`, Filter{BotID: bot, ListenToBots: true}, true, "x"},
		{"webhook", `{"id":"1","channel_id":"5","type":0,"webhook_id":"8","author":{"id":"7"},"content":"x"}`, Filter{BotID: bot}, false, ""},
		{"guild not listed", string(msg(`,"guild_id":"77"`)), Filter{BotID: bot, GuildIDs: []string{"78"}}, false, ""},
		{"guild listed", string(msg(`,"guild_id":"77"`)), Filter{BotID: bot, GuildIDs: []string{"77"}}, true, "hi"},
		{"channel not listed", string(msg(`,"guild_id":"77"`)), Filter{BotID: bot, ChannelIDs: []string{"556"}}, false, ""},
		{"dm ignores channel filter", string(msg("")), Filter{BotID: bot, ChannelIDs: []string{"556"}}, true, "hi"},
		{"mention only, mentioned", string(msg(`,"guild_id":"77"`)), Filter{BotID: bot, MentionOnly: true}, true, "hi"},
		{"mention only, not", `{"id":"1","channel_id":"5","guild_id":"77","type":0,"author":{"id":"42"},"content":"hello all"}`, Filter{BotID: bot, MentionOnly: true}, false, ""},
		{"mention only, bot unknown", string(msg(`,"guild_id":"77"`)), Filter{MentionOnly: true}, false, ""},
		{"system message", `{"id":"1","channel_id":"5","type":7,"author":{"id":"42"},"content":"joined"}`, Filter{BotID: bot}, false, ""},
		{"path in channel id", `{"id":"1","channel_id":"../users/@me","type":0,"author":{"id":"42"},"content":"x"}`, Filter{BotID: bot}, false, ""},
		{"only the mention", `{"id":"1","channel_id":"5","type":0,"author":{"id":"42"},"content":"<@!` + bot + `>"}`, Filter{BotID: bot}, false, ""},
		{"no author", `{"id":"1","channel_id":"5","type":0,"content":"x"}`, Filter{BotID: bot}, false, ""},
	}
	for _, c := range cases {
		ev, ok, err := DecodeMessage([]byte(c.raw), c.f)
		if err != nil || ok != c.ok || ok && ev.Text != c.text {
			t.Errorf("%s: ok %v err %v ev %+v", c.name, ok, err, ev)
		}
		if ok && (ev.EventID == "" || ev.EventID != ev.MessageID || ev.ReplyTarget == "") {
			t.Errorf("%s: ids %+v", c.name, ev)
		}
	}
}

func TestDecodeInteraction(t *testing.T) {
	ok := `{"id":"31","type":3,"token":"tok","channel_id":"555","member":{"user":{"id":"42"}},"user":{"id":"43"},"data":{"custom_id":"zc:abc:a","component_type":2}}`
	ev, taken, err := DecodeInteraction([]byte(ok))
	if err != nil || !taken || ev.Sender != "42" || ev.Approval.Token != "abc" || ev.Approval.Decision != channel.DecisionAllowOnce ||
		ev.Approval.AckID != "31:tok" || ev.EventID != "31" {
		t.Fatalf("%v %v %+v", taken, err, ev)
	}
	for _, bad := range []string{
		strings.Replace(ok, `"type":3`, `"type":2`, 1),                                  // a slash command
		strings.Replace(ok, "zc:abc:a", "zc:abc:x", 1),                                  // unknown action
		strings.Replace(ok, "zc:abc:a", "other:abc:a", 1),                               // another app's button
		strings.Replace(ok, `"id":"31"`, `"id":"3/1"`, 1),                               // not a snowflake
		strings.Replace(ok, `"token":"tok"`, `"token":""`, 1),                           // no token to answer with
		strings.Replace(ok, `"member":{"user":{"id":"42"}},"user":{"id":"43"},`, ``, 1), // nobody pressed
	} {
		if _, taken, _ := DecodeInteraction([]byte(bad)); taken {
			t.Errorf("taken: %s", bad)
		}
	}
}

// A prompt's text cannot restyle itself: every markdown and mention character is escaped, and a long one is
// cut to fit one message.
func TestPromptTextEscapes(t *testing.T) {
	got := promptText("[safe](http://evil) ||hidden|| ```x``` <@&1> @everyone # h")
	for _, raw := range []string{"[", "](", "||", "```", "<@", "@everyone", "# "} {
		if strings.Contains(strings.ReplaceAll(got, "\\"+raw[:1], ""), raw) {
			t.Errorf("%q survives in %q", raw, got)
		}
	}
	long := promptText(strings.Repeat("*", 5000))
	if n := utf8.RuneCountInString(long); n > MaxMessageRunes || !strings.HasSuffix(long, "…") || strings.HasSuffix(long, "\\…") {
		t.Fatalf("long prompt: %d runes", n)
	}
}

// A bucket REST said is exhausted refuses the route locally until its reset, with how long to wait.
func TestLimiterRemembersExhaustedBucket(t *testing.T) {
	var l limiter
	now := time.Unix(1000, 0)
	l.note("messages:1", http.Header{"X-Ratelimit-Remaining": {"0"}, "X-Ratelimit-Reset-After": {"2.5"}}, now)
	l.note("messages:2", http.Header{"X-Ratelimit-Remaining": {"3"}, "X-Ratelimit-Reset-After": {"2.5"}}, now)
	if d := l.wait("messages:1", now.Add(time.Second)); d != 1500*time.Millisecond {
		t.Fatalf("wait %v", d)
	}
	if d := l.wait("messages:2", now); d != 0 {
		t.Fatalf("a bucket with room waits %v", d)
	}
	if d := l.wait("messages:1", now.Add(3*time.Second)); d != 0 {
		t.Fatalf("after the reset %v", d)
	}
	if d := seconds("1e300"); d != maxRetryAfter {
		t.Fatalf("a huge retry is clamped: %v", d)
	}
}

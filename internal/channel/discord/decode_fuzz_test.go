package discord

import (
	"testing"

	"github.com/zeroclaw-go/zeroclaw/internal/channel"
)

// FuzzDiscordDecode: any bytes decode as a MESSAGE_CREATE or an INTERACTION_CREATE without panicking; a taken
// event has a snowflake id (what ends up in REST paths), a kind, text or a known decision with a token.
func FuzzDiscordDecode(f *testing.F) {
	f.Add([]byte(msg("")))
	f.Add([]byte(msg(`,"guild_id":"77","mentions":[{"id":"` + bot + `"}]`)))
	f.Add([]byte(`{"id":"31","type":3,"token":"tok","channel_id":"555","user":{"id":"42"},"data":{"custom_id":"zc:abc:d","component_type":2}}`))
	f.Add([]byte(`{"id":"31","type":3,"token":"t","channel_id":"5","member":null,"data":{"custom_id":"zc::"}}`))
	f.Add([]byte(`[]`))
	f.Add([]byte(`{"author":{"id":1}}`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		if ev, ok, err := DecodeMessage(raw, Filter{BotID: bot, MentionOnly: true}); err == nil && ok {
			if ev.Kind != channel.KindMessage || !snowflake(ev.EventID) || !snowflake(ev.ReplyTarget) || !snowflake(ev.Sender) || ev.Text == "" {
				t.Fatalf("message %+v", ev)
			}
		}
		if ev, ok, err := DecodeInteraction(raw); err == nil && ok {
			if ev.Kind != channel.KindApproval || !snowflake(ev.EventID) || ev.Approval == nil || ev.Approval.Token == "" ||
				ev.Approval.Decision != channel.DecisionAllowOnce && ev.Approval.Decision != channel.DecisionRejectOnce {
				t.Fatalf("approval %+v", ev)
			}
		}
	})
}

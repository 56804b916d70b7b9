package slack_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/zeroclaw-go/zeroclaw/internal/channel/chantest"

	"github.com/zeroclaw-go/zeroclaw/internal/channel/slack/slackfake"
)

// BenchmarkInboundToFirstOutbound is a Slack message's way through the daemon's delivery core (the envelope
// over the WebSocket, durable record in sessions.db, the ack, turn, outbox record, chat.postMessage) until the
// fake has the reply, with an instant turn. BenchmarkFakeRoundTrip is one bare chat.postMessage: the floor.
func BenchmarkInboundToFirstOutbound(b *testing.B) {
	fake := slackfake.Start(botToken, appToken)
	defer fake.Close()
	_, stop := run(b, slackConfig(fake), &chantest.Turner{}, b.TempDir())
	defer stop()
	for !fake.Connected() {
		time.Sleep(time.Millisecond)
	}
	b.ResetTimer()
	for i := range b.N {
		fake.SendText(dm, owner, "ping", "")
		for len(fake.Sent()) < i+1 {
			time.Sleep(50 * time.Microsecond)
		}
	}
}

func BenchmarkFakeRoundTrip(b *testing.B) {
	fake := slackfake.Start(botToken, appToken)
	defer fake.Close()
	for range b.N {
		req, _ := http.NewRequest(http.MethodPost, fake.URL()+"/chat.postMessage", strings.NewReader(`{"channel":"D1","text":"pong"}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+botToken)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		resp.Body.Close()
	}
}

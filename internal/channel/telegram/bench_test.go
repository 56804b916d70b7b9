package telegram_test

import (
	"bytes"
	"net/http"
	"testing"
	"time"

	"github.com/zeroclaw-go/zeroclaw/internal/channel/chantest"
	"github.com/zeroclaw-go/zeroclaw/internal/channel/telegram/tgfake"
)

// BenchmarkInboundToFirstOutbound is a Telegram message's way through the daemon's delivery core (offset,
// durable record in sessions.db, turn, outbox record, sendMessage) until the fake Bot API has the reply,
// with an instant turn. BenchmarkFakeRoundTrip beside it is one bare sendMessage to the same fake: the floor.
func BenchmarkInboundToFirstOutbound(b *testing.B) {
	fake := tgfake.Start(token)
	defer fake.Close()
	_, stop := run(b, fake, &chantest.Turner{}, b.TempDir())
	defer stop()
	b.ResetTimer()
	for i := range b.N {
		fake.SendText(42, "owner", "ping")
		for len(fake.Sent()) < i+1 {
			time.Sleep(50 * time.Microsecond)
		}
	}
}

func BenchmarkFakeRoundTrip(b *testing.B) {
	fake := tgfake.Start(token)
	defer fake.Close()
	body := []byte(`{"chat_id":42,"text":"pong"}`)
	for range b.N {
		resp, err := http.Post(fake.URL()+"/bot"+token+"/sendMessage", "application/json", bytes.NewReader(body))
		if err != nil {
			b.Fatal(err)
		}
		resp.Body.Close()
	}
}

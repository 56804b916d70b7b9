package matrix_test

import (
	"bytes"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/zeroclaw-go/zeroclaw/internal/channel/chantest"
)

// BenchmarkInboundToFirstOutbound is a Matrix message's way through the daemon's delivery core (/sync, durable
// record in sessions.db, the token written, turn, outbox record, PUT send) until the fake homeserver has the
// reply, with an instant turn. BenchmarkFakeRoundTrip beside it is one bare PUT send to the same fake: the floor.
func BenchmarkInboundToFirstOutbound(b *testing.B) {
	w := newWorld(b)
	_, stop := run(b, w, w.cfg(), &chantest.Turner{}, b.TempDir())
	defer stop()
	synced(b, w, 0)
	b.ResetTimer()
	for i := range b.N {
		w.fake.Say(w.room, w.owner, "ping")
		for len(w.fake.Sent()) < i+1 {
			time.Sleep(50 * time.Microsecond)
		}
	}
}

func BenchmarkFakeRoundTrip(b *testing.B) {
	w := newWorld(b)
	body := []byte(`{"msgtype":"m.text","body":"pong"}`)
	for i := range b.N {
		req, _ := http.NewRequest(http.MethodPut, w.fake.URL()+"/_matrix/client/v3/rooms/"+w.room+"/send/m.room.message/t"+strconv.Itoa(i), bytes.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+w.token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		resp.Body.Close()
	}
}

package matrix_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/zeroclaw-go/zeroclaw/internal/channel"
	"github.com/zeroclaw-go/zeroclaw/internal/channel/chantest"
	"github.com/zeroclaw-go/zeroclaw/internal/channel/matrix"
	"github.com/zeroclaw-go/zeroclaw/internal/config"
)

// Security-matrix row (Matrix): who may talk is the full user id. A user of another homeserver with the owner's
// localpart, and one whose display name or message claims to be the owner, are strangers: not answered, not
// recorded.
func TestMatrixSameLocalpartOnAnotherServerIsAStranger(t *testing.T) {
	w := newWorld(t)
	impostor := "@owner:evil.example"
	tr := &chantest.Turner{}
	core, _ := run(t, w, w.cfg(), tr, t.TempDir())
	synced(t, w, 0)
	w.fake.Say(w.room, impostor, "I am @owner:fake.local, run this")
	w.fake.SayContent(w.room, impostor, map[string]any{"msgtype": "m.text", "body": "hello", "displayname": "owner"})
	w.fake.Say(w.room, w.owner, "the real one")
	chantest.WaitFor(t, "the owner's answer", func() bool { return len(w.fake.Sent()) == 1 })
	if s := w.fake.Sent()[0]; s.Body != "echo: the real one" {
		t.Fatalf("sent %+v", s)
	}
	chantest.WaitFor(t, "the impostor counted", func() bool { return core.Status(context.Background())[0].Ignored == 2 })
	if st := core.Status(context.Background())[0]; st.Counts["event:answered"] != 1 {
		t.Fatalf("counts %v: the impostor's messages were recorded", st.Counts)
	}
}

// Security-matrix row (Matrix): what a hostile homeserver can make the daemon hold. An endless /sync answer is
// cut at 16 MiB and is an error (the token does not move); a non-JSON answer and a sync without next_batch are
// errors, not panics, and nothing is delivered.
func TestMatrixHostileHomeserverAnswers(t *testing.T) {
	for name, h := range map[string]http.HandlerFunc{
		"endless": func(w http.ResponseWriter, r *http.Request) {
			if strings.HasSuffix(r.URL.Path, "/whoami") {
				_, _ = w.Write([]byte(`{"user_id":"@bot:x"}`))
				return
			}
			_, _ = w.Write([]byte(`{"next_batch":"s1","rooms":{"join":{"!r:x":{"timeline":{"events":[{"content":{"body":"`))
			chunk := []byte(strings.Repeat("A", 1<<16))
			for range 300 { // 19 MiB
				if _, err := w.Write(chunk); err != nil {
					return
				}
			}
		},
		"not json": func(w http.ResponseWriter, r *http.Request) {
			if strings.HasSuffix(r.URL.Path, "/whoami") {
				_, _ = w.Write([]byte(`{"user_id":"@bot:x"}`))
				return
			}
			_, _ = w.Write([]byte(`<html>proxy error</html>`))
		},
		"no next_batch": func(w http.ResponseWriter, r *http.Request) {
			if strings.HasSuffix(r.URL.Path, "/whoami") {
				_, _ = w.Write([]byte(`{"user_id":"@bot:x"}`))
				return
			}
			_, _ = w.Write([]byte(`{"rooms":{"join":{"!r:x":{"timeline":{"events":[{"type":"m.room.message","event_id":"$e","sender":"@a:x","content":{"msgtype":"m.text","body":"hi"}}]}}}}}`))
		},
	} {
		t.Run(name, func(t *testing.T) {
			srv := httptest.NewServer(h)
			defer srv.Close()
			dir := t.TempDir()
			a, err := matrix.New(channel.ID{Type: "matrix", Alias: "x"}, config.MatrixConfig{Homeserver: srv.URL, AccessToken: "t"},
				matrix.Options{Dir: dir, PollTimeout: time.Second})
			if err != nil {
				t.Fatal(err)
			}
			d := &chantest.Deliverer{}
			err = a.Run(context.Background(), d)
			if err == nil || len(d.IDs()) != 0 || a.SyncToken() != "" {
				t.Fatalf("run: %v, delivered %v, token %q", err, d.IDs(), a.SyncToken())
			}
			if name == "endless" && !strings.Contains(err.Error(), "larger than") {
				t.Fatalf("endless: %v", err)
			}
		})
	}
}

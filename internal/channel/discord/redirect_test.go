package discord_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/zeroclaw-go/zeroclaw/internal/channel"
	"github.com/zeroclaw-go/zeroclaw/internal/channel/discord"
	"github.com/zeroclaw-go/zeroclaw/internal/config"
)

// A REST answer redirecting to another origin (another port of the same host, which Go's client would send the
// Authorization header to) is refused by the adapter the registry builds (Registry.New makes its client
// SameOrigin): the bot token never reaches that origin.
func TestDiscordRedirectToAnotherOriginKeepsTheToken(t *testing.T) {
	const tok = "Bot-token-never-elsewhere.abc.def"
	var mu sync.Mutex
	var seen []string
	catch := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.Header.Get("Authorization"))
		mu.Unlock()
		_, _ = io.WriteString(w, `{"id":"1234567890123","channel_id":"1234567890124"}`)
	}))
	defer catch.Close()
	hostile := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, catch.URL+r.URL.Path, http.StatusTemporaryRedirect)
	}))
	defer hostile.Close()
	for _, hc := range []*http.Client{nil, {}} {
		reg := &channel.Registry{}
		reg.Register(discord.Type())
		a, err := reg.New(channel.Instance{ID: channel.ID{Type: "discord", Alias: "default"},
			Settings: config.DiscordConfig{BotToken: tok, APIBaseURL: hostile.URL}}, channel.Deps{HTTP: hc})
		if err != nil {
			t.Fatal(err)
		}
		_, err = a.Send(context.Background(), channel.Outbound{ReplyTarget: "1234567890124", Text: "hi", Key: "k1"})
		if err == nil || strings.Contains(err.Error(), tok) {
			t.Fatalf("send through a cross-origin redirect: %v", err)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if len(seen) != 0 {
		t.Fatalf("the other origin received %d requests (Authorization %q)", len(seen), seen)
	}
}

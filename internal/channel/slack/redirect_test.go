package slack_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/zeroclaw-go/zeroclaw/internal/channel"
	"github.com/zeroclaw-go/zeroclaw/internal/channel/slack"
	"github.com/zeroclaw-go/zeroclaw/internal/config"
)

// A hostile (or misconfigured) Web API server answers with a 307 to a listener on another port of the same
// host: net/http's default policy would resend the bot token there (and from https to http). The adapter
// the registry builds refuses the redirect (Registry.New makes its client SameOrigin); the listener sees no
// request.
func TestSlackRedirectToAnotherOriginKeepsTheToken(t *testing.T) {
	var mu sync.Mutex
	var seen []string
	catch := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.Header.Get("Authorization"))
		mu.Unlock()
		_, _ = io.WriteString(w, `{"ok":true,"ts":"1.2","channel":"C1"}`)
	}))
	defer catch.Close()
	hostile := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, catch.URL+r.URL.Path, http.StatusTemporaryRedirect)
	}))
	defer hostile.Close()
	for _, hc := range []*http.Client{nil, {}} {
		reg := &channel.Registry{}
		reg.Register(slack.Type())
		a, err := reg.New(channel.Instance{ID: channel.ID{Type: "slack", Alias: "default"},
			Settings: config.SlackConfig{BotToken: botToken, AppToken: appToken, APIBaseURL: hostile.URL + "/api"}}, channel.Deps{HTTP: hc})
		if err != nil {
			t.Fatal(err)
		}
		_, err = a.Send(context.Background(), channel.Outbound{ReplyTarget: "C1", Text: "hi"})
		if err == nil || strings.Contains(err.Error(), botToken) {
			t.Fatalf("send through a cross-origin redirect: %v", err)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if len(seen) != 0 {
		t.Fatalf("the other origin received %d requests (Authorization %q)", len(seen), seen)
	}
}

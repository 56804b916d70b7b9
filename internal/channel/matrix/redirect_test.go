package matrix_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zeroclaw-go/zeroclaw/internal/channel"
	"github.com/zeroclaw-go/zeroclaw/internal/channel/chantest"
	"github.com/zeroclaw-go/zeroclaw/internal/channel/matrix"
	"github.com/zeroclaw-go/zeroclaw/internal/config"
)

// A homeserver that answers with a 307 to a listener on another port of the same host would, under
// net/http's default policy, have the access token resent there (and a login's password replayed in the
// body). The adapter the registry builds (Registry.New makes its client SameOrigin) refuses the redirect: the
// listener sees neither.
func TestMatrixRedirectToAnotherOriginKeepsTheSecrets(t *testing.T) {
	var mu sync.Mutex
	var seen []string
	catch := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(io.LimitReader(r.Body, 1<<16))
		mu.Lock()
		seen = append(seen, r.Header.Get("Authorization")+" "+string(b))
		mu.Unlock()
		_, _ = io.WriteString(w, `{"event_id":"$e:x","access_token":"syt_x","device_id":"D","user_id":"@bot:x"}`)
	}))
	defer catch.Close()
	hostile := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, catch.URL+r.URL.RequestURI(), http.StatusTemporaryRedirect)
	}))
	defer hostile.Close()
	const token, password = "syt_secret_token", "bot-password-1"
	id := channel.ID{Type: "matrix", Alias: "default"}

	reg := &channel.Registry{}
	reg.Register(matrix.Type())
	a, err := reg.New(channel.Instance{ID: id, Settings: config.MatrixConfig{Enabled: true, Homeserver: hostile.URL, AccessToken: token,
		ApprovalTimeoutSecs: 60}}, channel.Deps{HTTP: &http.Client{}, DataDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Send(context.Background(), channel.Outbound{ReplyTarget: "!room:x", Text: "hi", Key: "k1"}); err == nil ||
		strings.Contains(err.Error(), token) {
		t.Fatalf("send through a cross-origin redirect: %v", err)
	}

	b, err := reg.New(channel.Instance{ID: id, Settings: config.MatrixConfig{Enabled: true, Homeserver: hostile.URL, UserID: "@bot:x",
		Password: password, ApprovalTimeoutSecs: 60}}, channel.Deps{DataDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	if err := b.Run(ctx, &chantest.Deliverer{}); err != nil && strings.Contains(err.Error(), password) {
		t.Fatalf("login error names the password: %v", err)
	}

	mu.Lock()
	defer mu.Unlock()
	if len(seen) != 0 {
		t.Fatalf("the other origin received %d requests: %q", len(seen), seen)
	}
}

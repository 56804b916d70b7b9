package rpctest

import (
	"bytes"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/zeroclaw-go/zeroclaw/internal/api"
)

// lockedBuffer collects the daemon's log lines from its goroutines.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// A provider error body with the configured key straddling the 1,024-byte cut: neither turn_complete.error nor
// the daemon's log (at debug level) may keep any part of the key.
func TestProviderErrorKeyStraddlingCut(t *testing.T) {
	const key = "zc0Q7fLm2Xv9Rt4Kp8Wz3Nd6Hs1Bc5Jy0GeTuVw48"
	body := strings.Repeat("x", 1024-28) + key + " is not a valid key"
	srv := newLLM(t, func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusUnauthorized)
		fmt.Fprint(w, body)
	})
	var logs lockedBuffer
	log := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	prov := fmt.Sprintf("[providers.models.openai.fake]\nuri = %q\nmodel = \"m\"\napi_key = %q\n", srv.URL, key)
	d := Start(t, WithConfig(agentConfig(prov, "openai.fake", "readonly", "")), WithLogger(log))
	c := dialRC(t, d, "")
	s := c.newSession(api.SessionNewParams{AgentAlias: "a"})
	tr := c.prompt(s.SessionID, "hi", hooks{})
	if tr.err != nil {
		t.Fatalf("prompt: %s", tr.err)
	}
	last := tr.events[len(tr.events)-1]
	if last.Type != api.UpdateTurnComplete || !strings.Contains(last.Error, "HTTP 401") {
		t.Fatalf("turn_complete = %+v, want the provider's 401", last)
	}
	if err := d.Stop(); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(logs.String(), "turn failed") {
		t.Fatalf("the failure was not logged; log:\n%s", logs.String())
	}
	if part := keyPart(last.Error, key, 6); part != "" {
		t.Errorf("turn_complete.error keeps %q of the key: ...%s", part, last.Error[max(0, len(last.Error)-80):])
	}
	if part := keyPart(logs.String(), key, 6); part != "" {
		t.Errorf("the daemon log keeps %q of the key", part)
	}
}

// keyPart returns the first run of n bytes of key found in s, or "".
func keyPart(s, key string, n int) string {
	for i := 0; i+n <= len(key); i++ {
		if strings.Contains(s, key[i:i+n]) {
			return key[i : i+n]
		}
	}
	return ""
}

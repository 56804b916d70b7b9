package rpctest

import (
	"bytes"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
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
	t.Parallel()
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

// A provider that echoes fragments of the configured key (its first 10 bytes, an inner run of 35 of its 38, its
// last 8, and a run that the 1,024-byte cut splits), in an HTTP error body and in an in-band stream error: no
// run of 8 bytes of the key reaches turn_complete.error, the daemon's log or runtime-trace.jsonl.
func TestProviderErrorKeyFragments(t *testing.T) {
	t.Parallel()
	const key = "Zk4Qm8Rt2Wx6Yb1Nc5Vd9Lf3Hg7Js0Pa2Ue6Io"
	if len(key) != 38 {
		t.Fatalf("key of %d bytes", len(key))
	}
	head := "invalid key " + key[:10] + "…, did you mean " + key[2:37] + "? (ends in " + key[len(key)-8:] + ") "
	body := head + strings.Repeat("x", 1024-len(head)-12) + key[5:30] + " rejected"
	srv := newLLM(t,
		func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(http.StatusUnauthorized)
			fmt.Fprint(w, body)
		},
		stream(ctSSE, openAISSE(`{"error":{"message":"quota exceeded for key `+key[1:11]+`… and `+key[12:36]+`"}}`)))
	var logs lockedBuffer
	log := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	prov := fmt.Sprintf("[providers.models.openai.fake]\nuri = %q\nmodel = \"m\"\napi_key = %q\n", srv.URL, key)
	d := Start(t, WithConfig(agentConfig(prov, "openai.fake", "readonly", "\n[observability]\nlog_persistence = \"full\"\n")),
		WithLogger(log))
	c := dialRC(t, d, "")
	s := c.newSession(api.SessionNewParams{AgentAlias: "a"})
	var errs []string
	for _, want := range []string{"HTTP 401", "quota exceeded"} {
		tr := c.prompt(s.SessionID, "hi", hooks{})
		if tr.err != nil {
			t.Fatalf("prompt: %s", tr.err)
		}
		last := tr.events[len(tr.events)-1]
		if last.Type != api.UpdateTurnComplete || !strings.Contains(last.Error, want) {
			t.Fatalf("turn_complete = %+v, want an error with %q", last, want)
		}
		errs = append(errs, last.Error)
	}
	if err := d.Stop(); err != nil {
		t.Fatal(err)
	}
	trace, err := os.ReadFile(filepath.Join(d.ConfigDir, "data", "state", "runtime-trace.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(trace), "quota exceeded") || strings.Count(logs.String(), "turn failed") != 2 {
		t.Fatalf("the failures were not recorded; log:\n%s\ntrace:\n%s", logs.String(), trace)
	}
	for name, text := range map[string]string{"turn_complete.error": strings.Join(errs, "\n"), "the daemon log": logs.String(),
		"runtime-trace.jsonl": string(trace)} {
		if part := keyPart(text, key, 8); part != "" {
			t.Errorf("%s keeps %q of the key", name, part)
		}
	}
}

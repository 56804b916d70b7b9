package e2e

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/zeroclaw-go/zeroclaw/internal/channel/telegram/tgfake"
	"github.com/zeroclaw-go/zeroclaw/internal/heartbeat"
)

// The secret the owner pastes into the chat (a key shape the scrubber knows), placed so that cutting the
// message at heartbeat.SessionContextChars would leave its start behind if the cut came before the scrub.
const hbSecret = "sk-e2eHeartbeatSecret0123456789"

// heartbeatPrompt runs the real binary with a Telegram chat and a heartbeat targeting it (load_session_context
// as given): the owner talks to the agent first, then HEARTBEAT.md gets a task, and the first heartbeat request
// the loopback model receives is returned.
func heartbeatPrompt(t *testing.T, loadContext bool) string {
	exe, err := crashBinary() // scales a heartbeat minute (ZEROCLAW_TEST_HEARTBEAT_MINUTE)
	if err != nil {
		t.Fatal(err)
	}
	fake := tgfake.Start(tgToken)
	t.Cleanup(fake.Close)
	var mu sync.Mutex
	var hbBodies []string
	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		body := string(b)
		w.Header().Set("Content-Type", "text/event-stream")
		switch {
		case strings.Contains(body, `"role":"tool"`):
			fmt.Fprint(w, sseChunk("disk is fine")+"data: [DONE]\n\n")
		case strings.Contains(body, "check the disk"):
			mu.Lock()
			hbBodies = append(hbBodies, body)
			mu.Unlock()
			fmt.Fprint(w, sseCall(heartbeat.CompleteTool, `{"summary":"disk checked"}`))
		default: // the chat turn
			fmt.Fprint(w, sseChunk("noted, the backup runs at nine")+"data: [DONE]\n\n")
		}
	}))
	t.Cleanup(backend.Close)

	cfg := fmt.Sprintf(heartbeatConfig, backend.URL, true) +
		fmt.Sprintf("target = \"telegram\"\nto = \"42\"\nload_session_context = %t\n", loadContext) + telegramBlock(fake)
	h, root := homeWithConfig(t, cfg)
	ws := filepath.Join(root, "agents", "default", "workspace")
	if err := os.MkdirAll(ws, 0o700); err != nil {
		t.Fatal(err)
	}
	hbFile := filepath.Join(ws, heartbeat.FileName)
	if err := os.WriteFile(hbFile, []byte("# no tasks yet\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	environ := env(h, "ZEROCLAW_TEST_HEARTBEAT_MINUTE=1s")
	d := startBinary(t, exe, environ, "daemon")
	waitSocket(t, d, agentSock(h))

	fake.SendText(42, "owner", "remember the backup at nine, the bot token is "+tgToken)
	waitUntil(t, "the first answer in the chat", 30*time.Second, func() bool { return len(fake.Sent()) >= 1 })
	// The secret starts 5 bytes before the cut: cut first, "sk-e2" would be left.
	long := strings.Repeat("x", heartbeat.SessionContextChars-6) + " " + hbSecret + " the end"
	fake.SendText(42, "owner", long)
	waitUntil(t, "the second answer in the chat", 30*time.Second, func() bool { return len(fake.Sent()) >= 2 })

	if err := os.WriteFile(hbFile, []byte("# tasks\n- check the disk\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, "a heartbeat request at the model", 60*time.Second, func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(hbBodies) > 0
	})
	signal(t, d, syscall.SIGTERM)
	d.wait(t, 20*time.Second)
	mu.Lock()
	defer mu.Unlock()
	var req struct {
		Messages []struct{ Role, Content string } `json:"messages"`
	}
	if err := json.Unmarshal([]byte(hbBodies[0]), &req); err != nil {
		t.Fatalf("heartbeat request: %v\n%s", err, hbBodies[0])
	}
	var users []string
	for _, m := range req.Messages {
		if m.Role == "user" {
			users = append(users, m.Content)
		}
	}
	if len(users) != 1 {
		t.Fatalf("heartbeat request has %d user messages, want its one prompt:\n%s", len(users), hbBodies[0])
	}
	return users[0]
}

// load_session_context = true: the heartbeat's request carries the chat's recent history (both sides, the
// newest session of telegram chat 42), with the pasted secret and the configured bot token scrubbed before the
// 500-byte cut (the secret straddles it), so no fragment of either survives. With false the request has none of it.
func TestHeartbeatSessionContextE2E(t *testing.T) {
	t.Parallel()
	t.Run("on", func(t *testing.T) {
		t.Parallel()
		body := heartbeatPrompt(t, true)
		for _, want := range []string{"[Recent conversation history", "User: ", "remember the backup at nine, the bot token is [redacted]\n",
			"You: noted, the backup runs at nine", "xxx [reda...\n",
			"[Heartbeat Task | medium] check the disk"} {
			if !strings.Contains(body, want) {
				t.Errorf("heartbeat request lacks %q:\n%s", want, body)
			}
		}
		for _, leak := range []string{hbSecret[:5], "e2e-token", "777001"} {
			if strings.Contains(body, leak) {
				t.Errorf("heartbeat request carries %q from the chat:\n%s", leak, body)
			}
		}
	})
	t.Run("off", func(t *testing.T) {
		t.Parallel()
		body := heartbeatPrompt(t, false)
		for _, absent := range []string{"Recent conversation history", "remember the backup", "noted, the backup"} {
			if strings.Contains(body, absent) {
				t.Errorf("with load_session_context = false the heartbeat request has %q:\n%s", absent, body)
			}
		}
		if !strings.Contains(body, "check the disk") {
			t.Fatalf("not the heartbeat's request: %s", body)
		}
	})
}

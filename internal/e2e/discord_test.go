package e2e

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/zeroclaw-go/zeroclaw/internal/channel/discord/discordfake"
)

const dcToken = "MTAx.e2e-bot.token_xyz"

// The real binary answers on Discord: a DM starts a turn whose shell call is put to the chat with buttons, a
// stranger's press is not answered, the owner's runs it, the answer arrives once as a reply with a nonce, and
// the token is never logged.
func TestDiscordTurnWithApprovalE2E(t *testing.T) {
	fake := discordfake.Start(dcToken)
	fake.HeartbeatMs = 200
	defer fake.Close()
	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		if !strings.Contains(string(body), `"role":"tool"`) {
			fmt.Fprint(w, sseToolCall("echo approved > marker"))
			return
		}
		fmt.Fprint(w, sseChunk("marker written")+"data: [DONE]\n\n")
	}))
	defer backend.Close()
	h, root := homeWithOpenAI(t, "fake", backend.URL)
	appendFile(t, filepath.Join(root, "config.toml"), fmt.Sprintf(`
[channels.discord.default]
enabled = true
bot_token = %q
api_base_url = %q

[peer_groups.me]
channel = "discord"
agents = ["default"]
external_peers = ["4242"]

[reliability]
channel_initial_backoff_secs = 1
channel_max_backoff_secs = 1
`, dcToken, fake.URL()))
	d := start(t, env(h), "daemon")
	waitSocket(t, d, agentSock(h))
	waitUntil(t, "the gateway session", 20*time.Second, fake.Caught)

	in := fake.SendText("4242", "owner", "5555", "", "write the marker")
	waitUntil(t, "the approval prompt", 20*time.Second, func() bool { return len(fake.Sent()) == 1 })
	prompt := fake.Sent()[0]
	if len(prompt.Buttons) != 2 || !strings.Contains(prompt.Content, "echo approved ") {
		t.Fatalf("prompt %+v", prompt)
	}
	fake.Press("9999", "5555", prompt.Buttons[0].CustomID)
	fake.Press("4242", "5555", prompt.Buttons[0].CustomID)
	waitUntil(t, "the answer", 20*time.Second, func() bool { return len(fake.Sent()) == 2 })
	waitUntil(t, "the owner's ack", 10*time.Second, func() bool { return len(fake.Callbacks()) >= 1 })
	if cb := fake.Callbacks(); len(cb) != 1 || cb[0].Content != "Approved." {
		t.Fatalf("callbacks %+v, want only the owner's Approved.", cb)
	}
	if got := fake.Sent()[1]; got.Content != "marker written" || got.ReplyTo != in || got.Nonce == "" {
		t.Fatalf("answer %+v", got)
	}
	if _, err := os.Stat(filepath.Join(agentWorkspace(h), "marker")); err != nil {
		t.Fatalf("the approved command did not run: %v", err)
	}
	if strings.Contains(d.stderr.String(), dcToken) {
		t.Fatal("the bot token is in the daemon's log")
	}
}

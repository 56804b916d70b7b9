package e2e

import (
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/zeroclaw-go/zeroclaw/internal/channel/chantest"

	"github.com/zeroclaw-go/zeroclaw/internal/channel/discord/discordfake"
)

const dcToken = "MTAx.e2e-bot.token_xyz"

// discordBlock binds the default agent to a Discord bot at fake, owner 4242 allowed.
func discordBlock(fake *discordfake.Server) string {
	return fmt.Sprintf(`
[channels.discord.default]
enabled = true
bot_token = %q
api_base_url = %q
`, dcToken, fake.URL()) + chantest.OwnerBlock("discord", "4242")
}

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
	appendFile(t, filepath.Join(root, "config.toml"), discordBlock(fake))
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

// kill -9 of the real binary at random points while the fake sends, redelivers, drops the connection, asks
// for RECONNECT and injects 429/5xx: the restarted daemon resumes its gateway session (kept on disk), so what
// was sent while it was down arrives; every message is answered exactly once, counted against the fake's
// record (a reply cut between its send and its record is resent with the same nonce, which Discord dedupes).
func TestDiscordKill9RoundsAnswerExactlyOnce(t *testing.T) {
	rounds := 100
	if testing.Short() {
		rounds = 10
	}
	fake := discordfake.Start(dcToken)
	fake.HeartbeatMs = 200
	defer fake.Close()
	h, root := echoHome(t)
	appendFile(t, filepath.Join(root, "config.toml"), discordBlock(fake))
	state := filepath.Join(root, "data", "channels", "discord.default", "gateway.json")
	rng := rand.New(rand.NewPCG(3, 4))
	msgs := map[string]bool{}
	n := 0
	for round := range rounds {
		d := start(t, env(h), "daemon")
		if round == 0 { // the session exists (and is on disk) before anything is sent to it
			waitUntil(t, "the gateway state", 20*time.Second, func() bool { _, err := os.Stat(state); return err == nil })
		}
		for range 1 + rng.IntN(2) {
			n++
			msgs[fake.SendText("4242", "owner", "5555", "", fmt.Sprintf("msg-%d-%d", round, n))] = true
		}
		switch rng.IntN(6) {
		case 0:
			fake.Inject("messages", discordfake.Fault{Status: 429, RetryAfter: 0.3})
		case 1:
			fake.Inject("messages", discordfake.Fault{Status: 502})
		case 2:
			fake.Drop()
		case 3:
			fake.Redeliver()
		case 4:
			fake.SendOp(7, nil)
		}
		if rng.IntN(4) > 0 {
			waitSocket(t, d, agentSock(h))
		}
		time.Sleep(time.Duration(rng.IntN(300)) * time.Millisecond)
		_ = d.cmd.Process.Signal(syscall.SIGKILL)
		<-d.done
	}
	duringRounds := len(fake.Sent())
	d := start(t, env(h), "daemon")
	waitSocket(t, d, agentSock(h))
	fake.Redeliver()
	answered := func() map[string]int {
		out := map[string]int{}
		for _, m := range fake.Sent() {
			out[m.ReplyTo]++
		}
		return out
	}
	deadline := time.Now().Add(60 * time.Second)
	for len(answered()) < len(msgs) && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	signal(t, d, syscall.SIGTERM)
	d.wait(t, 30*time.Second)
	counts := chantest.Drained(t, filepath.Join(root, "data", "sessions", "sessions.db"), "discord.default")
	chantest.AnsweredOnce(t, msgs, answered())
	t.Logf("%d rounds, %d messages, %d replies during the rounds, %d resumes, counts %v", rounds, len(msgs), duringRounds, fake.Resumes(), counts)
}

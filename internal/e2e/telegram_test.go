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
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/zeroclaw-go/zeroclaw/internal/channel/chantest"

	"github.com/zeroclaw-go/zeroclaw/internal/channel/telegram/tgfake"
)

const tgToken = "777001:e2e-token"

// telegramBlock binds the default agent to a Telegram bot at fake, owner user 42 allowed.
func telegramBlock(fake *tgfake.Server) string {
	return fmt.Sprintf(`
[channels.telegram.default]
enabled = true
bot_token = %q
api_base_url = %q
poll_timeout_secs = 1
`, tgToken, fake.URL()) + chantest.OwnerBlock("telegram", "42")
}

func waitUntil(t *testing.T, what string, within time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(within)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// The real binary answers on Telegram: a message starts a turn whose shell call is put to the chat with
// buttons, a stranger's press is refused, the owner's runs it, the answer arrives once, and the session is an
// ordinary one (session/list shows it with its channel_id; health shows the channel).
func TestTelegramTurnWithApprovalE2E(t *testing.T) {
	fake := tgfake.Start(tgToken)
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
	appendFile(t, filepath.Join(root, "config.toml"), telegramBlock(fake))
	d := start(t, env(h), "daemon")
	waitSocket(t, d, agentSock(h))

	fake.SendText(42, "owner", "write the marker")
	waitUntil(t, "the approval prompt", 20*time.Second, func() bool { return len(fake.Sent()) == 1 })
	prompt := fake.Sent()[0]
	if len(prompt.Buttons) != 2 || !strings.Contains(prompt.Text, "echo approved > marker") {
		t.Fatalf("prompt %+v", prompt)
	}
	// A stranger's press is ignored (not even acknowledged); the owner's, polled after it, is the one that
	// approves: had the stranger's approved, the owner's press would be answered as a stale one.
	fake.Press(99, 42, prompt.Buttons[0].Data)
	fake.Press(42, 42, prompt.Buttons[0].Data)
	waitUntil(t, "the answer", 20*time.Second, func() bool { return len(fake.Sent()) == 2 })
	waitUntil(t, "the owner's ack", 10*time.Second, func() bool { return len(fake.Acks()) >= 1 })
	if a := fake.Acks(); len(a) != 1 || a[0] != "Approved." {
		t.Fatalf("acks %q, want only the owner's Approved.", a)
	}
	if got := fake.Sent()[1]; got.Text != "marker written" || got.ChatID != 42 {
		t.Fatalf("answer %+v", got)
	}
	if _, err := os.Stat(filepath.Join(agentWorkspace(h), "marker")); err != nil {
		t.Fatalf("the approved command did not run: %v", err)
	}

	channelSessionListed(t, h, "telegram.default")
	c := dialRPC(t, agentSock(h))
	c.Initialize()
	status := c.Call("status", map[string]any{}, 4)
	chans, _ := status["result"].(map[string]any)["channels"].([]any)
	if len(chans) != 1 || chans[0].(map[string]any)["id"] != "telegram.default" || chans[0].(map[string]any)["state"] != "running" {
		t.Fatalf("status.channels: %v", status["result"])
	}
	if strings.Contains(d.stderr.String(), tgToken) {
		t.Fatal("the bot token is in the daemon's log")
	}
}

// kill -9 of the real binary at random points, many rounds, while the fake Bot API keeps sending, redelivers
// confirmed updates and injects 429/5xx/hangs: every message is answered at most once (counted by the
// message it replies to, against the fake's record), and every message is answered unless the daemon counted
// its reply unconfirmed (cut between the send and its record).
func TestTelegramKill9RoundsAnswerExactlyOnce(t *testing.T) {
	rounds := 100
	if testing.Short() {
		rounds = 10
	}
	fake := tgfake.Start(tgToken)
	defer fake.Close()
	h, root := echoHome(t)
	appendFile(t, filepath.Join(root, "config.toml"), telegramBlock(fake))
	rng := rand.New(rand.NewPCG(1, 2))
	var sent atomic.Int64
	msgs := map[int64]string{}
	for round := range rounds {
		d := start(t, env(h), "daemon")
		for range 1 + rng.IntN(2) {
			id := fake.SendText(42, "owner", fmt.Sprintf("msg-%d-%d", round, sent.Add(1)))
			msgs[id] = ""
		}
		switch rng.IntN(5) {
		case 0:
			fake.Inject("sendMessage", tgfake.Fault{Status: 429, RetryAfter: 1})
		case 1:
			fake.Inject("sendMessage", tgfake.Fault{Status: 502})
		case 2:
			fake.Inject("getUpdates", tgfake.Fault{Status: 500})
		case 3:
			fake.Redeliver()
		}
		if rng.IntN(4) > 0 { // mostly killed once it serves, at a random point of its work; else during startup
			waitSocket(t, d, agentSock(h))
		}
		time.Sleep(time.Duration(rng.IntN(150)) * time.Millisecond)
		_ = d.cmd.Process.Signal(syscall.SIGKILL)
		<-d.done
	}
	duringRounds := len(fake.Sent())
	if duringRounds == 0 {
		t.Fatal("no reply was sent while the rounds ran: the kills never cut the daemon at work")
	}
	// A last, clean run drains what is left.
	d := start(t, env(h), "daemon")
	waitSocket(t, d, agentSock(h))
	fake.Redeliver()
	dbPath := filepath.Join(root, "data", "sessions", "sessions.db")
	answered := func() map[int64]int {
		out := map[int64]int{}
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
	counts := chantest.Drained(t, dbPath, "telegram.default")
	got := answered()
	missing := 0
	for id := range msgs {
		switch got[id] {
		case 0:
			missing++
		case 1:
		default:
			t.Errorf("message %d answered %d times", id, got[id])
		}
	}
	for id := range got {
		if _, ok := msgs[id]; !ok {
			t.Errorf("a reply to %d, which nobody sent", id)
		}
	}
	if missing > counts["out:unconfirmed"] {
		t.Errorf("%d of %d messages unanswered, only %d counted unconfirmed (counts %v)", missing, len(msgs), counts["out:unconfirmed"], counts)
	}
	t.Logf("%d rounds, %d messages, %d replies during the rounds, %d unanswered, counts %v", rounds, len(msgs), duringRounds, missing, counts)
}

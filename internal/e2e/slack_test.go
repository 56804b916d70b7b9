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

	"github.com/zeroclaw-go/zeroclaw/internal/channel/slack/slackfake"
)

const (
	slackBot   = "xoxb-e2e-bot-token"
	slackApp   = "xapp-1-e2e-app-token"
	slackOwner = "U0OWNER1"
	slackDM    = "D0OWNER1"
)

// slackBlock binds the default agent to a Slack app at fake, owner U0OWNER1 allowed.
func slackBlock(fake *slackfake.Server) string {
	return fmt.Sprintf(`
[channels.slack.default]
enabled = true
bot_token = %q
app_token = %q
api_base_url = %q
`, slackBot, slackApp, fake.URL()) + chantest.OwnerBlock("slack", slackOwner)
}

// The real binary answers on Slack: a direct message starts a turn whose shell call is put to the
// conversation's thread with buttons, a stranger's press is refused, the owner's runs it, the answer arrives
// once in the thread, every envelope is acknowledged, and the session is an ordinary one.
func TestSlackTurnWithApprovalE2E(t *testing.T) {
	fake := slackfake.Start(slackBot, slackApp)
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
	appendFile(t, filepath.Join(root, "config.toml"), slackBlock(fake))
	d := start(t, env(h), "daemon")
	waitSocket(t, d, agentSock(h))

	ts := fake.SendText(slackDM, slackOwner, "write the marker", "")
	waitUntil(t, "the approval prompt", 20*time.Second, func() bool { return len(fake.Sent()) == 1 })
	prompt := fake.Sent()[0]
	if len(prompt.Buttons) != 2 || prompt.ThreadTS != ts || !strings.Contains(prompt.Text, "echo approved &gt; marker") {
		t.Fatalf("prompt %+v", prompt)
	}
	// A stranger's press is ignored (no notice); the owner's, sent after it, is the one that approves: had the
	// stranger's approved, the owner's would be answered as a stale one.
	fake.Press("U0STRANGE", slackDM, prompt.TS, prompt.Buttons[0].Value)
	fake.Press(slackOwner, slackDM, prompt.TS, prompt.Buttons[0].Value)
	waitUntil(t, "the answer", 20*time.Second, func() bool { return len(fake.Sent()) == 2 })
	waitUntil(t, "the owner's notice", 10*time.Second, func() bool { return len(fake.Ephemerals()) >= 1 })
	if e := fake.Ephemerals(); len(e) != 1 || e[0].User != slackOwner || e[0].Text != "Approved." {
		t.Fatalf("ephemerals %+v, want only the owner's Approved.", e)
	}
	if got := fake.Sent()[1]; got.Text != "marker written" || got.Channel != slackDM || got.ThreadTS != ts || got.MetadataKey == "" {
		t.Fatalf("answer %+v", got)
	}
	if _, err := os.Stat(filepath.Join(agentWorkspace(h), "marker")); err != nil {
		t.Fatalf("the approved command did not run: %v", err)
	}
	waitUntil(t, "every envelope acknowledged", 10*time.Second, func() bool { return fake.Unacked() == 0 })

	channelSessionListed(t, h, "slack.default")
	if log := d.stderr.String(); strings.Contains(log, slackBot) || strings.Contains(log, slackApp) {
		t.Fatal("a Slack token is in the daemon's log")
	}
}

// kill -9 of the real binary at random points, many rounds, while the fake Slack keeps sending, redelivers
// acknowledged envelopes, asks for refreshes, drops or hangs the socket and injects 429/5xx/hangs: every
// message is answered exactly once (counted by the thread each reply is in, against the fake's record). A
// reply cut between its send and its record is found again by its metadata key (WasSent), so none is
// unconfirmed and none is lost.
func TestSlackKill9RoundsAnswerExactlyOnce(t *testing.T) {
	rounds := 100
	if testing.Short() {
		rounds = 10
	}
	fake := slackfake.Start(slackBot, slackApp)
	defer fake.Close()
	h, root := echoHome(t)
	appendFile(t, filepath.Join(root, "config.toml"), slackBlock(fake))
	rng := rand.New(rand.NewPCG(3, 4))
	msgs := map[string]bool{}
	n := 0
	for round := range rounds {
		d := start(t, env(h), "daemon")
		for range 1 + rng.IntN(2) {
			n++
			msgs[fake.SendText(slackDM, slackOwner, fmt.Sprintf("msg-%d-%d", round, n), "")] = true
		}
		// At most one fault is outstanding (a fault the killed process did not meet is dropped), so a reply at
		// the head of the outbox is not refused more times than its attempts allow (8).
		fake.ClearFaults()
		switch rng.IntN(9) {
		case 0:
			fake.Inject("chat.postMessage", slackfake.Fault{Status: 429, RetryAfter: 1})
		case 1:
			fake.Inject("chat.postMessage", slackfake.Fault{Status: 502})
		case 2:
			fake.Inject("chat.postMessage", slackfake.Fault{Hang: true})
		case 3:
			fake.Inject("apps.connections.open", slackfake.Fault{Status: 500})
		}
		if rng.IntN(4) > 0 { // mostly killed once it serves, at a random point of its work; else during startup
			waitSocket(t, d, agentSock(h))
			switch rng.IntN(4) {
			case 0:
				fake.Redeliver()
			case 1:
				fake.Disconnect("refresh_requested")
			case 2:
				fake.DropSocket()
			}
		}
		time.Sleep(time.Duration(rng.IntN(150)) * time.Millisecond)
		_ = d.cmd.Process.Signal(syscall.SIGKILL)
		<-d.done
		if rng.IntN(8) == 0 {
			fake.HangSocket() // the killed process's socket goes silent instead of closing
		}
	}
	duringRounds := len(fake.Sent())
	if duringRounds == 0 {
		t.Fatal("no reply was sent while the rounds ran: the kills never cut the daemon at work")
	}
	// A last, clean run drains what is left.
	fake.ClearFaults()
	d := start(t, env(h), "daemon")
	waitSocket(t, d, agentSock(h))
	answered := func() map[string]int {
		out := map[string]int{}
		for _, m := range fake.Sent() {
			out[m.ThreadTS]++
		}
		return out
	}
	deadline := time.Now().Add(60 * time.Second)
	for (len(answered()) < len(msgs) || fake.Unacked() > 0) && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	fake.Redeliver() // everything once more: all of it is recognised
	time.Sleep(300 * time.Millisecond)
	signal(t, d, syscall.SIGTERM)
	d.wait(t, 30*time.Second)
	counts := chantest.Drained(t, filepath.Join(root, "data", "sessions", "sessions.db"), "slack.default")
	chantest.AnsweredOnce(t, msgs, answered()) // by the thread each reply is in
	if counts["out:unconfirmed"] != 0 {
		t.Errorf("%d replies unconfirmed although Slack can say whether they were sent (counts %v)", counts["out:unconfirmed"], counts)
	}
	if fake.Unacked() != 0 {
		t.Errorf("%d envelopes unacknowledged after the clean run", fake.Unacked())
	}
	t.Logf("%d rounds, %d messages, %d replies during the rounds, counts %v, %d connections, %d WasSent look-ups", rounds, len(msgs),
		duringRounds, counts, fake.Connections(), fake.Calls("conversations.replies"))
}

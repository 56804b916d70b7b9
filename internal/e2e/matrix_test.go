package e2e

import (
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/zeroclaw-go/zeroclaw/internal/channel/chantest"

	"github.com/zeroclaw-go/zeroclaw/internal/channel/matrix/matrixfake"
)

// matrixWorld is a loopback homeserver with the bot, its owner and a stranger in one room.
type matrixWorld struct {
	fake                       *matrixfake.Server
	bot, owner, stranger, room string
	token                      string
}

func newMatrixWorld(t *testing.T) *matrixWorld {
	fake := matrixfake.Start("fake.local")
	t.Cleanup(fake.Close)
	fake.SetMaxWait(time.Second)
	w := &matrixWorld{fake: fake, bot: fake.AddUser("bot", "pw"), owner: fake.AddUser("owner", "o"), stranger: fake.AddUser("eve", "e")}
	w.room = fake.CreateRoom("room", w.bot, w.owner, w.stranger)
	w.token = fake.Token(w.bot, "E2EDEVICE")
	return w
}

// block binds the default agent to the bot's account, the owner allowed.
func (w *matrixWorld) block() string {
	return fmt.Sprintf(`
[channels.matrix.default]
enabled = true
homeserver = %q
access_token = %q
`, w.fake.URL(), w.token) + chantest.OwnerBlock("matrix", w.owner)
}

var matrixToken = regexp.MustCompile(`yes ([0-9a-f]+)`)

// The real binary answers on Matrix: a message starts a turn whose shell call is put to the room, asking for
// "yes <token>"; a stranger's "yes <token>" is ignored, the owner's runs it; the answer arrives once, in a
// thread from the message it answers; the session is an ordinary one and health shows the channel.
func TestMatrixTurnWithApprovalE2E(t *testing.T) {
	w := newMatrixWorld(t)
	backend := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		rw.Header().Set("Content-Type", "text/event-stream")
		if !strings.Contains(string(body), `"role":"tool"`) {
			fmt.Fprint(rw, sseToolCall("echo approved > marker"))
			return
		}
		fmt.Fprint(rw, sseChunk("marker written")+"data: [DONE]\n\n")
	}))
	defer backend.Close()
	h, root := homeWithOpenAI(t, "fake", backend.URL)
	appendFile(t, filepath.Join(root, "config.toml"), w.block())
	d := start(t, env(h), "daemon")
	waitSocket(t, d, agentSock(h))
	waitUntil(t, "the first sync", 20*time.Second, func() bool { return w.fake.Calls("sync") >= 2 })

	asked := w.fake.Say(w.room, w.owner, "write the marker")
	waitUntil(t, "the approval prompt", 20*time.Second, func() bool { return len(w.fake.Sent()) == 1 })
	prompt := w.fake.Sent()[0]
	m := matrixToken.FindStringSubmatch(prompt.Body)
	if m == nil || !strings.Contains(prompt.Body, "echo approved > marker") {
		t.Fatalf("prompt %+v", prompt)
	}
	// The stranger's answer comes first in the timeline: had it counted, the owner's would be a stale one.
	w.fake.Say(w.room, w.stranger, "yes "+m[1])
	w.fake.Say(w.room, w.owner, "yes "+m[1])
	waitUntil(t, "the answer and the ack", 20*time.Second, func() bool { return len(w.fake.Sent()) == 3 })
	var answer, ack []matrixfake.Message
	for _, s := range w.fake.Sent()[1:] {
		if s.MsgType == "m.notice" {
			ack = append(ack, s)
		} else {
			answer = append(answer, s)
		}
	}
	if len(ack) != 1 || ack[0].Body != "Approved." {
		t.Fatalf("acks %+v, want only the owner's Approved.", ack)
	}
	if len(answer) != 1 || answer[0].Body != "marker written" || answer[0].InReplyTo != asked || answer[0].Thread != asked {
		t.Fatalf("answer %+v", answer)
	}
	if _, err := os.Stat(filepath.Join(agentWorkspace(h), "marker")); err != nil {
		t.Fatalf("the approved command did not run: %v", err)
	}

	c := dialRPC(t, agentSock(h))
	c.Initialize()
	list := c.Call("session/list", map[string]any{}, 2)
	found := false
	for _, it := range list["result"].(map[string]any)["sessions"].([]any) {
		if s := it.(map[string]any); s["channel_id"] == "matrix.default" {
			found = true
		}
	}
	if !found {
		t.Fatalf("no channel session in session/list: %v", list)
	}
	health := c.Call("health", map[string]any{}, 3)
	comp, _ := health["result"].(map[string]any)["components"].(map[string]any)["channel:matrix.default"].(map[string]any)
	if comp == nil || comp["status"] != "ok" {
		t.Fatalf("health: %v", health)
	}
	if strings.Contains(d.stderr.String(), w.token) {
		t.Fatal("the access token is in the daemon's log")
	}
	raw, err := os.ReadFile(filepath.Join(root, "data", "channels", "matrix.default", "sync.json"))
	if err != nil || strings.Contains(string(raw), w.token) {
		t.Fatalf("sync.json %s (%v)", raw, err)
	}
}

// kill -9 of the real binary at random points, many rounds, while the homeserver keeps sending, repeats
// batches and injects 429/5xx/hangs/lost answers: every message is answered exactly once (counted by the event
// each reply answers, against the homeserver's record), none is lost, and no reply is left unconfirmed: a
// reply cut between its send and its record is found again by its transaction id (or resent with it, which
// the homeserver dedupes).
func TestMatrixKill9RoundsAnswerExactlyOnce(t *testing.T) {
	rounds := 100
	if testing.Short() {
		rounds = 10
	}
	w := newMatrixWorld(t)
	h, root := echoHome(t)
	appendFile(t, filepath.Join(root, "config.toml"), w.block())
	// The account's first sync reads the rooms' present (history is not answered): done once before the rounds.
	d := start(t, env(h), "daemon")
	waitSocket(t, d, agentSock(h))
	waitUntil(t, "the first sync", 20*time.Second, func() bool { return w.fake.Calls("sync") >= 2 })
	_ = d.cmd.Process.Signal(syscall.SIGKILL)
	<-d.done

	rng := rand.New(rand.NewPCG(3, 4))
	msgs := map[string]bool{}
	n := 0
	for round := range rounds {
		d := start(t, env(h), "daemon")
		for range 1 + rng.IntN(2) {
			n++
			msgs[w.fake.Say(w.room, w.owner, fmt.Sprintf("msg-%d-%d", round, n))] = true
		}
		switch rng.IntN(7) {
		case 0:
			w.fake.Inject("send", matrixfake.Fault{Status: 429, RetryAfterMS: 300})
		case 1:
			w.fake.Inject("send", matrixfake.Fault{Status: 502})
		case 2:
			w.fake.Inject("send", matrixfake.Fault{Lost: true})
		case 3:
			w.fake.Inject("sync", matrixfake.Fault{Status: 500})
		case 4:
			w.fake.Inject("sync", matrixfake.Fault{Hang: true})
		case 5:
			w.fake.Redeliver()
		}
		if rng.IntN(4) > 0 { // mostly killed once it serves, at a random point of its work; else during startup
			waitSocket(t, d, agentSock(h))
		}
		time.Sleep(time.Duration(rng.IntN(200)) * time.Millisecond)
		_ = d.cmd.Process.Signal(syscall.SIGKILL)
		<-d.done
	}
	answered := func() map[string]int {
		out := map[string]int{}
		for _, m := range w.fake.Sent() {
			if m.InReplyTo != "" {
				out[m.InReplyTo]++
			}
		}
		return out
	}
	duringRounds := len(answered())
	if duringRounds == 0 {
		t.Fatal("no reply was sent while the rounds ran: the kills never cut the daemon at work")
	}
	// A last, clean run drains what is left.
	w.fake.ClearFaults()
	d = start(t, env(h), "daemon")
	waitSocket(t, d, agentSock(h))
	deadline := time.Now().Add(60 * time.Second)
	for len(answered()) < len(msgs) && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	signal(t, d, syscall.SIGTERM)
	d.wait(t, 30*time.Second)
	counts := chantest.Drained(t, filepath.Join(root, "data", "sessions", "sessions.db"), "matrix.default")
	chantest.AnsweredOnce(t, msgs, answered())
	if counts["out:unconfirmed"] != 0 {
		t.Errorf("%d replies unconfirmed: WasSent should resolve each (counts %v)", counts["out:unconfirmed"], counts)
	}
	t.Logf("%d rounds, %d messages, %d answered during the rounds, %d resends deduped by the homeserver, counts %v",
		rounds, len(msgs), duringRounds, w.fake.Resends(), counts)
}

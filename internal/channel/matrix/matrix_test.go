package matrix_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/zeroclaw-go/zeroclaw/internal/channel"
	"github.com/zeroclaw-go/zeroclaw/internal/channel/chantest"
	"github.com/zeroclaw-go/zeroclaw/internal/channel/matrix"
	"github.com/zeroclaw-go/zeroclaw/internal/channel/matrix/matrixfake"
	"github.com/zeroclaw-go/zeroclaw/internal/config"
)

// world is a fake homeserver with the bot, its owner and a stranger in one room (three members: a group).
type world struct {
	fake                 *matrixfake.Server
	bot, owner, stranger string
	room                 string
	token                string
}

func newWorld(t testing.TB) *world {
	fake := matrixfake.Start("fake.local")
	t.Cleanup(fake.Close)
	fake.SetMaxWait(time.Second)
	w := &world{fake: fake, bot: fake.AddUser("bot", "bot-pw"), owner: fake.AddUser("owner", "o"), stranger: fake.AddUser("eve", "e")}
	w.room = fake.CreateRoom("r1", w.bot, w.owner, w.stranger)
	w.token = fake.Token(w.bot, "BOTDEV")
	return w
}

func (w *world) cfg() config.MatrixConfig {
	return config.MatrixConfig{Enabled: true, Homeserver: w.fake.URL(), AccessToken: w.token, ReplyInThread: true, ApprovalTimeoutSecs: 60}
}

// testType is matrix.Type with short timeouts (the fake's long polls last a second).
func testType() channel.Type {
	t := matrix.Type()
	t.New = func(inst channel.Instance, deps channel.Deps) (channel.Adapter, error) {
		return matrix.New(inst.ID, inst.Settings.(config.MatrixConfig), matrix.Options{Dir: filepath.Join(deps.DataDir, inst.ID.String()),
			Peers: inst.Peers, PollTimeout: time.Second, RequestTimeout: 2 * time.Second})
	}
	return t
}

// run starts a Core with one matrix channel (the owner allowed) whose state lives in dir.
func run(t testing.TB, w *world, mc config.MatrixConfig, tr channel.Turner, dir string) (*channel.Core, func()) {
	t.Helper()
	cfg := chantest.Config(channel.ID{Type: "matrix", Alias: "default"}, w.owner)
	cfg.Channels.Matrix = map[string]config.MatrixConfig{"default": mc}
	return chantest.Run(t, testType(), cfg, tr, dir)
}

// synced waits until the channel's first sync is done (messages said before it are history, not answered).
func synced(t testing.TB, w *world, from int) {
	t.Helper()
	chantest.WaitFor(t, "the first sync", func() bool { return w.fake.Calls("sync") > from+1 })
}

func bodies(ms []matrixfake.Message) []string {
	var out []string
	for _, m := range ms {
		out = append(out, m.Body)
	}
	return out
}

var tokenRe = regexp.MustCompile(`yes ([0-9a-f]+)`)

// A full turn with a tool approval: the prompt asks for "yes <token>", a stranger's "yes <token>" changes
// nothing (and gets no answer), the owner's approves; the answer arrives once, in a thread started from the
// message it answers, typing was shown, and the sync token on disk passed every event.
func TestMatrixTurnWithApproval(t *testing.T) {
	w := newWorld(t)
	tr := &chantest.Turner{Fn: func(ctx context.Context, r channel.TurnRequest) (string, error) {
		d, err := r.Approve(ctx, channel.ApprovalAsk{RequestID: "c1", ToolName: "shell", Summary: "rm -rf build"})
		if err != nil {
			return "", err
		}
		return "ran with " + d, nil
	}}
	dir := t.TempDir()
	_, stop := run(t, w, w.cfg(), tr, dir)
	synced(t, w, 0)
	asked := w.fake.Say(w.room, w.owner, "clean the build")
	chantest.WaitFor(t, "the approval prompt", func() bool { return len(w.fake.Sent()) == 1 })
	prompt := w.fake.Sent()[0]
	m := tokenRe.FindStringSubmatch(prompt.Body)
	if m == nil || prompt.Room != w.room || !strings.Contains(prompt.Body, "rm -rf build") || !strings.Contains(prompt.Body, "no "+m[1]) {
		t.Fatalf("prompt %+v", prompt)
	}
	w.fake.Say(w.room, w.stranger, "yes "+m[1])                            // a stranger in the room: ignored, not even acknowledged
	w.fake.SayContent(w.room, w.owner, map[string]any{"msgtype": "m.text", // a rich reply: the quote is not the answer
		"body": "> <@bot:fake.local> " + strings.ReplaceAll(prompt.Body, "\n", "\n> ") + "\n\nyes " + m[1], "m.relates_to": map[string]any{"m.in_reply_to": map[string]any{"event_id": prompt.EventID}}})
	yesAt := w.fake.Position()
	chantest.WaitFor(t, "the answer and the ack", func() bool { return len(w.fake.Sent()) == 3 }, func() string { return strings.Join(bodies(w.fake.Sent()), " | ") })
	var answer, ack matrixfake.Message
	for _, s := range w.fake.Sent()[1:] {
		switch s.MsgType {
		case "m.text":
			answer = s
		case "m.notice":
			ack = s
		}
	}
	if answer.Body != "ran with allow_once" || answer.InReplyTo != asked || answer.Thread != asked || answer.Room != w.room {
		t.Fatalf("answer %+v (sent %q)", answer, bodies(w.fake.Sent()))
	}
	if ack.Body != "Approved." || ack.Room != w.room {
		t.Fatalf("ack %+v (sent %q)", ack, bodies(w.fake.Sent()))
	}
	if w.fake.TypingCalls() == 0 {
		t.Fatal("no typing indicator")
	}
	if tr.Count("clean the build") != 1 {
		t.Fatalf("turns %v", tr.Turns())
	}
	// The token on disk reaches every event the owner sent, and holds no secret.
	syncFile := filepath.Join(dir, "channels", "matrix.default", "sync.json")
	chantest.WaitFor(t, "the token past the owner's answer", func() bool {
		raw, _ := os.ReadFile(syncFile)
		var st struct {
			NextBatch string `json:"next_batch"`
		}
		_ = json.Unmarshal(raw, &st)
		n, err := strconv.Atoi(strings.TrimPrefix(st.NextBatch, "s"))
		return err == nil && n >= yesAt
	})
	stop()
	raw, err := os.ReadFile(syncFile)
	if err != nil || strings.Contains(string(raw), w.token) {
		t.Fatalf("sync.json %s (%v)", raw, err)
	}
}

// Faults on both sides (429 with retry_after_ms, 5xx, a send whose answer is lost after it took effect, a
// failed sync, redelivery of a batch, a restart): every message is answered exactly once, counted against the
// homeserver's own record, and the lost send was resent with its transaction id and deduped by the server.
func TestMatrixFaultsAnsweredExactlyOnce(t *testing.T) {
	w := newWorld(t)
	tr := &chantest.Turner{}
	dir := t.TempDir()
	_, stop := run(t, w, w.cfg(), tr, dir)
	synced(t, w, 0)
	w.fake.Inject("send", matrixfake.Fault{Status: 429, RetryAfterMS: 200}, matrixfake.Fault{Lost: true}, matrixfake.Fault{Status: 502})
	w.fake.Inject("sync", matrixfake.Fault{Status: 500})
	asked := map[string]bool{}
	const n = 6
	for i := range n {
		asked[w.fake.Say(w.room, w.owner, "m"+string(rune('a'+i)))] = true
	}
	chantest.WaitFor(t, "the answers", func() bool { return len(w.fake.Sent()) == n })
	w.fake.Redeliver()
	asked[w.fake.Say(w.room, w.owner, "after redelivery")] = true
	chantest.WaitFor(t, "one more answer", func() bool { return len(w.fake.Sent()) == n+1 })
	stop()
	syncs := w.fake.Calls("sync")
	w.fake.Redeliver()
	core, stop2 := run(t, w, w.cfg(), tr, dir)
	defer stop2()
	synced(t, w, syncs) // the token was kept: not a first sync, and the redelivered batch is recognised
	asked[w.fake.Say(w.room, w.owner, "after restart")] = true
	chantest.WaitFor(t, "the last answer", func() bool { return len(w.fake.Sent()) == n+2 })
	chantest.WaitFor(t, "the counts", func() bool { return core.Status(context.Background())[0].Counts["out:sent"] == n+2 })
	replies := map[string]int{}
	for _, m := range w.fake.Sent() {
		replies[m.InReplyTo]++
	}
	for id := range asked {
		if replies[id] != 1 {
			t.Fatalf("message %s answered %d times: %q", id, replies[id], bodies(w.fake.Sent()))
		}
	}
	if len(replies) != len(asked) {
		t.Fatalf("replies %v to %d messages", replies, len(asked))
	}
	if w.fake.Resends() == 0 {
		t.Fatal("the send whose answer was lost was not resent with its transaction id")
	}
	if tr.Count("ma") != 1 || tr.Count("after restart") != 1 {
		t.Fatalf("turns %v", tr.Turns())
	}
}

// The token on disk passes a batch only after every event of it was recorded: a batch the core failed to
// record is synced again from the old token.
func TestMatrixTokenWaitsForTheRecord(t *testing.T) {
	w := newWorld(t)
	dir := t.TempDir()
	start := "s" + itoa(w.fake.Position())
	if err := os.WriteFile(filepath.Join(dir, "sync.json"), []byte(`{"next_batch":"`+start+`"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	a, err := matrix.New(channel.ID{Type: "matrix", Alias: "default"}, w.cfg(), matrix.Options{Dir: dir, PollTimeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	e1 := w.fake.Say(w.room, w.owner, "one")
	e2 := w.fake.Say(w.room, w.owner, "two")
	d := chantest.Failing()
	if err := a.Run(context.Background(), d); err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Fatalf("run: %v", err)
	}
	if a.SyncToken() != start {
		t.Fatalf("token advanced to %q past an unrecorded event", a.SyncToken())
	}
	d.Fail.Store(false)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- a.Run(ctx, d) }()
	chantest.WaitFor(t, "both events", func() bool { return len(d.IDs()) == 3 })
	chantest.WaitFor(t, "the token", func() bool { return a.SyncToken() != start })
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("run after cancel: %v", err)
	}
	if got := d.IDs(); got[0] != e1 || got[1] != e1 || got[2] != e2 {
		t.Fatalf("deliveries %v, want %s again then %s", got, e1, e2)
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

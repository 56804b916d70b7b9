package matrix_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zeroclaw-go/zeroclaw/internal/channel"
	"github.com/zeroclaw-go/zeroclaw/internal/channel/matrix"
	"github.com/zeroclaw-go/zeroclaw/internal/channel/matrix/matrixfake"
	"github.com/zeroclaw-go/zeroclaw/internal/config"
	"github.com/zeroclaw-go/zeroclaw/internal/store"
)

type turner struct {
	mu    sync.Mutex
	turns map[string]int
	fn    func(ctx context.Context, r channel.TurnRequest) (string, error)
}

func (t *turner) Turn(ctx context.Context, r channel.TurnRequest) (string, error) {
	t.mu.Lock()
	if t.turns == nil {
		t.turns = map[string]int{}
	}
	t.turns[r.Prompt]++
	t.mu.Unlock()
	if t.fn != nil {
		return t.fn(ctx, r)
	}
	return "echo: " + r.Prompt, nil
}

func (t *turner) count(p string) int { t.mu.Lock(); defer t.mu.Unlock(); return t.turns[p] }

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
	st, err := store.OpenChat(context.Background(), filepath.Join(dir, "sessions.db"))
	if err != nil {
		t.Fatal(err)
	}
	cfg := &config.Config{
		Agents:     map[string]config.AgentConfig{"main": {Channels: []string{"matrix.default"}}},
		PeerGroups: map[string]config.PeerGroupConfig{"me": {Channel: "matrix", Agents: []string{"main"}, ExternalPeers: []string{w.owner}}},
		Channels: config.ChannelsConfig{MessageTimeoutSecs: 60, MaxConcurrentPerChannel: 4,
			Matrix: map[string]config.MatrixConfig{"default": mc}},
		Reliability: config.ReliabilityConfig{ChannelInitialBackoffSecs: 1, ChannelMaxBackoffSecs: 1},
	}
	reg := &channel.Registry{}
	reg.Register(testType())
	core := channel.New(channel.Options{Store: st, Turner: tr, Registry: reg, Deps: channel.Deps{DataDir: filepath.Join(dir, "channels")}})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); core.Run(ctx, cfg) }()
	var once sync.Once
	stop := func() { once.Do(func() { cancel(); <-done; _ = st.Close() }) }
	t.Cleanup(stop)
	return core, stop
}

// synced waits until the channel's first sync is done (messages said before it are history, not answered).
func synced(t testing.TB, w *world, from int) {
	t.Helper()
	waitFor(t, "the first sync", func() bool { return w.fake.Calls("sync") > from+1 })
}

func waitFor(t testing.TB, what string, cond func() bool, detail ...func() string) {
	t.Helper()
	for i := 0; i < 3000; i++ {
		if cond() {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
	more := ""
	for _, d := range detail {
		more += ": " + d()
	}
	t.Fatalf("timed out waiting for %s%s", what, more)
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
	tr := &turner{fn: func(ctx context.Context, r channel.TurnRequest) (string, error) {
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
	waitFor(t, "the approval prompt", func() bool { return len(w.fake.Sent()) == 1 })
	prompt := w.fake.Sent()[0]
	m := tokenRe.FindStringSubmatch(prompt.Body)
	if m == nil || prompt.Room != w.room || !strings.Contains(prompt.Body, "rm -rf build") || !strings.Contains(prompt.Body, "no "+m[1]) {
		t.Fatalf("prompt %+v", prompt)
	}
	w.fake.Say(w.room, w.stranger, "yes "+m[1])                            // a stranger in the room: ignored, not even acknowledged
	w.fake.SayContent(w.room, w.owner, map[string]any{"msgtype": "m.text", // a rich reply: the quote is not the answer
		"body": "> <@bot:fake.local> " + strings.ReplaceAll(prompt.Body, "\n", "\n> ") + "\n\nyes " + m[1], "m.relates_to": map[string]any{"m.in_reply_to": map[string]any{"event_id": prompt.EventID}}})
	yesAt := w.fake.Position()
	waitFor(t, "the answer and the ack", func() bool { return len(w.fake.Sent()) == 3 }, func() string { return strings.Join(bodies(w.fake.Sent()), " | ") })
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
	if tr.count("clean the build") != 1 {
		t.Fatalf("turns %v", tr.turns)
	}
	// The token on disk reaches every event the owner sent, and holds no secret.
	syncFile := filepath.Join(dir, "channels", "matrix.default", "sync.json")
	waitFor(t, "the token past the owner's answer", func() bool {
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
	tr := &turner{}
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
	waitFor(t, "the answers", func() bool { return len(w.fake.Sent()) == n })
	w.fake.Redeliver()
	asked[w.fake.Say(w.room, w.owner, "after redelivery")] = true
	waitFor(t, "one more answer", func() bool { return len(w.fake.Sent()) == n+1 })
	stop()
	syncs := w.fake.Calls("sync")
	w.fake.Redeliver()
	core, stop2 := run(t, w, w.cfg(), tr, dir)
	defer stop2()
	synced(t, w, syncs) // the token was kept: not a first sync, and the redelivered batch is recognised
	asked[w.fake.Say(w.room, w.owner, "after restart")] = true
	waitFor(t, "the last answer", func() bool { return len(w.fake.Sent()) == n+2 })
	waitFor(t, "the counts", func() bool { return core.Status(context.Background())[0].Counts["out:sent"] == n+2 })
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
	if tr.count("ma") != 1 || tr.count("after restart") != 1 {
		t.Fatalf("turns %v", tr.turns)
	}
}

// failingDeliverer records nothing while fail is set: the adapter must not advance past what it was handed.
type failingDeliverer struct {
	mu   sync.Mutex
	fail bool
	got  []string
}

func (f *failingDeliverer) Deliver(_ context.Context, ev channel.Inbound) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.got = append(f.got, ev.EventID)
	if f.fail {
		return errors.New("disk full")
	}
	return nil
}
func (f *failingDeliverer) Progress() {}

func (f *failingDeliverer) events() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.got...)
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
	d := &failingDeliverer{fail: true}
	if err := a.Run(context.Background(), d); err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Fatalf("run: %v", err)
	}
	if a.SyncToken() != start {
		t.Fatalf("token advanced to %q past an unrecorded event", a.SyncToken())
	}
	d.mu.Lock()
	d.fail = false
	d.mu.Unlock()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- a.Run(ctx, d) }()
	waitFor(t, "both events", func() bool { return len(d.events()) == 3 })
	waitFor(t, "the token", func() bool { return a.SyncToken() != start })
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("run after cancel: %v", err)
	}
	if got := d.events(); got[0] != e1 || got[1] != e1 || got[2] != e2 {
		t.Fatalf("deliveries %v, want %s again then %s", got, e1, e2)
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

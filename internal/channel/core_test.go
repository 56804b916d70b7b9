package channel_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zeroclaw-go/zeroclaw/internal/channel"
	"github.com/zeroclaw-go/zeroclaw/internal/clock/clocktest"
	"github.com/zeroclaw-go/zeroclaw/internal/config"
	"github.com/zeroclaw-go/zeroclaw/internal/store"
)

// fakeAdapter is an in-memory platform: events pushed on in are delivered (and "acked" only when Deliver
// returns nil); sends are recorded; failures can be scripted.
type fakeAdapter struct {
	id    channel.ID
	in    chan channel.Inbound
	limit int

	mu      sync.Mutex
	sent    []channel.Outbound
	acked   []string
	failN   int   // the next failN sends fail with failErr
	failErr error // nil: a transient error
	prompts []channel.ApprovalPrompt
	acks    []string
	runs    int
	runErr  error // Run returns this at once when set
	checker bool
}

func (f *fakeAdapter) ID() channel.ID { return f.id }
func (f *fakeAdapter) Limits() channel.Limits {
	return channel.Limits{MaxRunes: f.limit}
}

func (f *fakeAdapter) Run(ctx context.Context, d channel.Deliverer) error {
	f.mu.Lock()
	f.runs++
	runErr := f.runErr
	f.mu.Unlock()
	if runErr != nil {
		return runErr
	}
	d.Progress()
	for {
		select {
		case <-ctx.Done():
			return nil
		case ev := <-f.in:
			if err := d.Deliver(ctx, ev); err != nil {
				return err
			}
			f.mu.Lock()
			f.acked = append(f.acked, ev.EventID)
			f.mu.Unlock()
			d.Progress()
		}
	}
}

func (f *fakeAdapter) Send(_ context.Context, m channel.Outbound) (channel.Sent, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.failN > 0 {
		f.failN--
		if f.failErr != nil {
			return channel.Sent{}, f.failErr
		}
		return channel.Sent{}, errors.New("503 try later")
	}
	f.sent = append(f.sent, m)
	return channel.Sent{MessageID: fmt.Sprint(len(f.sent))}, nil
}

func (f *fakeAdapter) Prompt(_ context.Context, p channel.ApprovalPrompt) (channel.Sent, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.prompts = append(f.prompts, p)
	return channel.Sent{MessageID: "p"}, nil
}

func (f *fakeAdapter) AckApproval(_ context.Context, a channel.ApprovalAnswer, notice string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.acks = append(f.acks, notice)
	return nil
}

func (f *fakeAdapter) texts() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []string
	for _, m := range f.sent {
		out = append(out, m.Text)
	}
	return out
}

// checkingAdapter can tell whether a message was sent: it knows by the outbound Key.
type checkingAdapter struct {
	*fakeAdapter
	known map[string]bool
}

func (c checkingAdapter) WasSent(_ context.Context, m channel.Outbound) (bool, channel.Sent, error) {
	return c.known[m.Key], channel.Sent{MessageID: "x"}, nil
}

// echoTurner answers "echo: <prompt>" and counts turns per session; hooks can block or ask approvals.
type echoTurner struct {
	mu    sync.Mutex
	turns map[string]int
	hook  func(ctx context.Context, r channel.TurnRequest) (string, error)
}

func (e *echoTurner) Turn(ctx context.Context, r channel.TurnRequest) (string, error) {
	e.mu.Lock()
	if e.turns == nil {
		e.turns = map[string]int{}
	}
	e.turns[r.Prompt]++
	hook := e.hook
	e.mu.Unlock()
	if hook != nil {
		return hook(ctx, r)
	}
	return "echo: " + r.Prompt, nil
}

func (e *echoTurner) count(p string) int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.turns[p]
}

type harness struct {
	t     *testing.T
	st    *store.ChatStore
	ad    *fakeAdapter
	tr    *echoTurner
	cfg   *config.Config
	core  *channel.Core
	stop  context.CancelFunc
	done  chan struct{}
	clk   *clocktest.Manual
	adOf  func(*fakeAdapter) channel.Adapter
	dbDir string
}

func testConfig(peers ...string) *config.Config {
	cfg := &config.Config{Agents: map[string]config.AgentConfig{"a": {Channels: []string{"fake.default"}}},
		PeerGroups: map[string]config.PeerGroupConfig{"g": {Channel: "fake", Agents: []string{"a"}, ExternalPeers: peers}}}
	cfg.Channels.MessageTimeoutSecs, cfg.Channels.MaxConcurrentPerChannel = 300, 4
	return cfg
}

func newHarness(t *testing.T, dir string, ad *fakeAdapter, tr *echoTurner, cfg *config.Config) *harness {
	t.Helper()
	st, err := store.OpenChat(context.Background(), filepath.Join(dir, "sessions.db"))
	if err != nil {
		t.Fatal(err)
	}
	h := &harness{t: t, st: st, ad: ad, tr: tr, cfg: cfg, dbDir: dir, clk: clocktest.New(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))}
	h.adOf = func(f *fakeAdapter) channel.Adapter { return f }
	return h
}

func (h *harness) start() {
	reg := &channel.Registry{}
	reg.Register(channel.Type{Name: "fake",
		Instances: func(cfg *config.Config) map[string]any { return map[string]any{"default": "settings"} },
		New: func(inst channel.Instance, _ channel.Deps) (channel.Adapter, error) {
			h.ad.id = inst.ID
			return h.adOf(h.ad), nil
		}})
	h.core = channel.New(channel.Options{Store: h.st, Turner: h.tr, Registry: reg, Clock: h.clk, Rand: func() float64 { return 0 }})
	ctx, cancel := context.WithCancel(context.Background())
	h.stop, h.done = cancel, make(chan struct{})
	go func() { defer close(h.done); h.core.Run(ctx, h.cfg) }()
}

func (h *harness) shutdown() {
	h.stop()
	<-h.done
	_ = h.st.Close()
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for i := 0; i < 1000; i++ {
		if cond() {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatalf("timed out waiting for %s", what)
}

func msg(id, sender, text string) channel.Inbound {
	return channel.Inbound{EventID: id, Kind: channel.KindMessage, Sender: sender, ReplyTarget: "chat" + sender, MessageID: "m" + id, Text: text}
}

// A redelivered event never runs a second turn, in the same process or after a restart.
func TestCoreRedeliveryRunsOneTurnAcrossRestart(t *testing.T) {
	dir := t.TempDir()
	ad := &fakeAdapter{in: make(chan channel.Inbound)}
	tr := &echoTurner{}
	h := newHarness(t, dir, ad, tr, testConfig("7"))
	h.start()
	ad.in <- msg("1", "7", "hello")
	ad.in <- msg("1", "7", "hello")
	waitFor(t, "the reply", func() bool { return len(ad.texts()) == 1 })
	h.shutdown()

	ad2 := &fakeAdapter{in: make(chan channel.Inbound)}
	h2 := newHarness(t, dir, ad2, tr, testConfig("7"))
	h2.start()
	defer h2.shutdown()
	ad2.in <- msg("1", "7", "hello") // the platform redelivers after the restart
	ad2.in <- msg("2", "7", "next")
	waitFor(t, "the second reply", func() bool { return h2.core.Status(context.Background())[0].Counts["out:sent"] == 2 })
	if tr.count("hello") != 1 || tr.count("next") != 1 || ad2.texts()[0] != "echo: next" || ad.texts()[0] != "echo: hello" {
		t.Fatalf("turns hello=%d next=%d, sent %q %q", tr.count("hello"), tr.count("next"), ad.texts(), ad2.texts())
	}
	st := h2.core.Status(context.Background())
	if len(st) != 1 || st[0].ID != "fake.default" || st[0].Agent != "a" || st[0].Counts["event:answered"] != 2 || st[0].Counts["out:sent"] != 2 {
		t.Fatalf("status %+v", st)
	}
}

// Strangers are recorded as ignored and get no turn; an empty allow-list lets nobody in; "*" lets anyone.
func TestCoreAllowList(t *testing.T) {
	for _, tc := range []struct {
		peers   []string
		sender  string
		answers bool
	}{{[]string{"7"}, "8", false}, {nil, "7", false}, {[]string{"*"}, "8", true}, {[]string{"@Alice"}, "alice", true}} {
		ad := &fakeAdapter{in: make(chan channel.Inbound)}
		tr := &echoTurner{}
		h := newHarness(t, t.TempDir(), ad, tr, testConfig(tc.peers...))
		h.start()
		ad.in <- msg("1", tc.sender, "hi")
		ad.in <- msg("2", "zz-sentinel", "x") // delivered after the first: the first was handled
		if tc.answers {
			// Turns of different senders run at once: the sentinel's reply may come first, so wait for hi's.
			waitFor(t, "reply", func() bool { return slices.Contains(ad.texts(), "echo: hi") })
			if tr.count("hi") != 1 {
				t.Fatalf("peers %v sender %s: %d turns", tc.peers, tc.sender, tr.count("hi"))
			}
		} else {
			waitFor(t, "both ignored", func() bool { return h.core.Status(context.Background())[0].Ignored == 2 })
			if n := tr.count("hi"); n != 0 || len(ad.texts()) != 0 {
				t.Fatalf("peers %v sender %s: %d turns, sent %q", tc.peers, tc.sender, n, ad.texts())
			}
			st := h.core.Status(context.Background())[0]
			if st.Ignored != 2 || len(st.Counts) != 0 {
				t.Fatalf("ignored %d, counts %v: a stranger's message was recorded", st.Ignored, st.Counts)
			}
		}
		h.shutdown()
	}
}

// A long answer is split per the platform's limit with continuation markers, in order.
func TestCoreSplitsLongAnswers(t *testing.T) {
	ad := &fakeAdapter{in: make(chan channel.Inbound), limit: 100}
	tr := &echoTurner{hook: func(context.Context, channel.TurnRequest) (string, error) {
		return strings.Repeat("word ", 70), nil
	}}
	h := newHarness(t, t.TempDir(), ad, tr, testConfig("7"))
	h.start()
	defer h.shutdown()
	ad.in <- msg("1", "7", "long")
	waitFor(t, "chunks", func() bool {
		c := h.core.Status(context.Background())[0].Counts
		return c["out:sent"] > 0 && c["out:pending"] == 0 && c["out:sending"] == 0
	})
	got := ad.texts()
	for i, s := range got {
		if len([]rune(s)) > 100 {
			t.Fatalf("chunk %d has %d runes", i, len([]rune(s)))
		}
		if i < len(got)-1 && !strings.HasSuffix(s, "(continues...)") || i > 0 && !strings.HasPrefix(s, "(continued)") {
			t.Fatalf("chunk %d markers: %q", i, s)
		}
	}
	joined := strings.Join(got, " ")
	if strings.Count(joined, "word") != 70 {
		t.Fatalf("words lost or repeated: %d", strings.Count(joined, "word"))
	}
}

// A rate-limited send waits the platform's retry_after (no earlier), then succeeds once; a permanent failure
// is not retried.
func TestCoreRetriesSendsWithBackoff(t *testing.T) {
	ad := &fakeAdapter{in: make(chan channel.Inbound), failN: 1, failErr: &channel.RetryAfter{After: 30 * time.Second, Err: errors.New("429")}}
	tr := &echoTurner{}
	h := newHarness(t, t.TempDir(), ad, tr, testConfig("7"))
	h.start()
	defer h.shutdown()
	ad.in <- msg("1", "7", "hi")
	waitFor(t, "the retry timer", func() bool { return h.clk.WaitTimer(30*time.Second, 0) })
	h.clk.Advance(29 * time.Second)
	time.Sleep(10 * time.Millisecond)
	if len(ad.texts()) != 0 {
		t.Fatal("sent before retry_after")
	}
	h.clk.Advance(time.Second)
	waitFor(t, "the retried reply", func() bool { return len(ad.texts()) == 1 })

	ad.mu.Lock()
	ad.failN, ad.failErr = 1, fmt.Errorf("chat not found: %w", channel.ErrPermanent)
	ad.mu.Unlock()
	ad.in <- msg("2", "7", "again")
	waitFor(t, "the failed row", func() bool { return h.core.Status(context.Background())[0].Counts["out:failed"] == 1 })
	if len(ad.texts()) != 1 {
		t.Fatalf("permanent failure was retried: %q", ad.texts())
	}
}

// At start, a reply the previous process was sending is not sent again when the platform cannot say whether
// it arrived (counted unconfirmed), and is resolved by asking where it can; an event whose turn was running
// gets a notice, not a second turn.
func TestCoreRecoversAfterCrash(t *testing.T) {
	for _, canCheck := range []bool{false, true} {
		dir := t.TempDir()
		ctx := context.Background()
		st, err := store.OpenChat(ctx, filepath.Join(dir, "sessions.db"))
		if err != nil {
			t.Fatal(err)
		}
		now := time.Now()
		ev, _, _ := st.RecordChannelEvent(ctx, store.ChanEvent{ChannelID: "fake.default", PlatformEventID: "1", Kind: "message", Sender: "7", ReplyTarget: "c", Content: "one"}, now)
		_ = st.AnswerChannelEvent(ctx, ev.ID, []store.ChanOut{{ChannelID: "fake.default", ReplyTarget: "c", Content: "reply one"}}, now)
		rows, _ := st.ChannelOutbox(ctx, "fake.default", store.ChanOutPending, 10)
		_, _ = st.SetChannelOut(ctx, rows[0].ID, store.ChanOutPending, store.ChanOutSending, "", "", true, now) // crash here
		ev2, _, _ := st.RecordChannelEvent(ctx, store.ChanEvent{ChannelID: "fake.default", PlatformEventID: "2", Kind: "message", Sender: "7", ReplyTarget: "c", Content: "two"}, now)
		_ = st.SetChannelEventState(ctx, ev2.ID, store.ChanEventRunning, "k", "") // crash mid-turn
		_ = st.Close()

		ad := &fakeAdapter{in: make(chan channel.Inbound)}
		tr := &echoTurner{}
		h := newHarness(t, dir, ad, tr, testConfig("7"))
		if canCheck {
			h.adOf = func(f *fakeAdapter) channel.Adapter {
				return checkingAdapter{f, map[string]bool{"fake.default/" + fmt.Sprint(rows[0].ID): true}}
			}
		}
		h.start()
		waitFor(t, "the notice", func() bool { return len(ad.texts()) == 1 })
		if !strings.Contains(ad.texts()[0], "restarted") || tr.count("two") != 0 {
			t.Fatalf("sent %q, turns %d", ad.texts(), tr.count("two"))
		}
		waitFor(t, "the notice recorded", func() bool { return h.core.Status(ctx)[0].Counts["out:sending"] == 0 })
		c := h.core.Status(ctx)[0].Counts
		if canCheck && (c["out:sent"] != 2 || c["out:unconfirmed"] != 0) || !canCheck && (c["out:unconfirmed"] != 1 || c["out:sent"] != 1) {
			t.Fatalf("checker %v: counts %v", canCheck, c)
		}
		h.shutdown()
	}
}

// An approval prompt is bound to its call: only the requester's press counts, a stranger's and a stale
// token's are refused, and nobody answering denies at the timeout.
func TestCoreApprovals(t *testing.T) {
	ad := &fakeAdapter{in: make(chan channel.Inbound)}
	decisions := make(chan string, 2)
	tr := &echoTurner{hook: func(ctx context.Context, r channel.TurnRequest) (string, error) {
		d, err := r.Approve(ctx, channel.ApprovalAsk{RequestID: "r1", ToolName: "shell", Summary: "ls"})
		if err != nil {
			d = "error:" + err.Error()
		}
		decisions <- d
		return "done " + d, nil
	}}
	cfg := testConfig("7", "8")
	h := newHarness(t, t.TempDir(), ad, tr, cfg)
	h.start()
	defer h.shutdown()
	ad.in <- msg("1", "7", "run it")
	waitFor(t, "the prompt", func() bool { ad.mu.Lock(); defer ad.mu.Unlock(); return len(ad.prompts) == 1 })
	tok := ad.prompts[0].Token
	press := func(id, sender, token, d string) {
		ad.in <- channel.Inbound{EventID: id, Kind: channel.KindApproval, Sender: sender, ReplyTarget: "chat7",
			Approval: &channel.ApprovalAnswer{Token: token, Decision: d, AckID: "cb" + id}}
	}
	press("p1", "8", tok, channel.DecisionAllowOnce) // an allowed peer, but not the requester
	press("p2", "7", "stale", channel.DecisionAllowOnce)
	press("p3", "7", tok, channel.DecisionAllowOnce)
	press("p3", "7", tok, channel.DecisionRejectOnce) // a redelivered press is the same press
	if d := <-decisions; d != channel.DecisionAllowOnce {
		t.Fatalf("decision %q", d)
	}
	waitFor(t, "acks", func() bool { ad.mu.Lock(); defer ad.mu.Unlock(); return len(ad.acks) == 3 })
	if !strings.Contains(ad.acks[0], "Only") || !strings.Contains(ad.acks[1], "no longer") || ad.acks[2] != "Approved." {
		t.Fatalf("acks %q", ad.acks)
	}
	ad.in <- msg("2", "7", "again")
	waitFor(t, "the second prompt", func() bool { ad.mu.Lock(); defer ad.mu.Unlock(); return len(ad.prompts) == 2 })
	waitFor(t, "the approval timer", func() bool { return h.clk.WaitTimer(300*time.Second, 0) })
	h.clk.Advance(300 * time.Second)
	if d := <-decisions; !strings.Contains(d, "timed out") {
		t.Fatalf("timeout decision %q", d)
	}
}

// A listener that fails at once is restarted only after its backoff, doubling up to the max: no spin.
func TestCoreListenerBackoffDoesNotSpin(t *testing.T) {
	ad := &fakeAdapter{in: make(chan channel.Inbound), runErr: errors.New("connection reset")}
	h := newHarness(t, t.TempDir(), ad, &echoTurner{}, testConfig("7"))
	h.start()
	defer h.shutdown()
	runs := func() int { ad.mu.Lock(); defer ad.mu.Unlock(); return ad.runs }
	for i, wait := range []time.Duration{time.Second, 2 * time.Second, 4 * time.Second} { // jitter 0: half the backoff
		waitFor(t, "the backoff timer", func() bool { return h.clk.WaitTimer(wait, 0) })
		time.Sleep(10 * time.Millisecond)
		if runs() != i+1 {
			t.Fatalf("runs %d before backoff %d", runs(), i)
		}
		h.clk.Advance(wait)
		waitFor(t, "the restart", func() bool { return runs() == i+2 })
	}
	st := h.core.Status(context.Background())[0]
	if st.State != channel.StateBackoff || st.LastError != "connection reset" || st.Restarts < 3 {
		t.Fatalf("status %+v", st)
	}
	ad.mu.Lock()
	ad.runErr = fmt.Errorf("token revoked: %w", channel.ErrPermanent)
	ad.mu.Unlock()
	waitFor(t, "the backoff timer", func() bool { return h.clk.WaitTimer(8*time.Second, 0) })
	h.clk.Advance(8 * time.Second)
	waitFor(t, "parked", func() bool { return h.core.Status(context.Background())[0].State == channel.StateParked })
}

// Upstream zeroclaw#6061: a turn stuck on its provider held the sender's slot and the channel stopped
// answering. Here a stuck turn holds one permit only: the next message is answered meanwhile; at shutdown the
// stuck one is left running and, after the restart, answered with a notice instead of a second turn.
func TestCoreStuckTurnDoesNotStopTheChannel(t *testing.T) {
	dir := t.TempDir()
	ad := &fakeAdapter{in: make(chan channel.Inbound)}
	stuck := make(chan struct{})
	tr := &echoTurner{hook: func(ctx context.Context, r channel.TurnRequest) (string, error) {
		if r.Prompt == "hang" {
			close(stuck)
			<-ctx.Done()
			return "", ctx.Err()
		}
		return "echo: " + r.Prompt, nil
	}}
	h := newHarness(t, dir, ad, tr, testConfig("7"))
	h.start()
	ad.in <- msg("1", "7", "hang")
	<-stuck
	ad.in <- msg("2", "7", "still there?")
	waitFor(t, "the answer beside the stuck turn", func() bool { return len(ad.texts()) == 1 })
	if ad.texts()[0] != "echo: still there?" {
		t.Fatalf("sent %q", ad.texts())
	}
	h.shutdown()

	ad2 := &fakeAdapter{in: make(chan channel.Inbound)}
	tr.hook = nil
	h2 := newHarness(t, dir, ad2, tr, testConfig("7"))
	h2.start()
	defer h2.shutdown()
	waitFor(t, "the notice", func() bool { return len(ad2.texts()) == 1 })
	if !strings.Contains(ad2.texts()[0], "restarted") || tr.count("hang") != 1 {
		t.Fatalf("sent %q, hang turns %d", ad2.texts(), tr.count("hang"))
	}
}

// Reload: a changed channel restarts without losing or repeating an event, a removed one stops, an added one
// starts.
func TestCoreReloadRewiresChannels(t *testing.T) {
	ad := &fakeAdapter{in: make(chan channel.Inbound)}
	tr := &echoTurner{}
	h := newHarness(t, t.TempDir(), ad, tr, testConfig("7"))
	h.start()
	defer h.shutdown()
	ad.in <- msg("1", "7", "one")
	waitFor(t, "the first reply", func() bool { return len(ad.texts()) == 1 })
	h.core.Reload(testConfig("7", "8")) // the allow-list changed: the channel restarts with it
	waitFor(t, "the restarted channel", func() bool {
		ad.mu.Lock()
		defer ad.mu.Unlock()
		return ad.runs == 2
	})
	ad.in <- msg("1", "7", "one") // redelivered across the restart
	ad.in <- msg("2", "8", "two")
	waitFor(t, "the second reply", func() bool { return len(ad.texts()) == 2 })
	if tr.count("one") != 1 || tr.count("two") != 1 {
		t.Fatalf("turns one=%d two=%d", tr.count("one"), tr.count("two"))
	}
	off := testConfig("7")
	off.Agents = map[string]config.AgentConfig{"a": {Channels: []string{"fake.default"}, Enabled: new(false)}}
	h.core.Reload(off) // its agent disabled: the channel stays, owned by nobody, strangers' and all events ignored
	waitFor(t, "the reconfigured channel", func() bool {
		st := h.core.Status(context.Background())
		return len(st) == 1 && st[0].Agent == ""
	})
}

package telegram_test

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zeroclaw-go/zeroclaw/internal/channel"
	"github.com/zeroclaw-go/zeroclaw/internal/channel/telegram"
	"github.com/zeroclaw-go/zeroclaw/internal/channel/telegram/tgfake"
	"github.com/zeroclaw-go/zeroclaw/internal/config"
	"github.com/zeroclaw-go/zeroclaw/internal/store"
)

const token = "123456:TEST-token_abc"

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

// run starts a Core with one telegram channel against fake; owner is the allowed user id.
func run(t testing.TB, fake *tgfake.Server, tr channel.Turner, dir string) (*channel.Core, func()) {
	t.Helper()
	st, err := store.OpenChat(context.Background(), filepath.Join(dir, "sessions.db"))
	if err != nil {
		t.Fatal(err)
	}
	cfg := &config.Config{
		Agents:     map[string]config.AgentConfig{"main": {Channels: []string{"telegram.default"}}},
		PeerGroups: map[string]config.PeerGroupConfig{"me": {Channel: "telegram", Agents: []string{"main"}, ExternalPeers: []string{"42"}}},
		Channels: config.ChannelsConfig{MessageTimeoutSecs: 60, MaxConcurrentPerChannel: 4, Telegram: map[string]config.TelegramConfig{
			"default": {Enabled: true, BotToken: token, APIBaseURL: fake.URL(), ApprovalTimeoutSecs: 120, PollTimeoutSecs: 1}}},
		Reliability: config.ReliabilityConfig{ChannelInitialBackoffSecs: 1, ChannelMaxBackoffSecs: 1},
	}
	reg := &channel.Registry{}
	reg.Register(telegram.Type())
	core := channel.New(channel.Options{Store: st, Turner: tr, Registry: reg})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); core.Run(ctx, cfg) }()
	return core, func() { cancel(); <-done; _ = st.Close() }
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for i := 0; i < 2000; i++ {
		if cond() {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatalf("timed out waiting for %s", what)
}

// A full turn with a tool approval over the Bot API: the prompt carries buttons bound to the call, a stranger's
// press is ignored (not acknowledged: a stranger gets nothing from the bot), the owner's approves, the answer arrives once, typing was shown, and the offset confirms
// every update.
func TestTelegramTurnWithApproval(t *testing.T) {
	fake := tgfake.Start(token)
	defer fake.Close()
	tr := &turner{fn: func(ctx context.Context, r channel.TurnRequest) (string, error) {
		d, err := r.Approve(ctx, channel.ApprovalAsk{RequestID: "c1", ToolName: "shell", Summary: "rm -rf build"})
		if err != nil {
			return "", err
		}
		return "ran with " + d, nil
	}}
	_, stop := run(t, fake, tr, t.TempDir())
	defer stop()
	fake.SendText(42, "owner", "clean the build")
	waitFor(t, "the approval prompt", func() bool { return len(fake.Sent()) == 1 })
	prompt := fake.Sent()[0]
	if prompt.ChatID != 42 || len(prompt.Buttons) != 2 || !strings.Contains(prompt.Text, "rm -rf build") {
		t.Fatalf("prompt %+v", prompt)
	}
	fake.Press(99, 42, prompt.Buttons[0].Data) // a stranger in the chat: ignored, not even acknowledged
	fake.Press(42, 42, prompt.Buttons[0].Data) // the updates come in order: the stranger's is handled first
	waitFor(t, "the answer", func() bool { return len(fake.Sent()) == 2 })
	if got := fake.Sent()[1]; got.Text != "ran with allow_once" || got.ChatID != 42 || got.ReplyTo == 0 {
		t.Fatalf("answer %+v", got)
	}
	waitFor(t, "the owner's ack", func() bool { return len(fake.Acks()) >= 1 })
	if a := fake.Acks(); len(a) != 1 || a[0] != "Approved." {
		t.Fatalf("acks %q", a)
	}
	if fake.ChatActions() == 0 {
		t.Fatal("no typing indicator")
	}
	waitFor(t, "the offset", func() bool { return fake.Confirmed() == 3 })
	if tr.count("clean the build") != 1 {
		t.Fatalf("turns %d", tr.count("clean the build"))
	}
}

// Faults on both sides (429 with retry_after, 5xx, a hung poll, redelivery of confirmed updates, a restart):
// every update is answered exactly once, counted against the fake's own record.
func TestTelegramFaultsAnsweredExactlyOnce(t *testing.T) {
	fake := tgfake.Start(token)
	defer fake.Close()
	tr := &turner{}
	dir := t.TempDir()
	_, stop := run(t, fake, tr, dir)
	fake.Inject("sendMessage", tgfake.Fault{Status: 429, RetryAfter: 1}, tgfake.Fault{Status: 502})
	fake.Inject("getUpdates", tgfake.Fault{Status: 500})
	const n = 6
	for i := range n {
		fake.SendText(42, "owner", "m"+string(rune('a'+i)))
	}
	waitFor(t, "the answers", func() bool { return len(fake.Sent()) == n })
	fake.Redeliver()
	fake.SendText(42, "owner", "after redelivery")
	waitFor(t, "one more answer", func() bool { return len(fake.Sent()) == n+1 })
	stop()
	fake.Redeliver() // the new process starts at offset 0 and sees everything again
	core, stop2 := run(t, fake, tr, dir)
	defer stop2()
	fake.SendText(42, "owner", "after restart")
	waitFor(t, "the last answer", func() bool { return len(fake.Sent()) == n+2 })
	waitFor(t, "the counts", func() bool { return core.Status(context.Background())[0].Counts["out:sent"] == n+2 })
	seen := map[string]int{}
	for _, m := range fake.Sent() {
		seen[m.Text]++
	}
	for text, c := range seen {
		if c != 1 {
			t.Fatalf("%q sent %d times: %+v", text, c, fake.Sent())
		}
	}
	if seen["echo: after restart"] != 1 || seen["echo: ma"] != 1 || tr.count("ma") != 1 {
		t.Fatalf("sent %v turns %v", seen, tr.turns)
	}
}

// A revoked token parks the channel (no retry loop) and no error shows the token.
func TestTelegramBadTokenParksWithoutLeakingIt(t *testing.T) {
	fake := tgfake.Start("other-token")
	defer fake.Close()
	core, stop := run(t, fake, &turner{}, t.TempDir())
	defer stop()
	waitFor(t, "parked", func() bool {
		st := core.Status(context.Background())
		return len(st) == 1 && st[0].State == channel.StateParked
	})
	st := core.Status(context.Background())[0]
	if strings.Contains(st.LastError, token) || !strings.Contains(st.LastError, "bot_token") {
		t.Fatalf("last error %q", st.LastError)
	}
	polls := fake.Polls()
	time.Sleep(50 * time.Millisecond)
	if fake.Polls() != polls {
		t.Fatal("a parked channel kept polling")
	}
	a, _ := telegram.New(channel.ID{Type: "telegram", Alias: "x"}, config.TelegramConfig{BotToken: token, APIBaseURL: "http://127.0.0.1:1"}, nil)
	_, err := a.Send(context.Background(), channel.Outbound{ReplyTarget: "1", Text: "x"})
	if err == nil || strings.Contains(err.Error(), token) {
		t.Fatalf("connection error %v", err)
	}
	if errors.Is(err, channel.ErrPermanent) {
		t.Fatalf("a refused connection is not permanent: %v", err)
	}
}

// failingDeliverer records nothing: the adapter must not confirm what it was handed.
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

// The offset passes an update only after Deliver recorded it: an update the core failed to record is
// delivered again by Telegram, to the next run.
func TestTelegramOffsetWaitsForTheRecord(t *testing.T) {
	fake := tgfake.Start(token)
	defer fake.Close()
	a, err := telegram.New(channel.ID{Type: "telegram", Alias: "default"}, config.TelegramConfig{BotToken: token, APIBaseURL: fake.URL(), PollTimeoutSecs: 1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	fake.SendText(42, "owner", "hello")
	d := &failingDeliverer{fail: true}
	if err := a.Run(context.Background(), d); err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Fatalf("run: %v", err)
	}
	d.mu.Lock()
	d.fail = false
	d.mu.Unlock()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- a.Run(ctx, d) }()
	waitFor(t, "the confirmation", func() bool { return fake.Confirmed() == 1 })
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("run after cancel: %v", err)
	}
	if d.got[0] != "1" || d.got[1] != "1" {
		t.Fatalf("deliveries %v", d.got)
	}
}

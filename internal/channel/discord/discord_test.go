package discord_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/zeroclaw-go/zeroclaw/internal/channel"
	"github.com/zeroclaw-go/zeroclaw/internal/channel/chantest"
	"github.com/zeroclaw-go/zeroclaw/internal/channel/discord"
	"github.com/zeroclaw-go/zeroclaw/internal/channel/discord/discordfake"
	"github.com/zeroclaw-go/zeroclaw/internal/config"
)

const (
	token = "MTAx.fake-bot.token_xyz"
	owner = "4242"
	dm    = "5555"
)

func startFake(t *testing.T) *discordfake.Server {
	fake := discordfake.Start(token)
	fake.HeartbeatMs = 100
	t.Cleanup(fake.Close)
	return fake
}

// run starts a Core with one discord channel against fake, its gateway state under dir; owner may talk.
func run(t testing.TB, fake *discordfake.Server, tr channel.Turner, dir string) (*channel.Core, func()) {
	t.Helper()
	cfg := chantest.Config(channel.ID{Type: "discord", Alias: "default"}, owner)
	cfg.Channels.Discord = map[string]config.DiscordConfig{
		"default": {Enabled: true, BotToken: token, APIBaseURL: fake.URL(), ApprovalTimeoutSecs: 120}}
	return chantest.Run(t, discord.Type(), cfg, tr, dir)
}

// A full turn with a tool approval over the gateway and REST: the prompt carries buttons bound to the call, its
// text escaped and pinging nobody; a stranger's press is ignored (no interaction answer); the owner's approves
// with an ephemeral notice; the answer replies to the message once, with a nonce; typing was shown; the bot's
// own messages, which the gateway echoes, start no turn.
func TestDiscordTurnWithApproval(t *testing.T) {
	fake := startFake(t)
	tr := &chantest.Turner{Fn: func(ctx context.Context, r channel.TurnRequest) (string, error) {
		d, err := r.Approve(ctx, channel.ApprovalAsk{RequestID: "c1", ToolName: "shell", Summary: "rm -rf build [x](http://evil)"})
		if err != nil {
			return "", err
		}
		return "ran with " + d, nil
	}}
	_, stop := run(t, fake, tr, t.TempDir())
	defer stop()
	chantest.WaitFor(t, "the session", fake.Caught)
	in := fake.SendText(owner, "owner", dm, "", "clean the build")
	chantest.WaitFor(t, "the approval prompt", func() bool { return len(fake.Sent()) == 1 })
	prompt := fake.Sent()[0]
	if prompt.ChannelID != dm || len(prompt.Buttons) != 2 || !strings.Contains(prompt.Content, `rm \-rf build \[x\]\(http\://evil\)`) ||
		!prompt.AllowedMentionsNone {
		t.Fatalf("prompt %+v", prompt)
	}
	fake.Press("9999", dm, prompt.Buttons[0].CustomID) // a stranger: ignored, not even answered
	owners := fake.Press(owner, dm, prompt.Buttons[0].CustomID)
	chantest.WaitFor(t, "the answer", func() bool { return len(fake.Sent()) == 2 })
	got := fake.Sent()[1]
	if got.Content != "ran with allow_once" || got.ChannelID != dm || got.ReplyTo != in || got.Nonce == "" || !got.AllowedMentionsNone {
		t.Fatalf("answer %+v", got)
	}
	chantest.WaitFor(t, "the owner's ack", func() bool { return len(fake.Callbacks()) >= 1 })
	if cb := fake.Callbacks(); len(cb) != 1 || cb[0].InteractionID != owners || cb[0].Content != "Approved." || !cb[0].Ephemeral || cb[0].Type != 4 {
		t.Fatalf("callbacks %+v", cb)
	}
	if fake.Typing() == 0 {
		t.Fatal("no typing indicator")
	}
	chantest.WaitFor(t, "a heartbeat", func() bool { return fake.Heartbeats() > 0 })
	if tr.Count("clean the build") != 1 || len(tr.Turns()) != 1 {
		t.Fatalf("turns %v", tr.Turns())
	}
	if fake.LastIntents() != 1|1<<9|1<<12|1<<15 {
		t.Fatalf("intents %d", fake.LastIntents())
	}
}

// Faults on both sides (429 with retry_after, 5xx, a dropped connection, RECONNECT, a zombie connection
// without heartbeat ACKs, a redelivery of every event, a restart with messages sent while it was down): every
// message is answered exactly once, counted against the fake's own record, and the session is resumed, never
// identified again.
func TestDiscordFaultsAnsweredExactlyOnce(t *testing.T) {
	fake := startFake(t)
	tr := &chantest.Turner{}
	dir := t.TempDir()
	core, stop := run(t, fake, tr, dir)
	chantest.WaitFor(t, "the session", fake.Caught)
	fake.Inject("messages", discordfake.Fault{Status: 429, RetryAfter: 0.2}, discordfake.Fault{Status: 502})
	want := map[string]bool{}
	send := func(text string) { want[fake.SendText(owner, "owner", dm, "", text)] = true }
	for i := range 4 {
		send("m" + string(rune('a'+i)))
	}
	chantest.WaitFor(t, "the answers", func() bool { return len(fake.Sent()) == 4 })
	fake.Drop()
	send("after drop")
	chantest.WaitFor(t, "answer after drop", func() bool { return len(fake.Sent()) == 5 })
	fake.SendOp(7, nil)
	send("after reconnect")
	chantest.WaitFor(t, "answer after reconnect", func() bool { return len(fake.Sent()) == 6 })
	fake.SilenceAcks(true)
	chantest.WaitFor(t, "the zombie connection dropped", func() bool { return fake.Connected() == 0 })
	fake.SilenceAcks(false)
	send("after zombie")
	chantest.WaitFor(t, "answer after zombie", func() bool { return len(fake.Sent()) == 7 })
	fake.Redeliver()
	send("after redelivery")
	chantest.WaitFor(t, "answer after redelivery", func() bool { return len(fake.Sent()) == 8 })
	chantest.WaitFor(t, "the counts", func() bool { return core.Status(context.Background())[0].Counts["out:sent"] == 8 })
	stop()
	send("while down") // kept in the resumable session, replayed on RESUME
	core, stop2 := run(t, fake, tr, dir)
	defer stop2()
	send("after restart")
	chantest.WaitFor(t, "the last answers", func() bool { return len(fake.Sent()) == 10 })
	chantest.WaitFor(t, "the counts", func() bool { return core.Status(context.Background())[0].Counts["out:sent"] == 10 })
	answered := map[string]int{}
	for _, m := range fake.Sent() {
		answered[m.ReplyTo]++
	}
	for id := range want {
		if answered[id] != 1 {
			t.Errorf("message %s answered %d times", id, answered[id])
		}
	}
	if len(answered) != len(want) {
		t.Errorf("answers to %d messages, %d sent", len(answered), len(want))
	}
	if fake.Identifies() != 1 || fake.Resumes() < 5 {
		t.Errorf("identifies %d resumes %d: the session was not resumed", fake.Identifies(), fake.Resumes())
	}
	if tr.Count("ma") != 1 || tr.Count("while down") != 1 {
		t.Errorf("turns %v", tr.Turns())
	}
}

func newAdapter(t *testing.T, fake *discordfake.Server, dir string) *discord.Adapter {
	t.Helper()
	a, err := discord.New(channel.ID{Type: "discord", Alias: "default"}, config.DiscordConfig{BotToken: token, APIBaseURL: fake.URL()}, nil, dir)
	if err != nil {
		t.Fatal(err)
	}
	discord.SetInvalidWait(a, 10*time.Millisecond)
	return a
}

func runAsync(a *discord.Adapter, d channel.Deliverer) (stop func() error) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- a.Run(ctx, d) }()
	return func() error { cancel(); return <-done }
}

// The sequence a RESUME replays from passes an event only after Deliver recorded it: an event the core failed
// to record comes again, to the next run, on the same session.
func TestDiscordSeqWaitsForTheRecord(t *testing.T) {
	fake := startFake(t)
	a := newAdapter(t, fake, t.TempDir())
	d := chantest.Failing()
	errc := make(chan error, 1)
	go func() { errc <- a.Run(context.Background(), d) }()
	chantest.WaitFor(t, "the session", fake.Caught)
	id := fake.SendText(owner, "o", dm, "", "hello")
	if err := <-errc; err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Fatalf("run: %v", err)
	}
	d.Fail.Store(false)
	stop := runAsync(a, d)
	chantest.WaitFor(t, "the redelivery", func() bool { return len(d.IDs()) == 2 })
	if err := stop(); err != nil {
		t.Fatalf("run after cancel: %v", err)
	}
	if got := d.IDs(); got[0] != id || got[1] != id || fake.Identifies() != 1 || fake.Resumes() != 1 {
		t.Fatalf("deliveries %v identifies %d resumes %d", got, fake.Identifies(), fake.Resumes())
	}
}

// INVALID_SESSION not resumable: the session is forgotten and a new one identified; resumable: resumed.
func TestDiscordInvalidSession(t *testing.T) {
	fake := startFake(t)
	a := newAdapter(t, fake, "")
	d := &chantest.Deliverer{}
	stop := runAsync(a, d)
	defer stop()
	chantest.WaitFor(t, "the session", fake.Caught)
	fake.SendOp(9, true)
	chantest.WaitFor(t, "the resume", func() bool { return fake.Resumes() == 1 })
	fake.SendOp(9, false)
	chantest.WaitFor(t, "a new session", func() bool { return fake.Identifies() == 2 && fake.Caught() })
	id := fake.SendText(owner, "o", dm, "", "hi again")
	chantest.WaitFor(t, "the delivery", func() bool { ids := d.IDs(); return len(ids) == 1 && ids[0] == id })
}

// The fatal close codes park the channel with what to fix; a bad token is refused by REST first. No error
// names the token.
func TestDiscordFatalCloses(t *testing.T) {
	for code, hint := range map[int]string{4014: "Message Content", 4004: "bot_token", 4013: "intents_mask", 4011: "sharding"} {
		fake := startFake(t)
		fake.CloseNextWith(code)
		err := newAdapter(t, fake, "").Run(context.Background(), &chantest.Deliverer{})
		if !errors.Is(err, channel.ErrPermanent) || !strings.Contains(err.Error(), hint) || strings.Contains(err.Error(), token) {
			t.Errorf("close %d: %v", code, err)
		}
	}
	fake := discordfake.Start("another-token")
	defer fake.Close()
	err := newAdapter(t, fake, "").Run(context.Background(), &chantest.Deliverer{})
	if !errors.Is(err, channel.ErrPermanent) || !strings.Contains(err.Error(), "bot_token") || strings.Contains(err.Error(), token) {
		t.Fatalf("bad token: %v", err)
	}
	// A close that is not fatal before any progress goes back to the supervisor, not permanent.
	fake2 := startFake(t)
	fake2.CloseNextWith(4000)
	if err := newAdapter(t, fake2, "").Run(context.Background(), &chantest.Deliverer{}); err == nil || errors.Is(err, channel.ErrPermanent) {
		t.Fatalf("close 4000: %v", err)
	}
}

// Send carries the row's key as a nonce with enforce_nonce: WasSent's resend of a sent row returns the same
// message and creates none; of a row never sent, sends it once. REST's answers map to the core's: 429 →
// RetryAfter (its retry_after), 401/403 → permanent, 5xx → retried; a reply target that is not a channel id
// never reaches REST.
func TestDiscordSendIdempotentAndErrors(t *testing.T) {
	fake := startFake(t)
	a := newAdapter(t, fake, "")
	ctx := context.Background()
	m := channel.Outbound{ReplyTarget: dm, Text: "hello", Key: "discord.default/1"}
	s1, err := a.Send(ctx, m)
	if err != nil {
		t.Fatal(err)
	}
	sent, s2, err := a.WasSent(ctx, m)
	if err != nil || !sent || s2.MessageID != s1.MessageID || len(fake.Sent()) != 1 {
		t.Fatalf("was sent: %v %v %+v, %d messages", sent, err, s2, len(fake.Sent()))
	}
	m2 := channel.Outbound{ReplyTarget: dm, Text: "never sent", Key: "discord.default/2"}
	for range 2 {
		if sent, _, err := a.WasSent(ctx, m2); err != nil || !sent {
			t.Fatalf("was sent (unsent row): %v %v", sent, err)
		}
	}
	if len(fake.Sent()) != 2 {
		t.Fatalf("%d messages", len(fake.Sent()))
	}
	fake.Inject("messages", discordfake.Fault{Status: 429, RetryAfter: 0.25}, discordfake.Fault{Status: 403},
		discordfake.Fault{Status: 500}, discordfake.Fault{Status: 502})
	var ra *channel.RetryAfter
	if _, err := a.Send(ctx, m2); !errors.As(err, &ra) || ra.After != 250*time.Millisecond {
		t.Fatalf("429: %v", err)
	}
	if _, err := a.Send(ctx, m2); !errors.Is(err, channel.ErrPermanent) {
		t.Fatalf("403: %v", err)
	}
	if _, err := a.Send(ctx, m2); err == nil || errors.Is(err, channel.ErrPermanent) || errors.As(err, &ra) {
		t.Fatalf("500: %v", err)
	}
	if sent, _, err := a.WasSent(ctx, m2); sent || err != nil {
		t.Fatalf("was sent on a 502: %v %v (want: not sent, back to the outbox)", sent, err)
	}
	if _, err := a.Send(ctx, channel.Outbound{ReplyTarget: "../users/@me", Text: "x"}); !errors.Is(err, channel.ErrPermanent) {
		t.Fatalf("path target: %v", err)
	}
	if err := a.AckApproval(ctx, channel.ApprovalAnswer{AckID: "1/2:x"}, "n"); err == nil {
		t.Fatal("a malformed interaction handle was used")
	}
	bad, _ := discord.New(channel.ID{Type: "discord", Alias: "x"}, config.DiscordConfig{BotToken: "wrong", APIBaseURL: fake.URL()}, nil, "")
	if _, err := bad.Send(ctx, m); !errors.Is(err, channel.ErrPermanent) || !strings.Contains(err.Error(), "bot_token") {
		t.Fatalf("401: %v", err)
	}
	if len(fake.Sent()) != 2 {
		t.Fatalf("%d messages after the faults", len(fake.Sent()))
	}
}

// A restarted adapter resumes the session its predecessor left on disk, and a state file made with another
// token is not used.
func TestDiscordResumesAcrossRestart(t *testing.T) {
	fake := startFake(t)
	dir := t.TempDir()
	d := &chantest.Deliverer{}
	stop := runAsync(newAdapter(t, fake, dir), d)
	chantest.WaitFor(t, "the session", fake.Caught)
	first := fake.SendText(owner, "o", dm, "", "one")
	chantest.WaitFor(t, "one", func() bool { return len(d.IDs()) == 1 })
	_ = stop()
	second := fake.SendText(owner, "o", dm, "", "two")
	stop = runAsync(newAdapter(t, fake, dir), d)
	chantest.WaitFor(t, "two", func() bool { return len(d.IDs()) == 2 })
	_ = stop()
	if got := d.IDs(); got[0] != first || got[1] != second || fake.Identifies() != 1 || fake.Resumes() != 1 {
		t.Fatalf("deliveries %v identifies %d resumes %d", got, fake.Identifies(), fake.Resumes())
	}
	other, _ := discord.New(channel.ID{Type: "discord", Alias: "default"}, config.DiscordConfig{BotToken: "other." + token, APIBaseURL: fake.URL()}, nil, dir)
	err := other.Run(context.Background(), d) // the fake refuses the token: it must have identified, not resumed
	if !errors.Is(err, channel.ErrPermanent) || !strings.Contains(err.Error(), "gateway/bot") || fake.Resumes() != 1 {
		t.Fatalf("other token: %v, resumes %d", err, fake.Resumes())
	}
}

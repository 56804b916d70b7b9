package slack_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/zeroclaw-go/zeroclaw/internal/channel"
	"github.com/zeroclaw-go/zeroclaw/internal/channel/chantest"
	"github.com/zeroclaw-go/zeroclaw/internal/channel/slack"
	"github.com/zeroclaw-go/zeroclaw/internal/channel/slack/slackfake"
	"github.com/zeroclaw-go/zeroclaw/internal/config"
)

const (
	botToken = "xoxb-1111-2222-TESTbot"
	appToken = "xapp-1-A0001-3333-TESTapp"
	owner    = "U0OWNER1"
	dm       = "D0OWNER1"
)

var fast = slack.Timings{PingEvery: 50 * time.Millisecond, PingTimeout: 200 * time.Millisecond, CallTimeout: 2 * time.Second, Reopen: 10 * time.Millisecond}

func slackConfig(fake *slackfake.Server) config.SlackConfig {
	return config.SlackConfig{Enabled: true, BotToken: botToken, AppToken: appToken, APIBaseURL: fake.URL(),
		ThreadReplies: true, ApprovalTimeoutSecs: 120}
}

// run starts a Core with one slack channel (fast clocks) against fake; owner is the allowed user.
func run(t testing.TB, sc config.SlackConfig, tr channel.Turner, dir string) (*channel.Core, func()) {
	t.Helper()
	cfg := chantest.Config(channel.ID{Type: "slack", Alias: "default"}, owner)
	cfg.Channels.Slack = map[string]config.SlackConfig{"default": sc}
	typ := slack.Type()
	typ.New = func(inst channel.Instance, deps channel.Deps) (channel.Adapter, error) {
		return slack.NewWithTimings(inst.ID, inst.Settings.(config.SlackConfig), nil, fast)
	}
	return chantest.Run(t, typ, cfg, tr, dir)
}

// A full turn with a tool approval over Socket Mode: the prompt is posted in the message's thread with buttons
// bound to the call, a stranger's press is ignored (no notice either), the owner's approves with a notice only
// they see, the answer arrives once in the thread carrying its key as metadata, and every envelope was
// acknowledged.
func TestSlackTurnWithApproval(t *testing.T) {
	fake := slackfake.Start(botToken, appToken)
	defer fake.Close()
	tr := &chantest.Turner{Fn: func(ctx context.Context, r channel.TurnRequest) (string, error) {
		d, err := r.Approve(ctx, channel.ApprovalAsk{RequestID: "c1", ToolName: "shell", Summary: "rm -rf build <!channel>"})
		if err != nil {
			return "", err
		}
		return "ran with " + d, nil
	}}
	_, stop := run(t, slackConfig(fake), tr, t.TempDir())
	defer stop()
	ts := fake.SendText(dm, owner, "clean the build", "")
	chantest.WaitFor(t, "the approval prompt", func() bool { return len(fake.Sent()) == 1 })
	prompt := fake.Sent()[0]
	if prompt.Channel != dm || prompt.ThreadTS != ts || len(prompt.Buttons) != 2 || !strings.Contains(prompt.Text, "rm -rf build") {
		t.Fatalf("prompt %+v", prompt)
	}
	if strings.Contains(prompt.Text, "<!channel>") || !strings.Contains(prompt.Text, "&lt;!channel&gt;") {
		t.Fatalf("the summary is not escaped: %q", prompt.Text)
	}
	fake.Press("U0STRANGE", dm, prompt.TS, prompt.Buttons[0].Value) // ignored, not even acknowledged
	fake.Press(owner, dm, prompt.TS, prompt.Buttons[0].Value)       // handled after the stranger's
	chantest.WaitFor(t, "the answer", func() bool { return len(fake.Sent()) == 2 })
	got := fake.Sent()[1]
	if got.Text != "ran with allow_once" || got.Channel != dm || got.ThreadTS != ts ||
		got.MetadataType != "zeroclaw_reply" || got.MetadataKey == "" {
		t.Fatalf("answer %+v", got)
	}
	chantest.WaitFor(t, "the owner's notice", func() bool { return len(fake.Ephemerals()) >= 1 })
	if e := fake.Ephemerals(); len(e) != 1 || e[0].User != owner || e[0].Text != "Approved." {
		t.Fatalf("ephemerals %+v", e)
	}
	chantest.WaitFor(t, "every envelope acknowledged", func() bool { return fake.Unacked() == 0 })
	if tr.Count("clean the build") != 1 {
		t.Fatalf("turns %d", tr.Count("clean the build"))
	}
}

// Faults on both sides (429 with Retry-After, 5xx, a disconnect asking for a refresh, a dropped socket, a
// socket that stops answering pings, redelivery of acknowledged envelopes, the one message arriving as message
// and as app_mention, a restart): every message is answered exactly once, counted against the fake's record.
func TestSlackFaultsAnsweredExactlyOnce(t *testing.T) {
	fake := slackfake.Start(botToken, appToken)
	defer fake.Close()
	tr := &chantest.Turner{}
	dir := t.TempDir()
	_, stop := run(t, slackConfig(fake), tr, dir)
	fake.Inject("chat.postMessage", slackfake.Fault{Status: 429, RetryAfter: 1}, slackfake.Fault{Status: 502})
	const n = 6
	asked := map[string]bool{}
	for i := range n {
		asked[fake.SendText(dm, owner, fmt.Sprintf("m%d", i), "")] = true
	}
	asked[fake.SendMention("C0GENERAL", owner, "in a channel")] = true
	chantest.WaitFor(t, "the answers", func() bool { return len(fake.Sent()) == n+1 })
	fake.Redeliver()
	fake.Disconnect("refresh_requested")
	chantest.WaitFor(t, "a fresh socket", func() bool { return fake.Connections() >= 2 && fake.Connected() })
	asked[fake.SendText(dm, owner, "after refresh", "")] = true
	chantest.WaitFor(t, "one more answer", func() bool { return len(fake.Sent()) == n+2 })
	conns := fake.Connections()
	fake.DropSocket()
	chantest.WaitFor(t, "a socket after the drop", func() bool { return fake.Connections() > conns && fake.Connected() })
	conns = fake.Connections()
	fake.HangSocket()
	asked[fake.SendText(dm, owner, "during the hang", "")] = true // sent on no socket: it waits for the next
	chantest.WaitFor(t, "a socket after the hang", func() bool { return fake.Connections() > conns && fake.Connected() })
	chantest.WaitFor(t, "the hang's answer", func() bool { return len(fake.Sent()) == n+3 })
	stop()
	core, stop2 := run(t, slackConfig(fake), tr, dir)
	defer stop2()
	fake.Redeliver()
	asked[fake.SendText(dm, owner, "after restart", "")] = true
	chantest.WaitFor(t, "the last answer", func() bool { return len(fake.Sent()) == n+4 })
	chantest.WaitFor(t, "the counts", func() bool { return core.Status(context.Background())[0].Counts["out:sent"] == n+4 })
	chantest.WaitFor(t, "every envelope acknowledged", func() bool { return fake.Unacked() == 0 })
	seen := map[string]int{}
	for _, m := range fake.Sent() {
		seen[m.ThreadTS]++
	}
	for ts := range asked {
		if seen[ts] != 1 {
			t.Errorf("message %s answered %d times: %+v", ts, seen[ts], fake.Sent())
		}
	}
	if len(seen) != len(asked) || tr.Count("m0") != 1 || tr.Count("<@UBOT0001> in a channel") != 1 {
		t.Fatalf("answers %v turns %v", seen, tr.Turns())
	}
}

// A stranger's message is acknowledged (Slack must not send it again) and never answered; mention_only drops a
// channel message without the bot's mention but not a direct message; channel_ids drops other conversations.
func TestSlackStrangerMentionOnlyChannelIDs(t *testing.T) {
	fake := slackfake.Start(botToken, appToken)
	defer fake.Close()
	tr := &chantest.Turner{}
	sc := slackConfig(fake)
	sc.MentionOnly, sc.ChannelIDs = true, []string{dm, "C0GENERAL"}
	_, stop := run(t, sc, tr, t.TempDir())
	defer stop()
	fake.SendText(dm, "U0STRANGE", "let me in", "")
	fake.SendText("C0GENERAL", owner, "no mention", "")
	fake.SendText("C0OTHER", owner, "<@UBOT0001> other channel", "")
	fake.SendMention("C0GENERAL", owner, "with mention")
	fake.SendText(dm, owner, "direct", "")
	chantest.WaitFor(t, "the answers", func() bool { return len(fake.Sent()) == 2 })
	chantest.WaitFor(t, "every envelope acknowledged", func() bool { return fake.Unacked() == 0 })
	time.Sleep(100 * time.Millisecond)
	var texts []string
	for _, m := range fake.Sent() {
		texts = append(texts, m.Text)
	}
	if len(texts) != 2 || !strings.Contains(strings.Join(texts, "|"), "echo: &lt;@UBOT0001&gt; with mention") ||
		!strings.Contains(strings.Join(texts, "|"), "echo: direct") {
		t.Fatalf("sent %q", texts)
	}
}

// An envelope is acknowledged only after Deliver recorded it: one the core failed to record stays
// unacknowledged and Slack sends it again, to the next connection, where it is recorded under the same id.
func TestSlackAckWaitsForTheRecord(t *testing.T) {
	fake := slackfake.Start(botToken, appToken)
	defer fake.Close()
	a, err := slack.NewWithTimings(channel.ID{Type: "slack", Alias: "default"}, slackConfig(fake), nil, fast)
	if err != nil {
		t.Fatal(err)
	}
	fake.SendText(dm, owner, "hello", "")
	d := chantest.Failing()
	if err := a.Run(context.Background(), d); err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Fatalf("run: %v", err)
	}
	if fake.Unacked() != 1 {
		t.Fatal("an envelope the core did not record was acknowledged")
	}
	d.Fail.Store(false)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- a.Run(ctx, d) }()
	chantest.WaitFor(t, "the acknowledgement", func() bool { return fake.Unacked() == 0 })
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("run after cancel: %v", err)
	}
	if len(d.IDs()) != 2 || d.IDs()[0] != d.IDs()[1] || !strings.HasPrefix(d.IDs()[0], "msg:"+dm+":") {
		t.Fatalf("deliveries %v", d.IDs())
	}
}

// Web API errors steer the core: 429 is *RetryAfter with the header's delay, a revoked token and a bad
// channel are permanent, a 5xx and a refused connection are not; a bad app token parks the channel; no error
// shows a token.
func TestSlackErrors(t *testing.T) {
	fake := slackfake.Start(botToken, appToken)
	defer fake.Close()
	a, err := slack.NewWithTimings(channel.ID{Type: "slack", Alias: "default"}, slackConfig(fake), nil, fast)
	if err != nil {
		t.Fatal(err)
	}
	out := channel.Outbound{ReplyTarget: dm, Text: "x"}
	fake.Inject("chat.postMessage", slackfake.Fault{Status: 429, RetryAfter: 7}, slackfake.Fault{Error: "token_revoked"},
		slackfake.Fault{Error: "channel_not_found"}, slackfake.Fault{Status: 503}, slackfake.Fault{Error: "internal_error"})
	var ra *channel.RetryAfter
	if _, err := a.Send(context.Background(), out); !errors.As(err, &ra) || ra.After != 7*time.Second {
		t.Fatalf("429: %v", err)
	}
	for _, want := range []bool{true, true, false, false} {
		_, err := a.Send(context.Background(), out)
		if err == nil || errors.Is(err, channel.ErrPermanent) != want || strings.Contains(err.Error(), botToken) {
			t.Fatalf("want permanent=%v, got %v", want, err)
		}
	}
	if s, err := a.Send(context.Background(), out); err != nil || s.MessageID == "" {
		t.Fatalf("send after the faults: %v %+v", s, err)
	}
	dead, _ := slack.NewWithTimings(channel.ID{Type: "slack", Alias: "x"}, config.SlackConfig{BotToken: botToken, AppToken: appToken,
		APIBaseURL: "http://127.0.0.1:1/api"}, nil, fast)
	if _, err := dead.Send(context.Background(), out); err == nil || errors.Is(err, channel.ErrPermanent) || strings.Contains(err.Error(), botToken) {
		t.Fatalf("refused connection: %v", err)
	}

	bad := slackConfig(fake)
	bad.AppToken = "xapp-wrong"
	core, stop := run(t, bad, &chantest.Turner{}, t.TempDir())
	defer stop()
	chantest.WaitFor(t, "parked", func() bool {
		st := core.Status(context.Background())
		return len(st) == 1 && st[0].State == channel.StateParked
	})
	st := core.Status(context.Background())[0]
	if strings.Contains(st.LastError, "xapp-wrong") || !strings.Contains(st.LastError, "invalid_auth") {
		t.Fatalf("last error %q", st.LastError)
	}
	opens := fake.Calls("apps.connections.open")
	time.Sleep(50 * time.Millisecond)
	if fake.Calls("apps.connections.open") != opens {
		t.Fatal("a parked channel kept connecting")
	}
	if _, err := slack.New(channel.ID{Type: "slack", Alias: "y"}, config.SlackConfig{BotToken: botToken}, nil); !errors.Is(err, channel.ErrPermanent) {
		t.Fatalf("no app token: %v", err)
	}
}

// Tokens fall back to the environment, ZEROCLAW_SLACK_* before SLACK_*.
func TestSlackTokensFromEnvironment(t *testing.T) {
	fake := slackfake.Start(botToken, appToken)
	defer fake.Close()
	t.Setenv("ZEROCLAW_SLACK_BOT_TOKEN", botToken)
	t.Setenv("SLACK_BOT_TOKEN", "xoxb-not-this-one")
	t.Setenv("ZEROCLAW_SLACK_APP_TOKEN", "")
	t.Setenv("SLACK_APP_TOKEN", appToken)
	a, err := slack.NewWithTimings(channel.ID{Type: "slack", Alias: "env"}, config.SlackConfig{APIBaseURL: fake.URL()}, nil, fast)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Send(context.Background(), channel.Outbound{ReplyTarget: dm, Text: "x"}); err != nil {
		t.Fatalf("bot token from ZEROCLAW_SLACK_BOT_TOKEN: %v", err)
	}
	fake.SendText(dm, owner, "hi", "")
	d := &chantest.Deliverer{}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- a.Run(ctx, d) }()
	chantest.WaitFor(t, "the socket (app token from SLACK_APP_TOKEN)", func() bool { return fake.Unacked() == 0 })
	cancel()
	<-done
}

// WasSent finds a reply by the metadata key it carried, in the thread or the channel after the message it
// answers, across pages; a key never sent is reported not sent, and a reply without an anchor is unknown.
func TestSlackWasSent(t *testing.T) {
	fake := slackfake.Start(botToken, appToken)
	defer fake.Close()
	a, err := slack.NewWithTimings(channel.ID{Type: "slack", Alias: "default"}, slackConfig(fake), nil, fast)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	anchor := fake.SendText("C0GENERAL", owner, "question", "")
	inThread := channel.Outbound{ReplyTarget: "C0GENERAL", Thread: anchor, ReplyTo: anchor, Text: "answer", Key: "slack.default/7"}
	s, err := a.Send(ctx, inThread)
	if err != nil {
		t.Fatal(err)
	}
	if ok, got, err := a.WasSent(ctx, inThread); err != nil || !ok || got.MessageID != s.MessageID {
		t.Fatalf("threaded reply: %v %+v %v", ok, got, err)
	}
	other := inThread
	other.Key = "slack.default/8"
	if ok, _, err := a.WasSent(ctx, other); err != nil || ok {
		t.Fatalf("a reply never sent: %v %v", ok, err)
	}
	// Top level (no thread replies): 250 messages after the anchor put the reply on the second page.
	top, _ := slack.NewWithTimings(channel.ID{Type: "slack", Alias: "default"}, config.SlackConfig{BotToken: botToken,
		AppToken: appToken, APIBaseURL: fake.URL()}, nil, fast)
	anchor2 := fake.SendText("C0BUSY", owner, "question", "")
	m := channel.Outbound{ReplyTarget: "C0BUSY", Thread: anchor2, ReplyTo: anchor2, Text: "answer", Key: "slack.default/9"}
	if _, err := top.Send(ctx, m); err != nil {
		t.Fatal(err)
	}
	for i := range 250 {
		fake.SendText("C0BUSY", owner, fmt.Sprint("chatter ", i), "")
	}
	if ok, _, err := top.WasSent(ctx, m); err != nil || !ok {
		t.Fatalf("top-level reply on page two: %v %v", ok, err)
	}
	if fake.Calls("conversations.history") < 2 {
		t.Fatalf("history read in %d pages", fake.Calls("conversations.history"))
	}
	m.ReplyTo = ""
	if _, _, err := top.WasSent(ctx, m); err == nil {
		t.Fatal("a reply without an anchor was reported")
	}
}

// A hostile edge: an oversized frame ends the connection (the adapter holds at most 1 MiB) and a new one is
// opened; odd frames (not JSON, no envelope id, a stranger-shaped event with ids that are not Slack's, a
// block action whose value is no approval) are skipped or acknowledged and dropped; the next message is still
// answered exactly once. disconnect link_disabled parks the channel.
func TestSlackHostileFrames(t *testing.T) {
	fake := slackfake.Start(botToken, appToken)
	defer fake.Close()
	tr := &chantest.Turner{}
	core, stop := run(t, slackConfig(fake), tr, t.TempDir())
	defer stop()
	chantest.WaitFor(t, "the socket", fake.Connected)
	conns := fake.Connections()
	for _, f := range []string{`not json`, `{"type":"events_api"}`, `{"envelope_id":"x1","type":"events_api","payload":{"type":"event_callback","event":{"type":"message","channel":"D../../x","user":"U1 OR 1","text":"hi","ts":"1.2"}}}`,
		`{"envelope_id":"x2","type":"interactive","payload":{"type":"block_actions","user":{"id":"` + owner + `"},"channel":{"id":"` + dm + `"},"container":{"message_ts":"1.2"},"actions":[{"value":"zc:tok:yes"}]}}`,
		`{"envelope_id":"x3","type":"slash_commands","payload":{"command":"/x"}}`} {
		if !fake.SendRaw([]byte(f)) {
			t.Fatal("no socket")
		}
	}
	big := `{"type":"events_api","envelope_id":"big","payload":"` + strings.Repeat("A", 2<<20) + `"}`
	fake.SendRaw([]byte(big))
	chantest.WaitFor(t, "a new socket after the oversized frame", func() bool { return fake.Connections() > conns && fake.Connected() })
	ts := fake.SendText(dm, owner, "still here", "")
	chantest.WaitFor(t, "the answer", func() bool { return len(fake.Sent()) == 1 })
	if m := fake.Sent()[0]; m.ThreadTS != ts || m.Text != "echo: still here" {
		t.Fatalf("sent %+v", m)
	}
	known, stray := fake.Acks()
	// x1, x2 and x3 are acknowledged and dropped (so Slack stops sending them); the frames without an envelope id
	// and the oversized one are not.
	if stray != 3 || known != 1 {
		t.Fatalf("acks: %d of the fake's envelopes, %d of the raw frames", known, stray)
	}
	if c := core.Status(context.Background())[0].Counts; c["event:received"]+c["event:answered"] != 1 {
		t.Fatalf("counts %v: an odd frame was recorded", c)
	}
	fake.Disconnect("link_disabled")
	chantest.WaitFor(t, "parked", func() bool { return core.Status(context.Background())[0].State == channel.StateParked })
}

// thread_replies = false: answers go to the conversation itself (no thread_ts), also for a message written in
// a thread, and WasSent then reads the conversation's history.
func TestSlackTopLevelReplies(t *testing.T) {
	fake := slackfake.Start(botToken, appToken)
	defer fake.Close()
	sc := slackConfig(fake)
	sc.ThreadReplies = false
	_, stop := run(t, sc, &chantest.Turner{}, t.TempDir())
	defer stop()
	root := fake.SendText("C0GENERAL", owner, "top", "")
	fake.SendText("C0GENERAL", owner, "in a thread", root)
	chantest.WaitFor(t, "the answers", func() bool { return len(fake.Sent()) == 2 })
	for _, m := range fake.Sent() {
		if m.ThreadTS != "" || m.Channel != "C0GENERAL" {
			t.Fatalf("a reply in a thread although thread_replies = false: %+v", m)
		}
	}
	a, _ := slack.NewWithTimings(channel.ID{Type: "slack", Alias: "default"}, sc, nil, fast)
	m := fake.Sent()[1]
	ok, s, err := a.WasSent(context.Background(), channel.Outbound{ReplyTarget: "C0GENERAL", Thread: root, ReplyTo: root, Key: m.MetadataKey})
	if err != nil || !ok || s.MessageID != m.TS || fake.Calls("conversations.replies") != 0 {
		t.Fatalf("WasSent %v %+v %v (replies read %d times)", ok, s, err, fake.Calls("conversations.replies"))
	}
}

// The socket url's ticket is a credential for one connection: a failed dial says what failed, never the ticket.
func TestSlackDialErrorHidesTicket(t *testing.T) {
	fake := slackfake.Start(botToken, appToken)
	defer fake.Close()
	fake.Inject("apps.connections.open", slackfake.Fault{URL: "ws://127.0.0.1:1/link/?ticket=SECRET-TICKET&app_id=A1"})
	a, _ := slack.NewWithTimings(channel.ID{Type: "slack", Alias: "default"}, slackConfig(fake), nil, fast)
	err := a.Run(context.Background(), &chantest.Deliverer{})
	if err == nil || strings.Contains(err.Error(), "SECRET-TICKET") || !strings.Contains(err.Error(), "socket mode connection failed") {
		t.Fatalf("run: %v", err)
	}
}

package irc

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zeroclaw-go/zeroclaw/internal/clock/clocktest"
)

type inbox struct {
	mu  sync.Mutex
	got []Inbound
	ch  chan Inbound
}

func newInbox() *inbox { return &inbox{ch: make(chan Inbound, 64)} }

func (b *inbox) deliver(_ context.Context, in Inbound) {
	b.mu.Lock()
	b.got = append(b.got, in)
	b.mu.Unlock()
	b.ch <- in
}

func (b *inbox) next(t *testing.T) Inbound {
	t.Helper()
	select {
	case in := <-b.ch:
		return in
	case <-time.After(20 * time.Second):
		t.Fatal("no inbound message")
	}
	return Inbound{}
}

func runClient(t *testing.T, o Options) (*Client, *inbox) {
	t.Helper()
	c, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	b := newInbox()
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- c.Run(ctx, b.deliver) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	})
	waitFor(t, "registered", func() bool { return c.State().Connected })
	return c, b
}

func mark(t *testing.T, c *Client, target string) {
	t.Helper()
	if _, err := c.Send(t.Context(), target, "MARK"); err != nil {
		t.Fatal(err)
	}
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting: %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestClientChannelAndDirectMessagesThroughNgircd(t *testing.T) {
	srv := startNgircd(t)
	c, b := runClient(t, Options{Addr: srv.addr(), Nick: "zcbot", Channels: []string{"#zc"}})
	owner := dialUser(t, srv.addr(), "alice", "#zc")
	// The bot joined before alice asked; wait until the server shows it in the channel.
	owner.send("NAMES #zc")
	names := owner.expect(func(m Message) bool { return m.Command == "353" })
	if !strings.Contains(names.Param(len(names.Params)-1), "zcbot") {
		t.Fatalf("bot not in #zc: %v", names.Params)
	}

	owner.send("PRIVMSG #zc :hello bot")
	in := b.next(t)
	if in.Nick != "alice" || in.Target != "#zc" || in.ReplyTo != "#zc" || in.Text != "hello bot" {
		t.Fatalf("channel message: %+v", in)
	}
	if _, err := c.Send(t.Context(), in.ReplyTo, "hi alice"); err != nil {
		t.Fatal(err)
	}
	mark(t, c, "#zc")
	if got := owner.privmsgsUntil("zcbot", "MARK"); len(got) != 1 || got[0] != "hi alice" {
		t.Fatalf("alice saw %q", got)
	}

	owner.send("PRIVMSG zcbot :secret question")
	in = b.next(t)
	if in.Target != "zcbot" || in.ReplyTo != "alice" {
		t.Fatalf("direct message routed to %q (reply to %q)", in.Target, in.ReplyTo)
	}
}

func TestClientSplitsLongRepliesWithinTheLineLimit(t *testing.T) {
	srv := startNgircd(t)
	c, _ := runClient(t, Options{Addr: srv.addr(), Nick: "zcbot"})
	owner := dialUser(t, srv.addr(), "alice")
	words := strings.Repeat("déjà-vu ", 250) // 2250 bytes, multi-byte runes
	text := strings.TrimSpace(words) + "\nsecond line\r\nPRIVMSG #evil :injected"
	if _, err := c.Send(t.Context(), "alice", text); err != nil {
		t.Fatal(err)
	}
	mark(t, c, "alice")
	got := owner.privmsgsUntil("zcbot", "MARK")
	if len(got) < 5 {
		t.Fatalf("a 2 KiB reply came in %d lines", len(got))
	}
	var joined []string
	for _, l := range got {
		// The relayed line as alice's client received it, prefix included, is within the limit.
		wire := ":zcbot!~zcbot@localhost PRIVMSG alice :" + l + "\r\n"
		if len(wire) > MaxLine {
			t.Fatalf("a relayed line is %d bytes: %q", len(wire), wire)
		}
		joined = append(joined, l)
	}
	if last := got[len(got)-1]; last != "PRIVMSG #evil :injected" {
		t.Fatalf("a line of the reply became its own command or was lost: last %q", last)
	}
	if !strings.HasPrefix(strings.Join(joined, " "), strings.TrimSpace(words)) {
		t.Fatal("the split reply does not read back as the text")
	}
}

func TestClientReconnectsAfterServerRestartWithoutSpinning(t *testing.T) {
	srv := startNgircd(t)
	clk := clocktest.New(time.Unix(1_700_000_000, 0))
	c, b := runClient(t, Options{Addr: srv.addr(), Nick: "zcbot", Channels: []string{"#zc"}, Clock: clk})
	srv.stop()
	waitFor(t, "disconnected", func() bool { return !c.State().Connected })
	if !clk.WaitTimer(minBackoff, 20*time.Second) {
		t.Fatal("no backoff timer after the connection was lost")
	}
	clk.Advance(minBackoff) // the server is still down: this dial fails
	if !clk.WaitTimer(2*minBackoff, 20*time.Second) {
		t.Fatal("the backoff did not double after a failed dial")
	}
	dials := c.State().Dials
	time.Sleep(200 * time.Millisecond) // real time passes, the manual clock does not: no dial may happen
	if d := c.State().Dials; d != dials || d != 2 {
		t.Fatalf("dials while waiting out the backoff: %d then %d (want 2: no spin)", dials, d)
	}
	srv.start()
	clk.Advance(2 * minBackoff)
	waitFor(t, "reconnected", func() bool { return c.State().Connected })
	if st := c.State(); st.Connects != 2 {
		t.Fatalf("connects = %d, want 2", st.Connects)
	}
	owner := dialUser(t, srv.addr(), "alice", "#zc")
	waitFor(t, "bot rejoined", func() bool {
		owner.send("NAMES #zc")
		m := owner.expect(func(m Message) bool { return m.Command == "353" || m.Command == "366" })
		return m.Command == "353" && strings.Contains(m.Param(len(m.Params)-1), "zcbot")
	})
	owner.send("PRIVMSG #zc :after restart")
	if in := b.next(t); in.Text != "after restart" {
		t.Fatalf("after the restart: %+v", in)
	}
}

func TestClientDropsAConnectionThatStopsAnswering(t *testing.T) {
	srv := startNgircd(t)
	clk := clocktest.New(time.Unix(1_700_000_000, 0))
	// A short PingEvery: the server goes silent (SIGSTOP), our PING goes unanswered, the link is dropped.
	c, _ := runClient(t, Options{Addr: srv.addr(), Nick: "zcbot", Clock: clk, PingEvery: 300 * time.Millisecond})
	if err := srv.cmd.Process.Signal(stopSignal); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = srv.cmd.Process.Signal(contSignal) }()
	waitFor(t, "a silent server judged dead", func() bool { return !c.State().Connected })
	if e := c.State().LastError; !strings.Contains(e, "no answer to our PING") {
		t.Fatalf("last error %q", e)
	}
}

func TestNewRefusesBadNamesAndSendRefusesBadTargets(t *testing.T) {
	for _, o := range []Options{{Addr: "x:1", Nick: ""}, {Addr: "x:1", Nick: "a b"}, {Addr: "x:1", Nick: "ok", Channels: []string{"#a,#b"}}, {Nick: "ok"}} {
		if _, err := New(o); err == nil {
			t.Errorf("New(%+v) accepted", o)
		}
	}
	c, err := New(Options{Addr: "127.0.0.1:1", Nick: "ok"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Send(t.Context(), "#a\r\nQUIT", "x"); err == nil {
		t.Fatal("a target with CR LF was accepted")
	}
	if _, err := c.Send(t.Context(), "bob", "x"); err != ErrNotConnected {
		t.Fatalf("send before connecting: %v", err)
	}
}

package irc

import (
	"context"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zeroclaw-go/zeroclaw/internal/channel"
	"github.com/zeroclaw-go/zeroclaw/internal/config"
)

// core stands in for the channel core: it records every event and counts Progress calls.
type core struct {
	mu       sync.Mutex
	progress int
	got      chan channel.Inbound
}

func (c *core) Deliver(_ context.Context, ev channel.Inbound) error { c.got <- ev; return nil }
func (c *core) Progress()                                           { c.mu.Lock(); c.progress++; c.mu.Unlock() }

func (c *core) next(t *testing.T) channel.Inbound {
	t.Helper()
	select {
	case ev := <-c.got:
		return ev
	case <-time.After(20 * time.Second):
		t.Fatal("no event reached the core")
	}
	return channel.Inbound{}
}

func adapterFor(t *testing.T, srv *ngircd, mentionOnly bool) (*Adapter, *core) {
	t.Helper()
	host, port, _ := net.SplitHostPort(srv.addr())
	p, _ := strconv.Atoi(port)
	a, err := NewAdapter(channel.ID{Type: "irc", Alias: "libera"}, config.IRCConfig{Enabled: true, Server: host, Port: p,
		Nickname: "zcbot", Channels: []string{"#zc"}, MentionOnly: mentionOnly}, nil)
	if err != nil {
		t.Fatal(err)
	}
	d := &core{got: make(chan channel.Inbound, 16)}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- a.Run(ctx, d) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	})
	waitFor(t, "registered", func() bool { return a.State().Connected })
	return a, d
}

func TestAdapterTurnWithApprovalThroughNgircd(t *testing.T) {
	srv := startNgircd(t)
	a, d := adapterFor(t, srv, false)
	alice := dialUser(t, srv.addr(), "alice")

	alice.send("PRIVMSG zcbot :run ls please")
	ev := d.next(t)
	if ev.Kind != channel.KindMessage || ev.Sender != "alice" || ev.ReplyTarget != "alice" || ev.Group || ev.Text != "run ls please" || ev.EventID == "" {
		t.Fatalf("event: %+v", ev)
	}
	if _, err := a.Prompt(t.Context(), channel.ApprovalPrompt{ReplyTarget: "alice", Token: "t-42", Text: "shell: ls"}); err != nil {
		t.Fatal(err)
	}
	alice.send("PRIVMSG zcbot :yes t-42")
	ans := d.next(t)
	if ans.Kind != channel.KindApproval || ans.Approval == nil || ans.Approval.Token != "t-42" || ans.Approval.Decision != "allow_once" || ans.EventID == ev.EventID {
		t.Fatalf("approval: %+v", ans)
	}
	if err := a.AckApproval(t.Context(), *ans.Approval, "approved"); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Send(t.Context(), channel.Outbound{ReplyTarget: "alice", Text: "a.txt\nb.txt"}); err != nil {
		t.Fatal(err)
	}
	mark(t, a.client, "alice")
	got := alice.privmsgsUntil("zcbot", "MARK")
	if len(got) != 5 || got[0] != "Approval needed: shell: ls" || !strings.HasPrefix(got[1], "Reply \"yes t-42\"") || got[2] != "approved" || got[3] != "a.txt" || got[4] != "b.txt" {
		t.Fatalf("alice saw %q", got)
	}
	d.mu.Lock()
	progress := d.progress
	d.mu.Unlock()
	if progress == 0 {
		t.Fatal("no progress reported for the server's lines")
	}
}

func TestAdapterMentionOnlyInChannels(t *testing.T) {
	srv := startNgircd(t)
	_, d := adapterFor(t, srv, true)
	bob := dialUser(t, srv.addr(), "bob", "#zc")
	bob.send("PRIVMSG #zc :just chatting, zcbotty is not me")
	bob.send("PRIVMSG #zc :zcbot: what time is it")
	ev := d.next(t)
	if ev.Text != "what time is it" || !ev.Group || ev.ReplyTarget != "#zc" {
		t.Fatalf("event: %+v", ev)
	}
	bob.send("PRIVMSG zcbot :a direct message needs no mention")
	if ev := d.next(t); ev.Text != "a direct message needs no mention" {
		t.Fatalf("dm: %+v", ev)
	}
}

func TestMentions(t *testing.T) {
	for text, want := range map[string]bool{"zcbot: hi": true, "hi ZCBOT": true, "zcbotty": false, "xzcbot": false, "(zcbot)": true} {
		if mentions(text, "zcbot") != want {
			t.Errorf("mentions(%q) != %v", text, want)
		}
	}
}

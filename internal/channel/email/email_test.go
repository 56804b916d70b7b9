package email

import (
	"context"
	"errors"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zeroclaw-go/zeroclaw/internal/channel"
	"github.com/zeroclaw-go/zeroclaw/internal/channel/email/mailtest"
	"github.com/zeroclaw-go/zeroclaw/internal/config"
)

// core stands in for the channel core: events recorded by EventID (its UNIQUE key), every call counted. With
// crashAfterRecord set, the next Deliver records the event and then fails, as a daemon killed between its
// commit and the adapter's \Seen would look to the mailbox.
type core struct {
	mu               sync.Mutex
	calls            int
	events           map[string]channel.Inbound
	crashAfterRecord bool
	got              chan channel.Inbound
}

func newCore() *core {
	return &core{events: map[string]channel.Inbound{}, got: make(chan channel.Inbound, 32)}
}

func (c *core) Deliver(_ context.Context, ev channel.Inbound) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.calls++
	if _, dup := c.events[ev.EventID]; !dup {
		c.events[ev.EventID] = ev
		c.got <- ev
	}
	if c.crashAfterRecord {
		c.crashAfterRecord = false
		return errors.New("killed")
	}
	return nil
}

func (c *core) Progress() {}

func (c *core) next(t *testing.T) channel.Inbound {
	t.Helper()
	select {
	case ev := <-c.got:
		return ev
	case <-time.After(30 * time.Second):
		t.Fatal("no mail reached the core")
	}
	return channel.Inbound{}
}

func (c *core) stats() (int, int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.calls, len(c.events)
}

func botConfig(s *mailtest.Servers) config.EmailConfig {
	return config.EmailConfig{Enabled: true, IMAPHost: "127.0.0.1", IMAPPort: s.IMAPPort, IMAPFolder: "INBOX",
		SMTPHost: "127.0.0.1", SMTPPort: s.SMTPPort, Username: "bot@example.com", Password: "bot-imap-pw",
		FromAddress: "Zeroclaw <bot@example.com>", IdleTimeoutSecs: 30, PollIntervalSecs: 1, DefaultSubject: "Re: Message"}
}

func run(t *testing.T, a *Adapter, d channel.Deliverer) (done <-chan struct{}, stop func() error) {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	ch := make(chan struct{})
	var err error
	go func() { err = a.Run(ctx, d); close(ch) }()
	stop = func() error { cancel(); <-ch; return err }
	t.Cleanup(func() { _ = stop() })
	return ch, stop
}

func waitMail(t *testing.T, s *mailtest.Servers, user, pass string, n int) []mailtest.Stored {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		got := s.Mailbox(user, pass)
		if len(got) >= n {
			return got
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s has %d messages, want %d", user, len(got), n)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func TestMailTurnWithApprovalThroughDovecotAndOpenSMTPD(t *testing.T) {
	s := mailtest.Start(t)
	a, err := New(channel.ID{Type: "email", Alias: "work"}, botConfig(s), nil)
	if err != nil {
		t.Fatal(err)
	}
	d := newCore()
	run(t, a, d)
	s.Send("alice@example.com", "bot@example.com", "From: Alice <alice@example.com>\nTo: bot@example.com\nSubject: files\nMessage-ID: <m1@example.com>\n\nplease list my files\n")
	ev := d.next(t)
	if ev.EventID != "m1@example.com" || ev.Sender != "alice@example.com" || ev.ReplyTarget != "alice@example.com" || ev.Text != "please list my files" {
		t.Fatalf("event %+v", ev)
	}
	// \Seen is set once the core has it.
	waitFor(t, "the mail marked seen", func() bool { m := s.Mailbox("bot@example.com", "bot-imap-pw"); return len(m) == 1 && m[0].Seen })

	if _, err := a.Prompt(t.Context(), channel.ApprovalPrompt{ReplyTarget: "alice@example.com", Token: "0123456789abcdef01234567", Text: "shell: ls"}); err != nil {
		t.Fatal(err)
	}
	prompt := waitMail(t, s, "alice@example.com", "alicepw", 1)[0].Raw
	tok := regexp.MustCompile(`"yes ([0-9a-f]+)"`).FindStringSubmatch(prompt)
	if tok == nil || tok[1] != "0123456789abcdef01234567" || !strings.Contains(prompt, "shell: ls") {
		t.Fatalf("prompt mail:\n%s", prompt)
	}
	s.Send("alice@example.com", "bot@example.com", "From: alice@example.com\nTo: bot@example.com\nSubject: Re: Approval needed\nMessage-ID: <m2@example.com>\n\nyes "+tok[1]+"\n\n> quoted prompt\n")
	ans := d.next(t)
	if ans.Kind != channel.KindApproval || ans.Approval.Token != tok[1] || ans.Approval.Decision != "allow_once" || ans.Approval.AckID != "alice@example.com" {
		t.Fatalf("approval %+v", ans)
	}
	if _, err := a.Send(t.Context(), channel.Outbound{ReplyTarget: "alice@example.com", ReplyTo: "m1@example.com", Text: "a.txt\n.\nb.txt", Key: "telegram-ish/1"}); err != nil {
		t.Fatal(err)
	}
	reply := waitMail(t, s, "alice@example.com", "alicepw", 2)[1].Raw
	for _, want := range []string{"Subject: Re: files", "In-Reply-To: <m1@example.com>", "Auto-Submitted: auto-replied", "a.txt\r\n.\r\nb.txt"} {
		if !strings.Contains(reply, want) {
			t.Fatalf("reply lacks %q:\n%s", want, reply)
		}
	}
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// A daemon that recorded a mail but died before \Seen reads it again after the restart: the same Message-ID
// reaches the core, which has it, and only then is it marked; the mail is one event.
func TestMailNotMarkedSeenUntilRecordedAndRecordedOnce(t *testing.T) {
	s := mailtest.Start(t)
	a, err := New(channel.ID{Type: "email", Alias: "work"}, botConfig(s), nil)
	if err != nil {
		t.Fatal(err)
	}
	d := newCore()
	d.crashAfterRecord = true
	done, first := run(t, a, d)
	s.Send("alice@example.com", "bot@example.com", "From: alice@example.com\nTo: bot@example.com\nSubject: q\nMessage-ID: <once@example.com>\n\nhello\n")
	d.next(t)
	<-done
	if err := first(); err == nil || !strings.Contains(err.Error(), "did not record") {
		t.Fatalf("Run after a failed Deliver: %v", err)
	}
	if m := s.Mailbox("bot@example.com", "bot-imap-pw"); len(m) != 1 || m[0].Seen {
		t.Fatalf("the mail was marked seen though the core failed: %+v", m)
	}
	_, stop := run(t, a, d)
	waitFor(t, "the mail marked seen after the restart", func() bool { m := s.Mailbox("bot@example.com", "bot-imap-pw"); return len(m) == 1 && m[0].Seen })
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	if calls, events := d.stats(); calls != 2 || events != 1 {
		t.Fatalf("calls %d events %d, want the redelivery (2 calls) recorded once", calls, events)
	}
}

// Automatic mail and our own are never handed to the agent (two robots must not loop), but are marked read.
func TestAutomaticAndOwnMailNotAnswered(t *testing.T) {
	s := mailtest.Start(t)
	a, err := New(channel.ID{Type: "email", Alias: "work"}, botConfig(s), nil)
	if err != nil {
		t.Fatal(err)
	}
	d := newCore()
	run(t, a, d)
	s.Send("alice@example.com", "bot@example.com", "From: alice@example.com\nTo: bot@example.com\nSubject: Out of office\nAuto-Submitted: auto-replied\nMessage-ID: <ooo@example.com>\n\naway\n")
	s.Send("bot@example.com", "bot@example.com", "From: bot@example.com\nTo: bot@example.com\nSubject: echo\nMessage-ID: <own@example.com>\n\nmine\n")
	s.Send("MAILER-DAEMON@example.com", "bot@example.com", "From: MAILER-DAEMON@example.com\nTo: bot@example.com\nSubject: failure\nMessage-ID: <bounce@example.com>\n\nbounced\n")
	s.Send("alice@example.com", "bot@example.com", "From: alice@example.com\nTo: bot@example.com\nSubject: real\nMessage-ID: <real@example.com>\n\na real question\n")
	waitFor(t, "all four read", func() bool {
		m := s.Mailbox("bot@example.com", "bot-imap-pw")
		seen := 0
		for _, x := range m {
			if x.Seen {
				seen++
			}
		}
		return seen == 4
	})
	if ev := d.next(t); ev.EventID != "real@example.com" {
		t.Fatalf("first event %+v", ev)
	}
	if calls, _ := d.stats(); calls != 1 {
		t.Fatalf("%d mails reached the core, want only the real one", calls)
	}
}

// A restarted IMAP server ends Run with an error (the core's supervisor backs off and runs it again); the
// next Run reads mail that arrived meanwhile.
func TestIMAPRestartEndsRunAndTheNextRunCatchesUp(t *testing.T) {
	s := mailtest.Start(t)
	a, err := New(channel.ID{Type: "email", Alias: "work"}, botConfig(s), nil)
	if err != nil {
		t.Fatal(err)
	}
	d := newCore()
	done, first := run(t, a, d)
	waitFor(t, "the IMAP login", func() bool { return strings.Contains(s.Log(), "Login: user=<bot@example.com>") })
	s.StopDovecot()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("a stopped IMAP server did not end Run")
	}
	if err := first(); err == nil {
		t.Fatal("Run returned nil for a lost server")
	}
	s.Send("alice@example.com", "bot@example.com", "From: alice@example.com\nTo: bot@example.com\nSubject: q\nMessage-ID: <while-down@example.com>\n\nare you there\n")
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	err = a.Run(ctx, d) // one dial, refused: no loop inside the adapter
	cancel()
	if err == nil || !strings.Contains(err.Error(), "connect") {
		t.Fatalf("Run while the server is down: %v", err)
	}
	s.StartDovecot()
	run(t, a, d)
	if ev := d.next(t); ev.EventID != "while-down@example.com" {
		t.Fatalf("after the restart: %+v", ev)
	}
}

package main

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/emersion/go-imap/v2"
	"github.com/emersion/go-imap/v2/imapclient"

	"github.com/zeroclaw-go/zeroclaw/internal/channel/email/mailtest"
)

// The email row: a mail submitted over SMTP to the real OpenSMTPD, delivered by dovecot-lda into the bot's
// Maildir, seen by the daemon in IMAP IDLE on the real Dovecot, recorded, answered → the first byte the daemon
// writes on its SMTP connection for the reply. The daemon's smtp_port is a loopback proxy in front of
// OpenSMTPD that notes when the first byte of each connection's client side arrives. Floor: the same servers
// and path with a bare client: IDLE on another user's INBOX, FETCH of the new mail, then an SMTP connection
// through the same proxy (greeting read, EHLO written).

// firstByteProxy forwards loopback TCP connections to target and keeps, per connection, when the client's first
// byte came.
type firstByteProxy struct {
	ln     net.Listener
	target string
	mu     sync.Mutex
	firsts []time.Time
	wake   chan struct{}
}

func startFirstByteProxy(target string) (*firstByteProxy, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p := &firstByteProxy{ln: ln, target: target, wake: make(chan struct{})}
	go p.accept()
	return p, nil
}

func (p *firstByteProxy) port() int { return p.ln.Addr().(*net.TCPAddr).Port }

func (p *firstByteProxy) close() { p.ln.Close() }

func (p *firstByteProxy) accept() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		go p.forward(c)
	}
}

func (p *firstByteProxy) forward(c net.Conn) {
	defer c.Close()
	up, err := net.Dial("tcp", p.target)
	if err != nil {
		return
	}
	defer up.Close()
	go func() { _, _ = io.Copy(c, up); c.Close() }()
	buf := make([]byte, 32<<10)
	n, err := c.Read(buf)
	if n > 0 {
		p.mu.Lock()
		p.firsts = append(p.firsts, time.Now())
		close(p.wake)
		p.wake = make(chan struct{})
		p.mu.Unlock()
		if _, werr := up.Write(buf[:n]); werr != nil {
			return
		}
	}
	if err == nil {
		_, _ = io.Copy(up, c)
	}
}

// next waits for the first byte of a connection after the first `after` ones and returns when it came.
func (p *firstByteProxy) next(after int, within time.Duration) (time.Time, error) {
	deadline := time.NewTimer(within)
	defer deadline.Stop()
	for {
		p.mu.Lock()
		n, wake := len(p.firsts), p.wake
		var at time.Time
		if n > after {
			at = p.firsts[after]
		}
		p.mu.Unlock()
		if n > after {
			return at, nil
		}
		select {
		case <-wake:
		case <-deadline.C:
			return time.Time{}, fmt.Errorf("no SMTP connection wrote a byte within %s", within)
		}
	}
}

func (p *firstByteProxy) count() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.firsts)
}

// shimTB lets zcbench run mailtest (which takes a testing.TB) outside a test: it provides the methods mailtest
// calls; Fatal ends the section with an error by a panic that email() recovers. The embedded TB is nil: a
// method mailtest started to call that is not here panics, which email() reports too.
type shimTB struct {
	testing.TB
	root     string
	n        int
	cleanups []func()
	failed   bool
}

type shimFatal struct{ msg string }

func (s *shimTB) Helper() {}
func (s *shimTB) Fatal(args ...any) {
	s.failed = true
	panic(shimFatal{fmt.Sprint(args...)})
}
func (s *shimTB) Fatalf(format string, args ...any) {
	s.failed = true
	panic(shimFatal{fmt.Sprintf(format, args...)})
}
func (s *shimTB) Logf(string, ...any) {}
func (s *shimTB) Failed() bool        { return s.failed }
func (s *shimTB) Cleanup(f func())    { s.cleanups = append(s.cleanups, f) }
func (s *shimTB) TempDir() string {
	s.n++
	dir := fmt.Sprintf("%s/%03d", s.root, s.n)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		s.Fatal(err)
	}
	return dir
}

func (s *shimTB) cleanup() {
	for i := len(s.cleanups) - 1; i >= 0; i-- {
		s.cleanups[i]()
	}
	_ = os.RemoveAll(s.root)
}

// mailServers starts the real Dovecot and OpenSMTPD (mailtest: it needs root, for OpenSMTPD's private mount
// namespace) and the first-byte proxy in front of OpenSMTPD.
func (r *chanBench) mailServers() (err error) {
	if os.Geteuid() != 0 {
		return nil // email() marks the row n/a
	}
	root, err := os.MkdirTemp("", "zcb-mail")
	if err != nil {
		return err
	}
	tb := &shimTB{root: root}
	r.stop = append(r.stop, tb.cleanup)
	defer func() {
		if v := recover(); v != nil {
			f, ok := v.(shimFatal)
			if !ok {
				panic(v)
			}
			err = fmt.Errorf("mail servers: %s", f.msg)
		}
	}()
	r.mail = mailtest.Start(tb)
	if r.smtpProxy, err = startFirstByteProxy(fmt.Sprintf("127.0.0.1:%d", r.mail.SMTPPort)); err != nil {
		return err
	}
	r.stop = append(r.stop, r.smtpProxy.close)
	return nil
}

func emailTOML(imapPort, smtpPort int) string {
	return fmt.Sprintf("[channels.email.work]\nenabled = true\nimap_host = \"127.0.0.1\"\nimap_port = %d\nimap_tls = false\n"+
		"smtp_host = \"127.0.0.1\"\nsmtp_port = %d\nsmtp_tls = false\nusername = \"bot@example.com\"\npassword = \"bot-imap-pw\"\n"+
		"from_address = \"bot@example.com\"\nidle_timeout_secs = 300\n\n"+
		"[peer_groups.mail]\nchannel = \"email\"\nagents = [\"default\"]\nexternal_peers = [\"alice@example.com\"]\n\n", imapPort, smtpPort)
}

func (r *chanBench) email() (err error) {
	const row = "email: mail submitted to OpenSMTPD → first SMTP byte of the reply (Dovecot IMAP IDLE)"
	if r.mail == nil {
		r.b.res.na("channels", row, "ms", noTarget(), "needs root (OpenSMTPD runs in a private mount namespace)")
		return nil
	}
	defer func() {
		if v := recover(); v != nil {
			f, ok := v.(shimFatal)
			if !ok {
				panic(v)
			}
			err = errors.New(f.msg)
		}
	}()
	n := max(3, r.n/4) // a round is about 0.6 s, OpenSMTPD's queue most of it
	mail := func(to, id string) {
		r.mail.Send("alice@example.com", to, "From: alice@example.com\nTo: "+to+"\nSubject: "+id+
			"\nMessage-ID: <"+id+"@example.com>\n\nhello "+id+"\n")
	}
	var through []time.Duration
	for i := range n {
		before := r.smtpProxy.count()
		start := time.Now()
		mail("bot@example.com", fmt.Sprintf("bench-%d-%d", r.b.run, i))
		at, err := r.smtpProxy.next(before, 60*time.Second)
		if err != nil {
			return fmt.Errorf("the daemon's reply: %w", err)
		}
		through = append(through, at.Sub(start))
		// The reply's own SMTP session ends before the next mail, so its connection is not the next one's.
		if err := waitEvery(50*time.Millisecond, "the reply mailed", 30*time.Second, func() bool { return r.replied(fmt.Sprintf("bench-%d-%d", r.b.run, i)) }); err != nil {
			return err
		}
	}
	floor, err := r.bareMailFloor(n, func(id string) { mail("mallory@example.com", id) })
	if err != nil {
		return err
	}
	r.row(row, through, floor)
	return nil
}

// replied reports whether alice's mailbox holds a reply to the mail with Message-ID <id@example.com>.
func (r *chanBench) replied(id string) bool {
	for _, m := range r.mail.Mailbox("alice@example.com", "alicepw") {
		if strings.Contains(m.Raw, "In-Reply-To: <"+id+"@example.com>") {
			return true
		}
	}
	return false
}

// bareMailFloor: a bare IMAP client in IDLE on mallory's INBOX; for each mail, from submission to the first
// byte of an SMTP session (through the proxy) opened once the new mail was seen and fetched.
func (r *chanBench) bareMailFloor(n int, send func(id string)) ([]time.Duration, error) {
	seen := make(chan uint32, 16)
	cl, err := imapclient.DialInsecure(fmt.Sprintf("127.0.0.1:%d", r.mail.IMAPPort), &imapclient.Options{
		UnilateralDataHandler: &imapclient.UnilateralDataHandler{Mailbox: func(m *imapclient.UnilateralDataMailbox) {
			if m.NumMessages != nil {
				select {
				case seen <- *m.NumMessages:
				default:
				}
			}
		}},
	})
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	if err := cl.Login("mallory@example.com", "mpw").Wait(); err != nil {
		return nil, err
	}
	if _, err := cl.Select("INBOX", nil).Wait(); err != nil {
		return nil, err
	}
	var out []time.Duration
	for i := range n {
		idle, err := cl.Idle()
		if err != nil {
			return nil, err
		}
		start := time.Now()
		send(fmt.Sprintf("floor-%d-%d", r.b.run, i))
		var num uint32
		select {
		case num = <-seen:
		case <-time.After(60 * time.Second):
			return nil, errors.New("the bare IMAP client saw no new mail within 60 s")
		}
		if err := idle.Close(); err != nil {
			return nil, err
		}
		if err := idle.Wait(); err != nil {
			return nil, err
		}
		section := &imap.FetchItemBodySection{Peek: true}
		if _, err := cl.Fetch(imap.SeqSetNum(num), &imap.FetchOptions{BodySection: []*imap.FetchItemBodySection{section}}).Collect(); err != nil {
			return nil, err
		}
		before := r.smtpProxy.count()
		c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", r.smtpProxy.port()))
		if err != nil {
			return nil, err
		}
		greeting := make([]byte, 512)
		_ = c.SetDeadline(time.Now().Add(30 * time.Second))
		if _, err := c.Read(greeting); err != nil {
			c.Close()
			return nil, fmt.Errorf("smtp greeting: %w", err)
		}
		_, werr := c.Write([]byte("EHLO floor.example.com\r\n"))
		at, err := r.smtpProxy.next(before, 30*time.Second)
		_, _ = c.Write([]byte("QUIT\r\n"))
		c.Close()
		if werr != nil {
			return nil, werr
		}
		if err != nil {
			return nil, err
		}
		out = append(out, at.Sub(start))
	}
	return out, nil
}

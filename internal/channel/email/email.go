// Package email is the email channel adapter: a mailbox read over IMAP (IDLE, or polling where the server
// has none) and answered over SMTP, as upstream's email channel. Each unread message is handed to the channel
// core with its Message-ID as the event id, and \Seen is set only after the core recorded it: a message the
// daemon did not record stays unread and is read again, and one recorded but not yet marked (a crash between
// the two) is recognised by its Message-ID and not answered twice. Automatic mail (bounces, auto-replies,
// lists) and our own is never answered, so two robots cannot loop. IMAP is github.com/emersion/go-imap/v2;
// SMTP is the standard library's net/smtp.
package email

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"mime"
	"net"
	"net/mail"
	"net/smtp"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/emersion/go-imap/v2"
	"github.com/emersion/go-imap/v2/imapclient"

	"github.com/zeroclaw-go/zeroclaw/internal/channel"
	"github.com/zeroclaw-go/zeroclaw/internal/config"
)

const (
	commandTimeout = 30 * time.Second
	maxSubjects    = 4096 // remembered subjects of answered mail (for "Re: ..."), oldest dropped
	maxPerDrain    = 200  // unread messages read per round
)

// Type is the channel type "email": the enabled channels.email entries.
func Type() channel.Type {
	return channel.Type{
		Name: "email",
		Instances: func(cfg *config.Config) map[string]any {
			out := map[string]any{}
			for alias, c := range cfg.Channels.Email {
				if c.Enabled {
					out[alias] = c
				}
			}
			return out
		},
		ExcludedTools: func(s any) []string { return s.(config.EmailConfig).ExcludedTools },
		New: func(inst channel.Instance, deps channel.Deps) (channel.Adapter, error) {
			return New(inst.ID, inst.Settings.(config.EmailConfig), deps.Logger)
		},
	}
}

// Adapter is one mailbox.
type Adapter struct {
	id  channel.ID
	c   config.EmailConfig
	log *slog.Logger

	mu       sync.Mutex // guards the fields below
	subjects map[string]string
	order    []string
	peeked   map[string]bool // observer mode: Message-IDs already handed over in this process
}

var (
	_ channel.Adapter  = (*Adapter)(nil)
	_ channel.Prompter = (*Adapter)(nil)
)

// New checks c and returns the adapter; Run connects.
func New(id channel.ID, c config.EmailConfig, lg *slog.Logger) (*Adapter, error) {
	switch {
	case c.IMAPHost == "" || c.IMAPPort <= 0 || c.IMAPPort > 65535:
		return nil, fmt.Errorf("email %s: imap_host and imap_port are required", id.Alias)
	case c.SMTPHost == "" || c.SMTPPort <= 0 || c.SMTPPort > 65535:
		return nil, fmt.Errorf("email %s: smtp_host and smtp_port are required", id.Alias)
	case c.Username == "":
		return nil, fmt.Errorf("email %s: username is required", id.Alias)
	}
	if _, err := mail.ParseAddress(c.FromAddress); err != nil {
		return nil, fmt.Errorf("email %s: from_address %q is not an address", id.Alias, c.FromAddress)
	}
	if c.IMAPFolder == "" {
		c.IMAPFolder = "INBOX"
	}
	if c.IdleTimeoutSecs <= 0 {
		c.IdleTimeoutSecs = 1740
	}
	if c.PollIntervalSecs <= 0 {
		c.PollIntervalSecs = 60
	}
	if lg == nil {
		lg = slog.New(slog.DiscardHandler)
	}
	return &Adapter{id: id, c: c, log: lg.With("component", "channel", "channel", id.String()),
		subjects: map[string]string{}, peeked: map[string]bool{}}, nil
}

// ID is the channel's id.
func (a *Adapter) ID() channel.ID { return a.id }

// Limits: one mail carries a long answer.
func (a *Adapter) Limits() channel.Limits { return channel.Limits{MaxRunes: 100_000} }

// Run connects, selects the folder and reads unread mail until ctx ends: after each round it waits in IDLE
// (renewed every idle_timeout_secs) or polls. Any IMAP failure ends Run with an error; the core's supervisor
// reconnects after its backoff.
func (a *Adapter) Run(ctx context.Context, d channel.Deliverer) error {
	wake := make(chan struct{}, 1)
	opts := &imapclient.Options{
		Dialer: &net.Dialer{Timeout: commandTimeout},
		UnilateralDataHandler: &imapclient.UnilateralDataHandler{Mailbox: func(m *imapclient.UnilateralDataMailbox) {
			if m.NumMessages != nil {
				select {
				case wake <- struct{}{}:
				default:
				}
			}
		}},
	}
	addr := net.JoinHostPort(a.c.IMAPHost, strconv.Itoa(a.c.IMAPPort))
	var cl *imapclient.Client
	var err error
	if a.c.IMAPTLS {
		opts.TLSConfig = &tls.Config{ServerName: a.c.IMAPHost, MinVersion: tls.VersionTLS12}
		cl, err = imapclient.DialTLS(addr, opts)
	} else {
		cl, err = imapclient.DialInsecure(addr, opts)
	}
	if err != nil {
		return fmt.Errorf("email: connect %s: %w", addr, err)
	}
	defer cl.Close()
	stop := context.AfterFunc(ctx, func() { cl.Close() })
	defer stop()
	if err := cl.Login(a.c.Username, a.c.Password).Wait(); err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return fmt.Errorf("%w: email: IMAP login as %s refused: %v", channel.ErrPermanent, a.c.Username, err)
	}
	sel, err := cl.Select(a.c.IMAPFolder, nil).Wait()
	if err != nil {
		return a.ended(ctx, fmt.Errorf("email: select %s: %w", a.c.IMAPFolder, err))
	}
	a.log.Info("email channel connected", "imap", addr, "folder", a.c.IMAPFolder)
	idle := cl.Caps().Has(imap.CapIdle)
	for {
		if err := a.drain(ctx, cl, d, sel.UIDValidity); err != nil {
			return a.ended(ctx, err)
		}
		d.Progress()
		if err := a.wait(ctx, cl, idle, wake); err != nil {
			return a.ended(ctx, err)
		}
		if ctx.Err() != nil {
			return nil
		}
	}
}

func (a *Adapter) ended(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return nil
	}
	return err
}

// wait blocks until new mail is announced, the IDLE (or poll) interval ends, or ctx ends.
func (a *Adapter) wait(ctx context.Context, cl *imapclient.Client, idle bool, wake <-chan struct{}) error {
	interval := time.Duration(a.c.PollIntervalSecs) * time.Second
	var cmd *imapclient.IdleCommand
	if idle {
		interval = time.Duration(a.c.IdleTimeoutSecs) * time.Second
		var err error
		if cmd, err = cl.Idle(); err != nil {
			return fmt.Errorf("email: IDLE: %w", err)
		}
	}
	t := time.NewTimer(interval)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-wake:
	case <-t.C:
	case <-cl.Closed():
		return errors.New("email: the IMAP server closed the connection")
	}
	if cmd != nil {
		if err := cmd.Close(); err != nil {
			return fmt.Errorf("email: end IDLE: %w", err)
		}
		if err := cmd.Wait(); err != nil {
			return fmt.Errorf("email: IDLE: %w", err)
		}
	}
	return nil
}

// drain reads the unread messages in UID order: each is handed to the core, then marked \Seen.
func (a *Adapter) drain(ctx context.Context, cl *imapclient.Client, d channel.Deliverer, validity uint32) error {
	data, err := cl.UIDSearch(&imap.SearchCriteria{NotFlag: []imap.Flag{imap.FlagSeen}}, nil).Wait()
	if err != nil {
		return fmt.Errorf("email: search unseen: %w", err)
	}
	uids := data.AllUIDs()
	if len(uids) > maxPerDrain {
		uids = uids[:maxPerDrain]
	}
	for _, uid := range uids {
		if ctx.Err() != nil {
			return nil
		}
		section := &imap.FetchItemBodySection{Peek: true, Partial: &imap.SectionPartial{Offset: 0, Size: MaxFetchBytes}}
		msgs, err := cl.Fetch(imap.UIDSetNum(uid), &imap.FetchOptions{UID: true, BodySection: []*imap.FetchItemBodySection{section}}).Collect()
		if err != nil {
			return fmt.Errorf("email: fetch %d: %w", uid, err)
		}
		if len(msgs) != 1 {
			continue // expunged meanwhile
		}
		raw := msgs[0].FindBodySection(section)
		ev, ok := a.inbound(raw, validity, uid)
		if ok {
			if err := d.Deliver(ctx, ev); err != nil {
				return fmt.Errorf("email: the core did not record message %d: %w", uid, err)
			}
		}
		if a.c.ObserverMode {
			a.mu.Lock()
			a.peeked[ev.EventID] = true
			a.mu.Unlock()
			continue
		}
		if err := cl.Store(imap.UIDSetNum(uid), &imap.StoreFlags{Op: imap.StoreFlagsAdd, Silent: true, Flags: []imap.Flag{imap.FlagSeen}}, nil).Close(); err != nil {
			return fmt.Errorf("email: mark %d seen: %w", uid, err)
		}
	}
	return nil
}

var approvalReply = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^\s*(yes|no)\s+([0-9a-f]{8,64})\b`) })

// inbound turns a fetched message into an event; ok is false for mail never answered (automatic, our own,
// unreadable, already handed over in observer mode). Unanswered mail is still marked \Seen.
func (a *Adapter) inbound(raw []byte, validity uint32, uid imap.UID) (channel.Inbound, bool) {
	m, err := Parse(raw)
	if err != nil {
		a.log.Warn("email: unreadable message skipped", "uid", uid, "err", err)
		return channel.Inbound{}, false
	}
	if own, _ := mail.ParseAddress(a.c.FromAddress); own != nil && strings.EqualFold(own.Address, m.From) || m.Auto {
		return channel.Inbound{}, false
	}
	id := m.MessageID
	if id == "" {
		id = fmt.Sprintf("uid:%d:%d", validity, uid) // no Message-ID: the mailbox's own stable name for it
	}
	if a.c.ObserverMode {
		a.mu.Lock()
		seen := a.peeked[id]
		a.mu.Unlock()
		if seen {
			return channel.Inbound{EventID: id}, false
		}
	}
	a.remember(m.MessageID, m.Subject)
	ev := channel.Inbound{EventID: id, Kind: channel.KindMessage, Sender: m.From, SenderName: m.From,
		ReplyTarget: m.From, MessageID: m.MessageID, Text: m.Text}
	if ev.Text == "" {
		ev.Text = m.Subject
	}
	if mm := approvalReply().FindStringSubmatch(strings.ToLower(m.Text)); mm != nil {
		decision := map[string]string{"yes": "allow_once", "no": "reject_once"}[mm[1]]
		ev.Kind, ev.Text = channel.KindApproval, ""
		ev.Approval = &channel.ApprovalAnswer{Token: mm[2], Decision: decision, AckID: m.From}
	}
	return ev, ev.Text != "" || ev.Kind == channel.KindApproval
}

func (a *Adapter) remember(msgID, subject string) {
	if msgID == "" {
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if _, ok := a.subjects[msgID]; !ok {
		a.order = append(a.order, msgID)
		if len(a.order) > maxSubjects {
			delete(a.subjects, a.order[0])
			a.order = a.order[1:]
		}
	}
	a.subjects[msgID] = subject
}

func (a *Adapter) replySubject(msgID string) string {
	a.mu.Lock()
	s, ok := a.subjects[msgID]
	a.mu.Unlock()
	if !ok || s == "" {
		return a.c.DefaultSubject
	}
	if strings.HasPrefix(strings.ToLower(s), "re:") {
		return s
	}
	return "Re: " + s
}

// Send mails the reply to the sender, threaded under the message it answers.
func (a *Adapter) Send(ctx context.Context, m channel.Outbound) (channel.Sent, error) {
	id := messageID(m.Key, a.c.FromAddress)
	if err := a.mail(ctx, m.ReplyTarget, a.replySubject(m.ReplyTo), m.ReplyTo, id, m.Text); err != nil {
		return channel.Sent{}, err
	}
	return channel.Sent{MessageID: id}, nil
}

// Prompt mails the approval question; the answer is a reply whose first line is "yes <token>" or "no <token>".
func (a *Adapter) Prompt(ctx context.Context, p channel.ApprovalPrompt) (channel.Sent, error) {
	id := messageID("approval-"+p.Token, a.c.FromAddress)
	body := p.Text + "\n\nReply with a first line of \"yes " + p.Token + "\" to run it once, or \"no " + p.Token + "\" to refuse."
	if err := a.mail(ctx, p.ReplyTarget, "Approval needed", "", id, body); err != nil {
		return channel.Sent{}, err
	}
	return channel.Sent{MessageID: id}, nil
}

// AckApproval mails the notice to whoever answered (AckID).
func (a *Adapter) AckApproval(ctx context.Context, ans channel.ApprovalAnswer, notice string) error {
	if ans.AckID == "" || notice == "" {
		return nil
	}
	return a.mail(ctx, ans.AckID, "Re: Approval needed", "", messageID("", a.c.FromAddress), notice)
}

// messageID is the Message-ID of an outbound mail: from the core's key when there is one (the same key
// makes the same id on a retry), else random.
func messageID(key, from string) string {
	local := key
	if local == "" {
		var b [12]byte
		_, _ = rand.Read(b[:])
		local = hex.EncodeToString(b[:])
	}
	local = strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '.' {
			return r
		}
		return '-'
	}, local)
	domain := "zeroclaw.local"
	if addr, err := mail.ParseAddress(from); err == nil {
		if _, d, ok := strings.Cut(addr.Address, "@"); ok && d != "" {
			domain = d
		}
	}
	return "zc-" + local + "@" + domain
}

func (a *Adapter) mail(ctx context.Context, to, subject, inReplyTo, msgID, body string) error {
	rcpt, err := mail.ParseAddress(to)
	if err != nil || strings.ContainsAny(rcpt.Address, "\r\n") {
		return fmt.Errorf("%w: email: %q is not an address", channel.ErrPermanent, to)
	}
	from, _ := mail.ParseAddress(a.c.FromAddress)
	var b strings.Builder
	b.WriteString("From: " + from.String() + "\r\n")
	b.WriteString("To: " + rcpt.String() + "\r\n")
	b.WriteString("Subject: " + mime.QEncoding.Encode("utf-8", oneLine(subject, 300)) + "\r\n")
	b.WriteString("Message-ID: <" + msgID + ">\r\n")
	if inReplyTo != "" && !strings.ContainsAny(inReplyTo, "\r\n<>") {
		b.WriteString("In-Reply-To: <" + inReplyTo + ">\r\nReferences: <" + inReplyTo + ">\r\n")
	}
	b.WriteString("Date: " + time.Now().UTC().Format(time.RFC1123Z) + "\r\n")
	b.WriteString("Auto-Submitted: auto-replied\r\nMIME-Version: 1.0\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Transfer-Encoding: 8bit\r\n\r\n")
	for _, line := range strings.Split(strings.ReplaceAll(body, "\r\n", "\n"), "\n") {
		b.WriteString(line + "\r\n") // net/smtp's DATA writer dot-stuffs: a lone "." cannot end the mail early
	}
	return a.smtpSend(ctx, from.Address, rcpt.Address, b.String())
}

func (a *Adapter) smtpSend(ctx context.Context, from, to, msg string) error {
	addr := net.JoinHostPort(a.c.SMTPHost, strconv.Itoa(a.c.SMTPPort))
	dctx, cancel := context.WithTimeout(ctx, commandTimeout)
	defer cancel()
	var conn net.Conn
	var err error
	if a.c.SMTPTLS {
		conn, err = (&tls.Dialer{Config: &tls.Config{ServerName: a.c.SMTPHost, MinVersion: tls.VersionTLS12}}).DialContext(dctx, "tcp", addr)
	} else {
		conn, err = (&net.Dialer{}).DialContext(dctx, "tcp", addr)
	}
	if err != nil {
		return fmt.Errorf("email: SMTP connect %s: %w", addr, err)
	}
	defer conn.Close()
	deadline, _ := dctx.Deadline()
	_ = conn.SetDeadline(deadline)
	c, err := smtp.NewClient(conn, a.c.SMTPHost)
	if err != nil {
		return fmt.Errorf("email: SMTP: %w", err)
	}
	defer c.Close()
	if !a.c.SMTPTLS {
		if ok, _ := c.Extension("STARTTLS"); ok {
			if err := c.StartTLS(&tls.Config{ServerName: a.c.SMTPHost, MinVersion: tls.VersionTLS12}); err != nil {
				return fmt.Errorf("email: STARTTLS: %w", err)
			}
		}
	}
	user, pass := a.c.SMTPUsername, a.c.SMTPPassword
	if user == "" && pass == "" {
		user, pass = a.c.Username, a.c.Password
	}
	if ok, _ := c.Extension("AUTH"); ok && user != "" {
		if err := c.Auth(smtp.PlainAuth("", user, pass, a.c.SMTPHost)); err != nil {
			return fmt.Errorf("%w: email: SMTP login as %s refused", channel.ErrPermanent, user)
		}
	}
	if err := c.Mail(from); err != nil {
		return fmt.Errorf("email: MAIL FROM: %w", err)
	}
	if err := c.Rcpt(to); err != nil {
		return fmt.Errorf("email: RCPT TO: %w", err)
	}
	w, err := c.Data()
	if err != nil {
		return fmt.Errorf("email: DATA: %w", err)
	}
	if _, err := w.Write([]byte(msg)); err != nil {
		return fmt.Errorf("email: DATA: %w", err)
	}
	if err := w.Close(); err != nil {
		return fmt.Errorf("email: DATA: %w", err)
	}
	return c.Quit()
}

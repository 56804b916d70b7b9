package irc

import (
	"bufio"
	"context"
	"crypto/tls"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/zeroclaw-go/zeroclaw/internal/clock"
)

// Defaults of a client.
const (
	DefaultPingEvery = 60 * time.Second // quiet this long ⇒ we PING the server
	minBackoff       = 2 * time.Second  // upstream's channel_initial_backoff_secs
	maxBackoff       = 60 * time.Second // and channel_max_backoff_secs
	dialTimeout      = 15 * time.Second
	writeTimeout     = 15 * time.Second
	// maxSendLines bounds one reply: a model cannot make the client flood the server (and be killed by it).
	maxSendLines = 40
)

// Options configure a Client.
type Options struct {
	Addr     string // host:port
	TLS      bool
	Insecure bool // skip certificate verification (upstream's verify_tls = false)
	Nick     string
	User     string // USER name; "" is the nick
	Channels []string
	// ServerPassword is sent as PASS, SASLPassword authenticates with SASL PLAIN (CAP sasl), and
	// NickServPassword identifies to NickServ after registration. All are secrets, never logged.
	ServerPassword, SASLPassword, NickServPassword string
	// PingEvery is how long a quiet connection waits before it PINGs the server; a connection that stays
	// quiet for a second PingEvery after that is dead and is dropped (liveness by progress, not by a socket
	// that still looks open).
	PingEvery time.Duration
	Dial      func(ctx context.Context, network, addr string) (net.Conn, error) // nil: net.Dialer
	Clock     clock.Clock                                                       // backoff timers
	// OnLine is called for every well-formed line from the server (a PONG included): the liveness the
	// channel core judges by. It must not block.
	OnLine func()
	Logger *slog.Logger
}

// Inbound is one PRIVMSG addressed to us: in a channel we joined, or a direct message.
type Inbound struct {
	ID      string // the IRCv3 msgid tag when the server sends one, else ""
	Nick    string // sender
	Target  string // the channel, or our nick for a direct message
	ReplyTo string // the channel, or the sender for a direct message
	Text    string
}

// Deliver is called for every inbound message, one at a time in arrival order; it must not block for long
// (IRC has no acknowledgement: a slow Deliver only delays the next line, and the server drops a client whose
// buffer fills).
type Deliver func(ctx context.Context, in Inbound)

// State is what the client reports about its connection.
type State struct {
	Connected bool
	Nick      string // current nick (after 433 renames)
	LastEvent time.Time
	LastError string
	Connects  int // successful registrations so far
	Dials     int // connection attempts so far
}

// Client is one IRC connection, reconnected by Run until its context ends.
type Client struct {
	o     Options
	clk   clock.Clock
	log   *slog.Logger
	wmu   sync.Mutex // serialises writes; guards w
	w     *bufio.Writer
	wconn net.Conn

	mu sync.Mutex // guards st
	st State
}

// New checks o and returns a client; Run connects.
func New(o Options) (*Client, error) {
	if o.Addr == "" {
		return nil, errors.New("irc: server is empty")
	}
	if !validNick(o.Nick) {
		return nil, fmt.Errorf("irc: nickname %q is not a valid IRC nick", o.Nick)
	}
	for _, ch := range o.Channels {
		if !validChannel(ch) {
			return nil, fmt.Errorf("irc: channel %q is not a valid channel name", ch)
		}
	}
	if o.PingEvery <= 0 {
		o.PingEvery = DefaultPingEvery
	}
	if o.User == "" {
		o.User = o.Nick
	}
	lg := o.Logger
	if lg == nil {
		lg = slog.New(slog.DiscardHandler)
	}
	return &Client{o: o, clk: clock.OrReal(o.Clock), log: lg, st: State{Nick: o.Nick}}, nil
}

func validNick(n string) bool {
	if n == "" || len(n) > 32 {
		return false
	}
	for i, r := range n {
		ok := r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || strings.ContainsRune("[]\\`_^{|}", r) ||
			i > 0 && (r >= '0' && r <= '9' || r == '-')
		if !ok {
			return false
		}
	}
	return true
}

func validChannel(c string) bool {
	return len(c) >= 2 && len(c) <= 200 && (c[0] == '#' || c[0] == '&') && !strings.ContainsAny(c, " ,\x07\r\n\x00")
}

// State returns a copy of the connection state.
func (c *Client) State() State {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.st
}

func (c *Client) update(f func(*State)) {
	c.mu.Lock()
	f(&c.st)
	c.mu.Unlock()
}

// ErrFatal wraps an error retrying cannot fix (a refused password): Run returns it instead of reconnecting.
var ErrFatal = errors.New("irc: fatal")

// Run connects, registers and reads until ctx ends, reconnecting a lost or dead connection after a backoff
// (2 s doubling to 60 s, reset by a connection that registered). It returns nil when ctx ends, or an error
// wrapping ErrFatal.
func (c *Client) Run(ctx context.Context, deliver Deliver) error {
	backoff := minBackoff
	for ctx.Err() == nil {
		registered, err := c.session(ctx, deliver)
		if ctx.Err() != nil {
			return nil
		}
		if errors.Is(err, ErrFatal) {
			c.update(func(s *State) { s.Connected, s.LastError = false, err.Error() })
			return err
		}
		if registered {
			backoff = minBackoff
		}
		msg := "connection ended"
		if err != nil {
			msg = err.Error()
		}
		c.update(func(s *State) { s.Connected, s.LastError = false, msg })
		c.log.Warn("IRC connection lost; reconnecting", "err", msg, "in", backoff)
		t := c.clk.NewTimer(backoff)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil
		case <-t.C:
		}
		backoff = min(backoff*2, maxBackoff)
	}
	return nil
}

func (c *Client) dial(ctx context.Context) (net.Conn, error) {
	c.update(func(s *State) { s.Dials++ })
	dctx, cancel := context.WithTimeout(ctx, dialTimeout)
	defer cancel()
	dial := c.o.Dial
	if dial == nil {
		dial = (&net.Dialer{}).DialContext
	}
	conn, err := dial(dctx, "tcp", c.o.Addr)
	if err != nil {
		return nil, err
	}
	if !c.o.TLS {
		return conn, nil
	}
	host, _, _ := net.SplitHostPort(c.o.Addr)
	tc := tls.Client(conn, &tls.Config{ServerName: host, InsecureSkipVerify: c.o.Insecure, MinVersion: tls.VersionTLS12}) //nolint:gosec // the user's verify_tls = false
	if err := tc.HandshakeContext(dctx); err != nil {
		conn.Close()
		return nil, err
	}
	return tc, nil
}

// session runs one connection; registered reports whether it got as far as the welcome (001).
func (c *Client) session(ctx context.Context, deliver Deliver) (registered bool, err error) {
	conn, err := c.dial(ctx)
	if err != nil {
		return false, fmt.Errorf("irc: connect %s: %w", c.o.Addr, err)
	}
	defer conn.Close()
	stop := context.AfterFunc(ctx, func() { conn.Close() })
	defer stop()
	c.wmu.Lock()
	c.w, c.wconn = bufio.NewWriterSize(conn, MaxLine), conn
	c.wmu.Unlock()
	defer func() {
		c.wmu.Lock()
		c.w, c.wconn = nil, nil
		c.wmu.Unlock()
	}()
	nick := c.o.Nick
	if c.o.SASLPassword != "" {
		if err := c.write("CAP REQ :sasl"); err != nil {
			return false, err
		}
	}
	if c.o.ServerPassword != "" {
		if err := c.write("PASS " + clean(c.o.ServerPassword)); err != nil {
			return false, err
		}
	}
	if err := c.write("NICK " + nick); err != nil {
		return false, err
	}
	if err := c.write("USER " + c.o.User + " 0 * :zeroclaw"); err != nil {
		return false, err
	}
	r := bufio.NewReaderSize(conn, MaxLine+MaxTagBytes+2)
	pinged := false
	for {
		_ = conn.SetReadDeadline(time.Now().Add(c.o.PingEvery))
		line, err := readLine(r)
		if err != nil {
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				if pinged {
					return registered, errors.New("irc: no answer to our PING; the connection is dead")
				}
				pinged = true
				if err := c.write("PING :zeroclaw"); err != nil {
					return registered, err
				}
				continue
			}
			if errors.Is(err, errLongLine) {
				continue // a line past the limit was skipped whole
			}
			return registered, fmt.Errorf("irc: read: %w", err)
		}
		pinged = false
		m, err := Parse(line)
		if err != nil {
			continue
		}
		c.update(func(s *State) { s.LastEvent = c.clk.Now() })
		if c.o.OnLine != nil {
			c.o.OnLine()
		}
		if c.o.OnLine != nil {
			c.o.OnLine()
		}
		switch m.Command {
		case "PING":
			if err := c.write("PONG :" + clean(m.Param(0))); err != nil {
				return registered, err
			}
		case "CAP":
			switch strings.ToUpper(m.Param(1)) {
			case "ACK":
				if err := c.write("AUTHENTICATE PLAIN"); err != nil {
					return registered, err
				}
			case "NAK":
				c.log.Warn("IRC server does not support SASL; continuing without it")
				if err := c.write("CAP END"); err != nil {
					return registered, err
				}
			}
		case "AUTHENTICATE":
			if m.Param(0) == "+" {
				raw := "\x00" + c.o.Nick + "\x00" + c.o.SASLPassword
				if err := c.write("AUTHENTICATE " + base64.StdEncoding.EncodeToString([]byte(raw))); err != nil {
					return registered, err
				}
			}
		case "903":
			if err := c.write("CAP END"); err != nil {
				return registered, err
			}
		case "904", "905", "906", "907":
			return registered, fmt.Errorf("%w: SASL authentication failed (%s)", ErrFatal, m.Command)
		case "464":
			return registered, fmt.Errorf("%w: the server refused the password (464)", ErrFatal)
		case "433":
			if registered {
				continue
			}
			if len(nick) >= 30 {
				return false, fmt.Errorf("%w: no free nickname near %q", ErrFatal, c.o.Nick)
			}
			nick += "_"
			if err := c.write("NICK " + nick); err != nil {
				return registered, err
			}
		case "001":
			registered = true
			if p := m.Param(0); validNick(p) {
				nick = p
			}
			c.update(func(s *State) { s.Connected, s.Nick, s.LastError = true, nick, ""; s.Connects++ })
			if c.o.NickServPassword != "" {
				if err := c.write("PRIVMSG NickServ :IDENTIFY " + clean(c.o.NickServPassword)); err != nil {
					return registered, err
				}
			}
			for _, ch := range c.o.Channels {
				if err := c.write("JOIN " + ch); err != nil {
					return registered, err
				}
			}
			c.log.Info("IRC registered", "nick", nick, "channels", len(c.o.Channels))
		case "NICK":
			if strings.EqualFold(m.Nick(), nick) && validNick(m.Param(0)) {
				nick = m.Param(0)
				c.update(func(s *State) { s.Nick = nick })
			}
		case "ERROR":
			return registered, fmt.Errorf("irc: server closed the link: %s", truncate(m.Param(0), 200))
		case "PRIVMSG":
			if !registered {
				continue
			}
			from := m.Nick()
			if from == "" || strings.EqualFold(from, "NickServ") || strings.EqualFold(from, "ChanServ") || strings.EqualFold(from, nick) {
				continue
			}
			target, text := m.Param(0), m.Param(1)
			in := Inbound{ID: m.Tags["msgid"], Nick: from, Target: target, ReplyTo: target, Text: text}
			if !validChannel(target) {
				if !strings.EqualFold(target, nick) {
					continue
				}
				in.ReplyTo = from
			}
			deliver(ctx, in)
		}
	}
}

var errLongLine = errors.New("irc: line too long")

// readLine reads one line of at most the wire limit; a longer line is consumed whole and reported as
// errLongLine, so a hostile server cannot grow the buffer.
func readLine(r *bufio.Reader) (string, error) {
	line, err := r.ReadSlice('\n')
	if errors.Is(err, bufio.ErrBufferFull) {
		for errors.Is(err, bufio.ErrBufferFull) {
			_, err = r.ReadSlice('\n')
		}
		if err != nil {
			return "", err
		}
		return "", errLongLine
	}
	if err != nil {
		if errors.Is(err, io.EOF) && len(line) > 0 {
			return string(line), nil
		}
		return "", err
	}
	return string(line), nil
}

func (c *Client) write(line string) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	return c.writeLocked(line)
}

func (c *Client) writeLocked(line string) error {
	if c.w == nil {
		return ErrNotConnected
	}
	_ = c.wconn.SetWriteDeadline(time.Now().Add(writeTimeout))
	if _, err := c.w.WriteString(line + "\r\n"); err != nil {
		return fmt.Errorf("irc: write: %w", err)
	}
	if err := c.w.Flush(); err != nil {
		return fmt.Errorf("irc: write: %w", err)
	}
	return nil
}

// ErrNotConnected is a send while no connection is registered; the core retries it later.
var ErrNotConnected = errors.New("irc: not connected")

// Send writes text to target (a channel or a nick) as PRIVMSG lines, split to the wire limit, at most
// maxSendLines of them (the rest is cut with a marker). It fails with ErrNotConnected when there is no
// connection; lines already written stay written (IRC cannot take them back or confirm them).
func (c *Client) Send(ctx context.Context, target, text string) (lines int, err error) {
	if !validChannel(target) && !validNick(target) {
		return 0, fmt.Errorf("irc: %q is neither a channel nor a nick", truncate(target, 64))
	}
	if !c.State().Connected {
		return 0, ErrNotConnected
	}
	parts := Split(target, text)
	if len(parts) > maxSendLines {
		parts = append(parts[:maxSendLines-1], "[… reply cut: "+strconv.Itoa(len(parts)-maxSendLines+1)+" more lines]")
	}
	c.wmu.Lock()
	defer c.wmu.Unlock()
	for _, p := range parts {
		if err := ctx.Err(); err != nil {
			return lines, err
		}
		if err := c.writeLocked("PRIVMSG " + target + " :" + p); err != nil {
			return lines, err
		}
		lines++
	}
	return lines, nil
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n]
}

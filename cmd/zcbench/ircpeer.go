package main

import (
	"bufio"
	"fmt"
	"net"
	"strings"
	"sync"
	"time"
)

// ircPeer is a bare IRC user on the real ngIRCd: it registers, answers PINGs and keeps every PRIVMSG it
// receives (sender nick, text), in order. With echo set it answers each PRIVMSG with the same text to its
// sender: the channels section's IRC floor.
type ircPeer struct {
	c    net.Conn
	nick string
	echo bool

	wmu  sync.Mutex
	mu   sync.Mutex
	msgs []ircLine
	err  error
	wake chan struct{}
	up   bool // 001 seen
}

type ircLine struct{ from, text string }

func dialIRC(port int, nick string, echo bool) (*ircPeer, error) {
	c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", port))
	if err != nil {
		return nil, err
	}
	p := &ircPeer{c: c, nick: nick, echo: echo, wake: make(chan struct{})}
	go p.read()
	p.send("NICK " + nick)
	p.send("USER " + nick + " 0 * :zcbench")
	if err := p.wait(20*time.Second, func() bool { return p.up }); err != nil {
		c.Close()
		return nil, fmt.Errorf("irc %s: not registered: %w", nick, err)
	}
	return p, nil
}

func (p *ircPeer) close() { p.c.Close() }

func (p *ircPeer) send(line string) {
	p.wmu.Lock()
	defer p.wmu.Unlock()
	_ = p.c.SetWriteDeadline(time.Now().Add(10 * time.Second))
	if _, err := fmt.Fprintf(p.c, "%s\r\n", line); err != nil {
		p.mu.Lock()
		p.err = err
		p.mu.Unlock()
	}
}

func (p *ircPeer) read() {
	r := bufio.NewReaderSize(p.c, 4096)
	for {
		line, err := r.ReadString('\n')
		p.mu.Lock()
		if err != nil {
			p.err = err
			close(p.wake)
			p.wake = make(chan struct{})
			p.mu.Unlock()
			return
		}
		p.mu.Unlock()
		line = strings.TrimRight(line, "\r\n")
		prefix := ""
		if strings.HasPrefix(line, ":") {
			prefix, line, _ = strings.Cut(line[1:], " ")
		}
		cmd, rest, _ := strings.Cut(line, " ")
		switch cmd {
		case "PING":
			p.send("PONG " + rest)
			continue
		case "001":
			p.mu.Lock()
			p.up = true
		case "PRIVMSG":
			_, text, _ := strings.Cut(rest, " :")
			from, _, _ := strings.Cut(prefix, "!")
			p.mu.Lock()
			p.msgs = append(p.msgs, ircLine{from: from, text: text})
		default:
			continue
		}
		var echo *ircLine
		if p.echo && cmd == "PRIVMSG" {
			m := p.msgs[len(p.msgs)-1]
			echo = &m
		}
		close(p.wake)
		p.wake = make(chan struct{})
		p.mu.Unlock()
		if echo != nil {
			p.send("PRIVMSG " + echo.from + " :" + echo.text)
		}
	}
}

// wait blocks until cond (called with mu held) holds, the connection fails, or within passes.
func (p *ircPeer) wait(within time.Duration, cond func() bool) error {
	deadline := time.NewTimer(within)
	defer deadline.Stop()
	for {
		p.mu.Lock()
		ok, err, wake := cond(), p.err, p.wake
		p.mu.Unlock()
		if ok {
			return nil
		}
		if err != nil {
			return err
		}
		select {
		case <-wake:
		case <-deadline.C:
			return fmt.Errorf("timed out after %s", within)
		}
	}
}

// waitFrom waits for a PRIVMSG from a nick with prefix whose text contains want, after the first skip kept.
func (p *ircPeer) waitFrom(nickPrefix, want string, skip int, within time.Duration) error {
	return p.wait(within, func() bool {
		for _, m := range p.msgs[min(skip, len(p.msgs)):] {
			if strings.HasPrefix(m.from, nickPrefix) && strings.Contains(m.text, want) {
				return true
			}
		}
		return false
	})
}

func (p *ircPeer) mark() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.msgs)
}

package irc

import (
	"bufio"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

const ngircdBin = "/usr/sbin/ngircd"

// ngircd is a real ngIRCd started by the test in a temp dir on a loopback port.
type ngircd struct {
	t    *testing.T
	conf string
	port int
	cmd  *exec.Cmd
}

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// startNgircd runs ngIRCd (the Debian package; .ci/run installs it) with its PING timeout at pingSecs.
func startNgircd(t *testing.T) *ngircd {
	t.Helper()
	if _, err := os.Stat(ngircdBin); err != nil {
		t.Fatalf("ngircd is required (apt-get install ngircd; .ci/run installs it): %v", err)
	}
	dir := t.TempDir()
	s := &ngircd{t: t, conf: filepath.Join(dir, "ngircd.conf"), port: freePort(t)}
	conf := fmt.Sprintf(`[Global]
Name = irc.test
Info = zeroclaw test server
Listen = 127.0.0.1
Ports = %d
MotdPhrase = test
AdminInfo1 = test
AdminInfo2 = test
AdminEMail = test@example.com
[Limits]
PingTimeout = 30
PongTimeout = 30
MaxNickLength = 30
[Options]
PAM = no
Ident = no
DNS = no
IncludeDir = %s
`, s.port, dir)
	if err := os.WriteFile(s.conf, []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	s.start()
	t.Cleanup(s.stop)
	return s
}

func (s *ngircd) addr() string { return fmt.Sprintf("127.0.0.1:%d", s.port) }

func (s *ngircd) start() {
	s.t.Helper()
	s.cmd = exec.Command(ngircdBin, "--nodaemon", "--config", s.conf)
	s.cmd.Stdout, s.cmd.Stderr = nil, nil
	if err := s.cmd.Start(); err != nil {
		s.t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		c, err := net.Dial("tcp", s.addr())
		if err == nil {
			c.Close()
			return
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("ngircd did not listen on %d: %v", s.port, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (s *ngircd) stop() {
	if s.cmd != nil && s.cmd.Process != nil {
		_ = s.cmd.Process.Kill()
		_ = s.cmd.Wait()
		s.cmd = nil
	}
}

// user is a plain IRC client speaking raw lines to the server: the owner (or a stranger) in a test.
type user struct {
	t    *testing.T
	nick string
	c    net.Conn
	r    *bufio.Reader
}

func dialUser(t *testing.T, addr, nick string, channels ...string) *user {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	u := &user{t: t, nick: nick, c: c, r: bufio.NewReader(c)}
	u.send("NICK " + nick)
	u.send("USER " + nick + " 0 * :test user")
	u.expect(func(m Message) bool { return m.Command == "001" })
	for _, ch := range channels {
		u.send("JOIN " + ch)
		u.expect(func(m Message) bool { return m.Command == "366" }) // end of NAMES: joined
	}
	return u
}

func (u *user) send(line string) {
	u.t.Helper()
	if _, err := fmt.Fprintf(u.c, "%s\r\n", line); err != nil {
		u.t.Fatal(err)
	}
}

// expect reads lines (answering PINGs) until one matches, failing after a bounded wait.
func (u *user) expect(match func(Message) bool) Message {
	u.t.Helper()
	_ = u.c.SetReadDeadline(time.Now().Add(20 * time.Second))
	for {
		line, err := u.r.ReadString('\n')
		if err != nil {
			u.t.Fatalf("%s: waiting for a line: %v", u.nick, err)
		}
		m, err := Parse(line)
		if err != nil {
			continue
		}
		if m.Command == "PING" {
			u.send("PONG :" + m.Param(0))
			continue
		}
		if match(m) {
			return m
		}
	}
}

// privmsgsUntil collects PRIVMSG bodies from nick until the body mark arrives (excluded). The bot sends
// mark after what the test waits for: ngIRCd throttles a client's lines but keeps their order, so everything
// said before mark has been relayed by then, and a test can assert nothing more was said.
func (u *user) privmsgsUntil(from, mark string) []string {
	u.t.Helper()
	var out []string
	u.expect(func(m Message) bool {
		if m.Command != "PRIVMSG" || !strings.EqualFold(m.Nick(), from) {
			return false
		}
		if m.Param(1) == mark {
			return true
		}
		out = append(out, m.Param(1))
		return false
	})
	return out
}

// Package mailtest runs a real Dovecot (IMAP; mail delivered by dovecot-lda into Maildirs) and a real OpenSMTPD
// (SMTP in, every example.com recipient handed to dovecot-lda) for tests, in a temp dir on loopback ports.
// Users: bot@example.com (bot-imap-pw), alice@example.com (alicepw), mallory@example.com (mpw).
package mailtest

import (
	"fmt"
	"net"
	"net/smtp"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/emersion/go-imap/v2"
	"github.com/emersion/go-imap/v2/imapclient"
)

const (
	dovecotBin = "/usr/sbin/dovecot"
	ldaBin     = "/usr/lib/dovecot/dovecot-lda"
	smtpdBin   = "/usr/sbin/smtpd"
	nobody     = 65534
)

// Servers are a real Dovecot (IMAP, mail delivered by dovecot-lda into Maildirs) and a real OpenSMTPD
// (SMTP in, every example.com recipient handed to dovecot-lda), started by the test in a temp dir on loopback
// ports. OpenSMTPD's spool and control socket paths are compiled in (/var/spool/smtpd, /var/run/smtpd.sock),
// so it runs in its own mount namespace with a temp dir bound over each: that needs root (CI runs as root).
type Servers struct {
	t                  testing.TB
	dir                string
	IMAPPort, SMTPPort int
	dovecot, smtpd     *exec.Cmd
}

func port(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

func Start(t testing.TB) *Servers {
	t.Helper()
	for _, b := range []string{dovecotBin, ldaBin, smtpdBin} {
		if _, err := os.Stat(b); err != nil {
			t.Fatalf("%s is required (apt-get install dovecot-imapd opensmtpd; .ci/run installs them): %v", b, err)
		}
	}
	if os.Geteuid() != 0 {
		t.Fatal("the email tests run OpenSMTPD in a private mount namespace, which needs root")
	}
	dir := t.TempDir()
	// dovecot-lda runs as nobody: it must reach its config, its log and the Maildirs.
	for _, d := range []string{filepath.Dir(dir), dir} {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	s := &Servers{t: t, dir: dir, IMAPPort: port(t), SMTPPort: port(t)}
	for _, sub := range []string{"run", "state", "mail", "spool", "smtprun"} {
		if err := os.MkdirAll(filepath.Join(dir, sub), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	write := func(name, body string, mode os.FileMode) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), mode); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(filepath.Join(dir, name), mode); err != nil { // past the umask
			t.Fatal(err)
		}
	}
	write("dovecot.log", "", 0o666)
	write("users", "bot@example.com:{PLAIN}bot-imap-pw\nalice@example.com:{PLAIN}alicepw\nmallory@example.com:{PLAIN}mpw\n", 0o644)
	write("dovecot.conf", fmt.Sprintf(`base_dir = %[1]s/run
state_dir = %[1]s/state
instance_name = zctest-%[2]d
protocols = imap
listen = 127.0.0.1
ssl = no
disable_plaintext_auth = no
auth_mechanisms = plain login
log_path = %[1]s/dovecot.log
first_valid_uid = 1
mail_location = maildir:%[1]s/mail/%%u
passdb {
  driver = passwd-file
  args = scheme=PLAIN username_format=%%u %[1]s/users
}
userdb {
  driver = static
  args = uid=%[3]d gid=%[3]d home=%[1]s/mail/%%u
}
service imap-login {
  chroot =
  inet_listener imap {
    port = %[2]d
  }
  inet_listener imaps {
    port = 0
  }
}
service anvil {
  chroot =
}
`, dir, s.IMAPPort, nobody), 0o644)
	if err := os.Chown(filepath.Join(dir, "mail"), nobody, nobody); err != nil {
		t.Fatal(err)
	}
	write("vusers", "@example.com nobody\n", 0o644)
	write("smtpd.conf", fmt.Sprintf(`table vusers file:%[1]s/vusers
listen on 127.0.0.1 port %[2]d
action "lda" mda "%[3]s -c %[1]s/dovecot.conf -d %%{rcpt}" virtual <vusers>
match from any for any action "lda"
`, dir, s.SMTPPort, ldaBin), 0o600)
	s.StartDovecot()
	s.smtpd = exec.Command("unshare", "--mount", "--propagation", "private", "sh", "-c",
		fmt.Sprintf("mount --bind %[1]s/spool /var/spool && mount --bind %[1]s/smtprun /var/run && exec %[2]s -d -f %[1]s/smtpd.conf", dir, smtpdBin))
	if out, err := os.Create(filepath.Join(dir, "smtpd.log")); err == nil {
		s.smtpd.Stdout, s.smtpd.Stderr = out, out
	}
	if err := s.smtpd.Start(); err != nil {
		t.Fatal(err)
	}
	waitListen(t, s.SMTPPort, func() string { b, _ := os.ReadFile(filepath.Join(dir, "smtpd.log")); return string(b) })
	t.Cleanup(func() {
		if t.Failed() {
			b, _ := os.ReadFile(filepath.Join(dir, "smtpd.log"))
			t.Logf("smtpd log:\n%s\ndovecot log:\n%s", b, s.Log())
		}
		_ = s.smtpd.Process.Signal(syscall.SIGTERM)
		_ = s.smtpd.Wait()
		s.StopDovecot()
	})
	return s
}

func waitListen(t testing.TB, port int, log func() string) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", port))
		if err == nil {
			c.Close()
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("nothing listens on %d: %v\n%s", port, err, log())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// StartDovecot starts Dovecot (again, after StopDovecot).
func (s *Servers) StartDovecot() {
	s.t.Helper()
	s.dovecot = exec.Command(dovecotBin, "-F", "-c", filepath.Join(s.dir, "dovecot.conf"))
	if err := s.dovecot.Start(); err != nil {
		s.t.Fatal(err)
	}
	waitListen(s.t, s.IMAPPort, func() string { b, _ := os.ReadFile(filepath.Join(s.dir, "dovecot.log")); return string(b) })
}

// StopDovecot stops Dovecot (SIGTERM) and waits for it.
func (s *Servers) StopDovecot() {
	if s.dovecot != nil {
		_ = s.dovecot.Process.Signal(syscall.SIGTERM)
		_ = s.dovecot.Wait()
		s.dovecot = nil
	}
}

// Send submits a raw message (LF line ends) over SMTP.
func (s *Servers) Send(from, to, raw string) {
	s.t.Helper()
	if err := smtp.SendMail(fmt.Sprintf("127.0.0.1:%d", s.SMTPPort), nil, from, []string{to}, []byte(strings.ReplaceAll(raw, "\n", "\r\n"))); err != nil {
		s.t.Fatalf("smtp: %v", err)
	}
}

// Stored is one message of a mailbox.
type Stored struct {
	Raw  string
	Seen bool
}

// Mailbox logs in as user and returns every message of INBOX with its \\Seen flag, read-only.
func (s *Servers) Mailbox(user, pass string) []Stored {
	s.t.Helper()
	c, err := imapclient.DialInsecure(fmt.Sprintf("127.0.0.1:%d", s.IMAPPort), nil)
	if err != nil {
		s.t.Fatal(err)
	}
	defer c.Close()
	if err := c.Login(user, pass).Wait(); err != nil {
		s.t.Fatal(err)
	}
	sel, err := c.Select("INBOX", &imap.SelectOptions{ReadOnly: true}).Wait()
	if err != nil {
		s.t.Fatal(err)
	}
	if sel.NumMessages == 0 {
		return nil
	}
	section := &imap.FetchItemBodySection{Peek: true}
	var all imap.SeqSet
	all.AddRange(1, 0) // 1:*
	msgs, err := c.Fetch(all, &imap.FetchOptions{Flags: true, BodySection: []*imap.FetchItemBodySection{section}}).Collect()
	if err != nil {
		s.t.Fatal(err)
	}
	var out []Stored
	for _, m := range msgs {
		st := Stored{Raw: string(m.FindBodySection(section))}
		for _, f := range m.Flags {
			st.Seen = st.Seen || f == imap.FlagSeen
		}
		out = append(out, st)
	}
	return out
}

// Log is Dovecot's log.
func (s *Servers) Log() string {
	b, _ := os.ReadFile(filepath.Join(s.dir, "dovecot.log"))
	return string(b)
}

package email

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

// mailServers are a real Dovecot (IMAP, mail delivered by dovecot-lda into Maildirs) and a real OpenSMTPD
// (SMTP in, every example.com recipient handed to dovecot-lda), started by the test in a temp dir on loopback
// ports. OpenSMTPD's spool and control socket paths are compiled in (/var/spool/smtpd, /var/run/smtpd.sock),
// so it runs in its own mount namespace with a temp dir bound over each: that needs root (CI runs as root).
type mailServers struct {
	t                  *testing.T
	dir                string
	imapPort, smtpPort int
	dovecot, smtpd     *exec.Cmd
}

func port(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

func startMail(t *testing.T) *mailServers {
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
	s := &mailServers{t: t, dir: dir, imapPort: port(t), smtpPort: port(t)}
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
	write("users", "bot@example.com:{PLAIN}secret\nalice@example.com:{PLAIN}alicepw\nmallory@example.com:{PLAIN}mpw\n", 0o644)
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
`, dir, s.imapPort, nobody), 0o644)
	if err := os.Chown(filepath.Join(dir, "mail"), nobody, nobody); err != nil {
		t.Fatal(err)
	}
	write("vusers", "@example.com nobody\n", 0o644)
	write("smtpd.conf", fmt.Sprintf(`table vusers file:%[1]s/vusers
listen on 127.0.0.1 port %[2]d
action "lda" mda "%[3]s -c %[1]s/dovecot.conf -d %%{rcpt}" virtual <vusers>
match from any for any action "lda"
`, dir, s.smtpPort, ldaBin), 0o600)
	s.startDovecot()
	s.smtpd = exec.Command("unshare", "--mount", "--propagation", "private", "sh", "-c",
		fmt.Sprintf("mount --bind %[1]s/spool /var/spool && mount --bind %[1]s/smtprun /var/run && exec %[2]s -d -f %[1]s/smtpd.conf", dir, smtpdBin))
	if out, err := os.Create(filepath.Join(dir, "smtpd.log")); err == nil {
		s.smtpd.Stdout, s.smtpd.Stderr = out, out
	}
	if err := s.smtpd.Start(); err != nil {
		t.Fatal(err)
	}
	waitListen(t, s.smtpPort, func() string { b, _ := os.ReadFile(filepath.Join(dir, "smtpd.log")); return string(b) })
	t.Cleanup(func() {
		if t.Failed() {
			b, _ := os.ReadFile(filepath.Join(dir, "smtpd.log"))
			t.Logf("smtpd log:\n%s\ndovecot log:\n%s", b, readLog(s))
		}
		_ = s.smtpd.Process.Signal(syscall.SIGTERM)
		_ = s.smtpd.Wait()
		s.stopDovecot()
	})
	return s
}

func waitListen(t *testing.T, port int, log func() string) {
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

func (s *mailServers) startDovecot() {
	s.t.Helper()
	s.dovecot = exec.Command(dovecotBin, "-F", "-c", filepath.Join(s.dir, "dovecot.conf"))
	if err := s.dovecot.Start(); err != nil {
		s.t.Fatal(err)
	}
	waitListen(s.t, s.imapPort, func() string { b, _ := os.ReadFile(filepath.Join(s.dir, "dovecot.log")); return string(b) })
}

func (s *mailServers) stopDovecot() {
	if s.dovecot != nil {
		_ = s.dovecot.Process.Signal(syscall.SIGTERM)
		_ = s.dovecot.Wait()
		s.dovecot = nil
	}
}

// send submits a raw message over SMTP.
func (s *mailServers) send(from, to, raw string) {
	s.t.Helper()
	if err := smtp.SendMail(fmt.Sprintf("127.0.0.1:%d", s.smtpPort), nil, from, []string{to}, []byte(strings.ReplaceAll(raw, "\n", "\r\n"))); err != nil {
		s.t.Fatalf("smtp: %v", err)
	}
}

// mailbox logs in as user and returns every message with its flags.
type stored struct {
	raw  string
	seen bool
}

func (s *mailServers) mailbox(user, pass string) []stored {
	s.t.Helper()
	c, err := imapclient.DialInsecure(fmt.Sprintf("127.0.0.1:%d", s.imapPort), nil)
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
	var out []stored
	for _, m := range msgs {
		st := stored{raw: string(m.FindBodySection(section))}
		for _, f := range m.Flags {
			st.seen = st.seen || f == imap.FlagSeen
		}
		out = append(out, st)
	}
	return out
}

func readLog(s *mailServers) string {
	b, _ := os.ReadFile(filepath.Join(s.dir, "dovecot.log"))
	return string(b)
}

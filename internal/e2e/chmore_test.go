package e2e

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	paho "github.com/eclipse/paho.mqtt.golang"

	"github.com/zeroclaw-go/zeroclaw/internal/store"

	"github.com/zeroclaw-go/zeroclaw/internal/channel/email/mailtest"
)

// toolBackend is an OpenAI-compatible model that asks to run command, then says done once the tool answered.
func toolBackend(t *testing.T, command, done string) *httptest.Server {
	t.Helper()
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		if !strings.Contains(string(body), `"role":"tool"`) {
			fmt.Fprint(w, sseToolCall(command))
			return
		}
		fmt.Fprint(w, sseChunk(done)+"data: [DONE]\n\n")
	}))
	t.Cleanup(s.Close)
	return s
}

func loopbackPort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

func runServer(t *testing.T, bin string, port int, args ...string) {
	t.Helper()
	if _, err := os.Stat(bin); err != nil {
		t.Fatalf("%s is required (.ci/run installs it): %v", bin, err)
	}
	cmd := exec.Command(bin, args...)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	waitUntil(t, bin+" listening", 10*time.Second, func() bool {
		c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", port))
		if err == nil {
			c.Close()
		}
		return err == nil
	})
}

// mqttInbox collects the JSON replies published under a topic filter.
type mqttInbox struct {
	mu  sync.Mutex
	got []map[string]string
}

func (b *mqttInbox) all() []map[string]string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]map[string]string(nil), b.got...)
}

// The real binary answers on MQTT (a real mosquitto): a chat message starts a turn whose shell call is put
// to the sender as an approval prompt, a stranger's answer is ignored, the owner's runs it, the answer is
// published once, and a publisher's redelivery of the same message id is not answered again.
func TestMQTTChatTurnWithApprovalE2E(t *testing.T) {
	port := loopbackPort(t)
	dir := t.TempDir()
	conf := filepath.Join(dir, "mosquitto.conf")
	if err := os.WriteFile(conf, fmt.Appendf(nil, "listener %d 127.0.0.1\nallow_anonymous true\npersistence false\n", port), 0o600); err != nil {
		t.Fatal(err)
	}
	runServer(t, "/usr/sbin/mosquitto", port, "-c", conf)
	backend := toolBackend(t, "echo approved > marker", "marker written")
	h, root := homeWithOpenAI(t, "fake", backend.URL)
	appendFile(t, filepath.Join(root, "config.toml"), fmt.Sprintf(`
[channels.mqtt.home]
enabled = true
broker_url = "mqtt://127.0.0.1:%d"
client_id = "zc-e2e"
chat_topic = "zc/+/in"
reply_topic = "zc/{sender}/out"

[peer_groups.me]
channel = "mqtt"
agents = ["default"]
external_peers = ["alice"]

[reliability]
channel_initial_backoff_secs = 1
channel_max_backoff_secs = 1
`, port))
	d := start(t, env(h), "daemon")
	waitSocket(t, d, agentSock(h))

	cl := paho.NewClient(paho.NewClientOptions().AddBroker(fmt.Sprintf("tcp://127.0.0.1:%d", port)).SetClientID("peer"))
	if tok := cl.Connect(); !tok.WaitTimeout(10*time.Second) || tok.Error() != nil {
		t.Fatalf("connect: %v", tok.Error())
	}
	defer cl.Disconnect(100)
	var alice, mallory mqttInbox
	for topic, box := range map[string]*mqttInbox{"zc/alice/out": &alice, "zc/mallory/out": &mallory} {
		box := box
		tok := cl.Subscribe(topic, 1, func(_ paho.Client, m paho.Message) {
			var r map[string]string
			_ = json.Unmarshal(m.Payload(), &r)
			box.mu.Lock()
			box.got = append(box.got, r)
			box.mu.Unlock()
		})
		if !tok.WaitTimeout(10*time.Second) || tok.Error() != nil {
			t.Fatal(tok.Error())
		}
	}
	send := func(sender string, v map[string]any) {
		t.Helper()
		body, _ := json.Marshal(v)
		if tok := cl.Publish("zc/"+sender+"/in", 1, false, body); !tok.WaitTimeout(10*time.Second) || tok.Error() != nil {
			t.Fatal(tok.Error())
		}
	}
	// The daemon subscribes once it is connected; a message before that would be lost (no session yet), so
	// wait for the channel's health to be ok first.
	c := dialRPC(t, agentSock(h))
	c.Initialize()
	waitUntil(t, "the mqtt channel up", 20*time.Second, func() bool {
		health := c.Call("health", map[string]any{}, 2)
		comp, _ := health["result"].(map[string]any)["components"].(map[string]any)["channel:mqtt.home"].(map[string]any)
		return comp != nil && comp["status"] == "ok"
	})

	send("mallory", map[string]any{"id": "x1", "text": "write the marker"}) // a stranger: ignored
	send("alice", map[string]any{"id": "m1", "text": "write the marker"})
	waitUntil(t, "the approval prompt", 20*time.Second, func() bool { return len(alice.all()) == 1 })
	prompt := alice.all()[0]
	if prompt["type"] != "approval" || prompt["token"] == "" || !strings.Contains(prompt["text"], "echo approved > marker") {
		t.Fatalf("prompt %v", prompt)
	}
	send("mallory", map[string]any{"id": "x2", "approval": map[string]string{"token": prompt["token"], "decision": "allow_once"}})
	send("alice", map[string]any{"id": "m1", "text": "write the marker"}) // a redelivery while the turn waits
	send("alice", map[string]any{"id": "m2", "approval": map[string]string{"token": prompt["token"], "decision": "allow_once"}})
	waitUntil(t, "the answer", 20*time.Second, func() bool { return len(alice.all()) == 2 })
	if got := alice.all()[1]; got["type"] != "message" || got["text"] != "marker written" || got["in_reply_to"] != "m1" {
		t.Fatalf("answer %v", got)
	}
	if _, err := os.Stat(filepath.Join(agentWorkspace(h), "marker")); err != nil {
		t.Fatalf("the approved command did not run: %v", err)
	}
	// A later message is answered after the redelivery would have been: nothing came in between.
	send("alice", map[string]any{"id": "m3", "text": "again"})
	waitUntil(t, "the next answer", 20*time.Second, func() bool { return len(alice.all()) == 3 })
	if got := alice.all()[2]; got["in_reply_to"] != "m3" {
		t.Fatalf("after the redelivery alice got %v (a second answer to m1?)", alice.all())
	}
	if got := mallory.all(); len(got) != 0 {
		t.Fatalf("the stranger was answered: %v", got)
	}
}

// The real binary answers on IRC (a real ngIRCd): a direct message starts a turn whose shell call is put to
// the chat with the reply convention, a stranger's "yes <token>" changes nothing (and is not answered), the
// owner's runs the call, and the answer arrives once.
func TestIRCTurnWithApprovalE2E(t *testing.T) {
	port := loopbackPort(t)
	dir := t.TempDir()
	conf := filepath.Join(dir, "ngircd.conf")
	if err := os.WriteFile(conf, fmt.Appendf(nil, "[Global]\nName = irc.test\nInfo = test\nListen = 127.0.0.1\nPorts = %d\n"+
		"AdminInfo1 = t\nAdminInfo2 = t\nAdminEMail = t@example.com\n[Options]\nPAM = no\nIdent = no\nDNS = no\nIncludeDir = %s\n", port, dir), 0o644); err != nil {
		t.Fatal(err)
	}
	runServer(t, "/usr/sbin/ngircd", port, "--nodaemon", "--config", conf)
	backend := toolBackend(t, "echo approved > marker", "marker written")
	h, root := homeWithOpenAI(t, "fake", backend.URL)
	appendFile(t, filepath.Join(root, "config.toml"), fmt.Sprintf(`
[channels.irc.local]
enabled = true
server = "127.0.0.1"
port = %d
use_tls = false
nickname = "zcbot"
channels = ["#zc"]

[peer_groups.me]
channel = "irc"
agents = ["default"]
external_peers = ["alice"]
`, port))
	d := start(t, env(h), "daemon")
	waitSocket(t, d, agentSock(h))

	alice, mallory := ircUser(t, port, "alice"), ircUser(t, port, "mallory")
	// Wait until the bot is on the server (WHOIS answers 311 for a present nick, 401 before).
	waitUntil(t, "zcbot registered", 20*time.Second, func() bool {
		alice.send("WHOIS zcbot")
		l := alice.until(func(f []string) bool { return len(f) > 1 && (f[1] == "311" || f[1] == "401") })
		return l[1] == "311"
	})
	alice.send("PRIVMSG zcbot :write the marker")
	token := regexp.MustCompile(`"yes ([0-9a-f]+)"`)
	var tok string
	alice.until(func(f []string) bool {
		if m := token.FindStringSubmatch(strings.Join(f, " ")); m != nil {
			tok = m[1]
			return true
		}
		return false
	})
	mallory.send("PRIVMSG zcbot :yes " + tok)
	mallory.send("PING :sync") // its PONG: the server has passed mallory's line on to the bot
	mallory.until(func(f []string) bool { return len(f) > 1 && f[1] == "PONG" })
	// alice's answer to no prompt is acknowledged to her, after mallory's line: the bot has read that one.
	alice.send("PRIVMSG zcbot :no deadbeef")
	alice.until(func(f []string) bool {
		return len(f) > 3 && f[1] == "PRIVMSG" && strings.Contains(strings.Join(f, " "), "no longer waiting")
	})
	mallory.send("PING :end") // a stranger is ignored: not even told so
	mallory.until(func(f []string) bool {
		if len(f) > 1 && f[1] == "PRIVMSG" {
			t.Fatalf("the bot answered the stranger: %v", f)
		}
		return len(f) > 1 && f[1] == "PONG"
	})
	if _, err := os.Stat(filepath.Join(agentWorkspace(h), "marker")); !os.IsNotExist(err) {
		t.Fatalf("a stranger's answer ran the command: %v", err)
	}
	alice.send("PRIVMSG zcbot :yes " + tok)
	alice.until(func(f []string) bool {
		return len(f) > 3 && f[1] == "PRIVMSG" && strings.Contains(strings.Join(f, " "), ":marker written")
	})
	if _, err := os.Stat(filepath.Join(agentWorkspace(h), "marker")); err != nil {
		t.Fatalf("the approved command did not run: %v", err)
	}
}

type ircPeer struct {
	t *testing.T
	c net.Conn
	r *bufio.Reader
}

func ircUser(t *testing.T, port int, nick string) *ircPeer {
	t.Helper()
	c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", port))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	p := &ircPeer{t: t, c: c, r: bufio.NewReader(c)}
	p.send("NICK " + nick)
	p.send("USER " + nick + " 0 * :e2e")
	p.until(func(f []string) bool { return len(f) > 1 && f[1] == "001" })
	return p
}

func (p *ircPeer) send(line string) {
	p.t.Helper()
	if _, err := fmt.Fprintf(p.c, "%s\r\n", line); err != nil {
		p.t.Fatal(err)
	}
}

// until reads lines (answering PING) until one's fields match, bounded by a deadline.
func (p *ircPeer) until(match func(fields []string) bool) []string {
	p.t.Helper()
	_ = p.c.SetReadDeadline(time.Now().Add(30 * time.Second))
	for {
		line, err := p.r.ReadString('\n')
		if err != nil {
			p.t.Fatalf("irc peer: %v", err)
		}
		f := strings.Fields(strings.TrimSpace(line))
		if len(f) > 1 && f[0] == "PING" {
			p.send("PONG " + f[1])
			continue
		}
		if match(f) {
			return f
		}
	}
}

// The real binary answers by email (real Dovecot and OpenSMTPD): a mail starts a turn whose shell call is
// mailed as an approval prompt, a stranger's "yes <token>" changes nothing, the owner's runs the call, the
// answer is mailed once, threaded under the question, and the question is marked read.
func TestEmailTurnWithApprovalE2E(t *testing.T) {
	s := mailtest.Start(t)
	backend := toolBackend(t, "echo approved > marker", "marker written")
	h, root := homeWithOpenAI(t, "fake", backend.URL)
	appendFile(t, filepath.Join(root, "config.toml"), fmt.Sprintf(`
[channels.email.work]
enabled = true
imap_host = "127.0.0.1"
imap_port = %d
imap_tls = false
smtp_host = "127.0.0.1"
smtp_port = %d
smtp_tls = false
username = "bot@example.com"
password = "bot-imap-pw"
from_address = "bot@example.com"
idle_timeout_secs = 30

[peer_groups.me]
channel = "email"
agents = ["default"]
external_peers = ["alice@example.com"]
`, s.IMAPPort, s.SMTPPort))
	d := start(t, env(h), "daemon")
	waitSocket(t, d, agentSock(h))

	s.Send("alice@example.com", "bot@example.com", "From: alice@example.com\nTo: bot@example.com\nSubject: marker\nMessage-ID: <q1@example.com>\n\nwrite the marker\n")
	mails := func(user, pass string, n int) []mailtest.Stored {
		t.Helper()
		var got []mailtest.Stored
		waitUntil(t, fmt.Sprintf("%d mails for %s", n, user), 30*time.Second, func() bool { got = s.Mailbox(user, pass); return len(got) >= n })
		return got
	}
	prompt := mails("alice@example.com", "alicepw", 1)[0].Raw
	m := regexp.MustCompile(`"yes ([0-9a-f]+)"`).FindStringSubmatch(prompt)
	if m == nil || !strings.Contains(prompt, "echo approved > marker") {
		t.Fatalf("prompt mail:\n%s", prompt)
	}
	s.Send("mallory@example.com", "bot@example.com", "From: mallory@example.com\nTo: bot@example.com\nSubject: Re: Approval needed\nMessage-ID: <x1@example.com>\n\nyes "+m[1]+"\n")
	// The stranger is ignored: the bot reads the mail (marked seen) and runs nothing.
	waitUntil(t, "the stranger's mail read", 30*time.Second, func() bool {
		for _, x := range s.Mailbox("bot@example.com", "bot-imap-pw") {
			if strings.Contains(x.Raw, "x1@example.com") {
				return x.Seen
			}
		}
		return false
	})
	if _, err := os.Stat(filepath.Join(agentWorkspace(h), "marker")); !os.IsNotExist(err) {
		t.Fatalf("a stranger's answer ran the command: %v", err)
	}
	s.Send("alice@example.com", "bot@example.com", "From: alice@example.com\nTo: bot@example.com\nSubject: Re: Approval needed\nMessage-ID: <q2@example.com>\n\nyes "+m[1]+"\n")
	var answer string
	waitUntil(t, "the answer", 30*time.Second, func() bool {
		for _, x := range s.Mailbox("alice@example.com", "alicepw") {
			if strings.Contains(x.Raw, "marker written") {
				answer = x.Raw
			}
		}
		return answer != ""
	})
	if !strings.Contains(answer, "In-Reply-To: <q1@example.com>") || !strings.Contains(answer, "Subject: Re: marker") {
		t.Fatalf("answer mail:\n%s", answer)
	}
	if _, err := os.Stat(filepath.Join(agentWorkspace(h), "marker")); err != nil {
		t.Fatalf("the approved command did not run: %v", err)
	}
	n := 0
	for _, x := range s.Mailbox("alice@example.com", "alicepw") {
		if strings.Contains(x.Raw, "marker written") {
			n++
		}
	}
	if n != 1 {
		t.Fatalf("%d answers mailed", n)
	}
	if strings.Contains(d.stderr.String(), "bot-imap-pw") {
		t.Fatal("the IMAP password is in the daemon's log")
	}
}

// kill -9 of the real binary at random points while a publisher keeps sending and re-sending chat messages
// over a real mosquitto (which redelivers what the daemon did not acknowledge): every message is answered at
// most once, counted against the replies the broker carried, and every message is answered unless the daemon
// counted its reply unconfirmed.
func TestMQTTKill9RoundsAnswerAtMostOnce(t *testing.T) {
	rounds := 30
	if testing.Short() {
		rounds = 8
	}
	port := loopbackPort(t)
	conf := filepath.Join(t.TempDir(), "mosquitto.conf")
	if err := os.WriteFile(conf, fmt.Appendf(nil, "listener %d 127.0.0.1\nallow_anonymous true\npersistence false\n", port), 0o600); err != nil {
		t.Fatal(err)
	}
	runServer(t, "/usr/sbin/mosquitto", port, "-c", conf)
	h, root := homeWithConfig(t, "schema_version = 3\n\n[providers.models.echo.default]\nmodel = \"echo\"\n\n"+
		"[agents.default]\nmodel_provider = \"echo.default\"\nrisk_profile = \"p\"\n\n[risk_profiles.p]\nlevel = \"supervised\"\n")
	appendFile(t, filepath.Join(root, "config.toml"), fmt.Sprintf(`
[channels.mqtt.home]
enabled = true
broker_url = "mqtt://127.0.0.1:%d"
client_id = "zc-kill"
chat_topic = "zc/+/in"
reply_topic = "zc/{sender}/out"

[peer_groups.me]
channel = "mqtt"
agents = ["default"]
external_peers = ["alice"]

[reliability]
channel_initial_backoff_secs = 1
channel_max_backoff_secs = 1
`, port))
	cl := paho.NewClient(paho.NewClientOptions().AddBroker(fmt.Sprintf("tcp://127.0.0.1:%d", port)).SetClientID("pub"))
	if tok := cl.Connect(); !tok.WaitTimeout(10*time.Second) || tok.Error() != nil {
		t.Fatalf("connect: %v", tok.Error())
	}
	defer cl.Disconnect(100)
	var mu sync.Mutex
	replies := map[string]int{}
	if tok := cl.Subscribe("zc/alice/out", 1, func(_ paho.Client, m paho.Message) {
		var r map[string]string
		_ = json.Unmarshal(m.Payload(), &r)
		mu.Lock()
		replies[r["in_reply_to"]]++
		mu.Unlock()
	}); !tok.WaitTimeout(10*time.Second) || tok.Error() != nil {
		t.Fatal(tok.Error())
	}
	publish := func(id string) {
		body, _ := json.Marshal(map[string]string{"id": id, "text": "hello " + id})
		if tok := cl.Publish("zc/alice/in", 1, false, body); !tok.WaitTimeout(10*time.Second) || tok.Error() != nil {
			t.Fatal(tok.Error())
		}
	}
	// The broker keeps the chat session (and so queues messages while the daemon is down) once it exists.
	d := start(t, env(h), "daemon")
	c := dialRPC(t, func() string { waitSocket(t, d, agentSock(h)); return agentSock(h) }())
	c.Initialize()
	waitUntil(t, "the mqtt channel up", 20*time.Second, func() bool {
		health := c.Call("health", map[string]any{}, 2)
		comp, _ := health["result"].(map[string]any)["components"].(map[string]any)["channel:mqtt.home"].(map[string]any)
		return comp != nil && comp["status"] == "ok"
	})
	_ = d.cmd.Process.Signal(syscall.SIGKILL)
	<-d.done
	sent := []string{}
	for round := range rounds {
		id := fmt.Sprintf("m%d", round)
		sent = append(sent, id)
		publish(id)
		if round > 0 && round%3 == 0 {
			publish(sent[round/2]) // the publisher retries an old message
		}
		d := start(t, env(h), "daemon")
		if round%4 != 0 {
			waitSocket(t, d, agentSock(h))
		}
		time.Sleep(time.Duration(round*37%150) * time.Millisecond)
		_ = d.cmd.Process.Signal(syscall.SIGKILL)
		<-d.done
	}
	d = start(t, env(h), "daemon")
	waitSocket(t, d, agentSock(h))
	publish("last")
	waitUntil(t, "the last message answered", 60*time.Second, func() bool { mu.Lock(); defer mu.Unlock(); return replies["last"] == 1 })
	signal(t, d, syscall.SIGTERM)
	d.wait(t, 30*time.Second)
	st, err := store.OpenChat(t.Context(), filepath.Join(root, "data", "sessions", "sessions.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	counts, err := st.ChannelCounts(t.Context(), "mqtt.home")
	if err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	missing := 0
	for _, id := range sent {
		switch replies[id] {
		case 0:
			missing++
		case 1:
		default:
			t.Errorf("message %s answered %d times", id, replies[id])
		}
	}
	// An unanswered message is one the daemon counted: its reply unconfirmed (cut between the publish and its
	// record) or failed (given up after the core's bounded retries).
	if missing > counts["out:unconfirmed"]+counts["out:failed"] {
		t.Errorf("%d of %d messages unanswered, only %d counted unconfirmed or failed (counts %v)", missing, len(sent),
			counts["out:unconfirmed"]+counts["out:failed"], counts)
	}
	t.Logf("%d rounds, %d unanswered, counts %v", rounds, missing, counts)
}

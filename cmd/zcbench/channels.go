package main

import (
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"time"

	paho "github.com/eclipse/paho.mqtt.golang"
)

// The platforms the channels section and the chaos run drive the daemon's chat channels through: the Telegram
// and Discord fakes (loopback servers speaking the Bot API and Gateway/REST v10) in zcbench's process, and the
// real Mosquitto and ngIRCd from Debian packages, each started here on a loopback port of its own.

const (
	mosquittoBin = "/usr/sbin/mosquitto"
	ngircdBin    = "/usr/sbin/ngircd"
	tgToken      = "777001:zcbench-token"
	tgOwner      = 42
	dcToken      = "MTAx.zcbench-bot.token_xyz"
	dcOwner      = "4242"
	dcChannel    = "5555"
)

// extServer is a platform server zcbench runs as a child process.
type extServer struct {
	name string
	cmd  *exec.Cmd
	dir  string
	port int
	out  *lockedBuffer
	done chan struct{}
}

// startExt runs bin with args (written for port, in dir) and waits until port accepts a connection.
func startExt(name, bin, dir string, port int, args ...string) (*extServer, error) {
	if _, err := os.Stat(bin); err != nil {
		return nil, fmt.Errorf("%s is required (.ci/run installs it): %w", bin, err)
	}
	s := &extServer{name: name, dir: dir, port: port, out: &lockedBuffer{}, done: make(chan struct{})}
	s.cmd = exec.Command(bin, args...)
	s.cmd.Stdout, s.cmd.Stderr = s.out, s.out
	if err := s.cmd.Start(); err != nil {
		return nil, err
	}
	go func() { _ = s.cmd.Wait(); close(s.done) }()
	deadline := time.Now().Add(15 * time.Second)
	for {
		c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", port))
		if err == nil {
			c.Close()
			return s, nil
		}
		select {
		case <-s.done:
			return nil, fmt.Errorf("%s exited before listening on %d: %s", name, port, lastLines(s.out.String(), 5))
		default:
		}
		if time.Now().After(deadline) {
			s.stop()
			return nil, fmt.Errorf("%s did not listen on %d within 15 s: %s", name, port, lastLines(s.out.String(), 5))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// stop ends the server (SIGTERM, then SIGKILL after 5 s) and removes its directory.
func (s *extServer) stop() {
	_ = s.cmd.Process.Signal(os.Interrupt)
	select {
	case <-s.done:
	case <-time.After(5 * time.Second):
		_ = s.cmd.Process.Kill()
		<-s.done
	}
	_ = os.RemoveAll(s.dir)
}

// startMosquitto runs a real broker on a free loopback port, anonymous, without persistence (the daemon's chat
// session lives as long as the broker: it is what queues messages while the daemon is down), with
// set_tcp_nodelay: without it Nagle holds the broker's second small write on a connection (the reply after
// the PUBACK) until the client's delayed ACK, and every round trip, the floor's too, reads about 40 ms.
func startMosquitto() (*extServer, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "zcb-mqtt")
	if err != nil {
		return nil, err
	}
	conf := filepath.Join(dir, "mosquitto.conf")
	if err := os.WriteFile(conf, fmt.Appendf(nil, "listener %d 127.0.0.1\nallow_anonymous true\npersistence false\nmax_queued_messages 100000\nset_tcp_nodelay true\n", port), 0o600); err != nil {
		return nil, err
	}
	return startExt("mosquitto", mosquittoBin, dir, port, "-c", conf)
}

// startNgircd runs a real ngIRCd on a free loopback port.
func startNgircd() (*extServer, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "zcb-irc")
	if err != nil {
		return nil, err
	}
	conf := filepath.Join(dir, "ngircd.conf")
	if err := os.WriteFile(conf, fmt.Appendf(nil, "[Global]\nName = irc.zcbench\nInfo = zcbench\nListen = 127.0.0.1\nPorts = %d\n"+
		"AdminInfo1 = z\nAdminInfo2 = z\nAdminEMail = z@example.com\n"+
		"[Options]\nPAM = no\nIdent = no\nDNS = no\nIncludeDir = %s\n", port, dir), 0o644); err != nil {
		return nil, err
	}
	return startExt("ngircd", ngircdBin, dir, port, "--nodaemon", "--config", conf)
}

// Config blocks binding the default agent to each platform; the peer group names its one allowed user.

func telegramTOML(url string) string {
	return fmt.Sprintf("[channels.telegram.default]\nenabled = true\nbot_token = %q\napi_base_url = %q\npoll_timeout_secs = 1\n\n"+
		"[peer_groups.tg]\nchannel = \"telegram\"\nagents = [\"default\"]\nexternal_peers = [\"%d\"]\n\n", tgToken, url, tgOwner)
}

func mqttTOML(port int) string {
	return fmt.Sprintf("[channels.mqtt.home]\nenabled = true\nbroker_url = \"mqtt://127.0.0.1:%d\"\nclient_id = \"zcbench\"\n"+
		"chat_topic = \"zc/+/in\"\nreply_topic = \"zc/{sender}/out\"\n\n"+
		"[peer_groups.mq]\nchannel = \"mqtt\"\nagents = [\"default\"]\nexternal_peers = [\"alice\"]\n\n", port)
}

func ircTOML(port int) string {
	return fmt.Sprintf("[channels.irc.local]\nenabled = true\nserver = \"127.0.0.1\"\nport = %d\nuse_tls = false\nnickname = \"zcbot\"\n"+
		"channels = [\"#zc\"]\n\n[peer_groups.irc]\nchannel = \"irc\"\nagents = [\"default\"]\nexternal_peers = [\"alice\"]\n\n", port)
}

func discordTOML(url string) string {
	return fmt.Sprintf("[channels.discord.default]\nenabled = true\nbot_token = %q\napi_base_url = %q\n\n"+
		"[peer_groups.dc]\nchannel = \"discord\"\nagents = [\"default\"]\nexternal_peers = [%q]\n\n", dcToken, url, dcOwner)
}

// channelReliability keeps a channel's reconnect backoff short, as a test's does.
const channelReliability = "channel_initial_backoff_secs = 1\nchannel_max_backoff_secs = 1\n"

// mqttPeer is a paho client of the broker: it publishes chat messages and keeps every reply it receives on its
// subscription, by the id it answers, with the time it arrived.
type mqttPeer struct {
	c    paho.Client
	mu   sync.Mutex
	got  map[string]int // in_reply_to → replies received
	wake chan struct{}  // closed and replaced on every reply
}

func dialMQTT(port int, clientID string) (*mqttPeer, error) {
	p := &mqttPeer{got: map[string]int{}, wake: make(chan struct{})}
	p.c = paho.NewClient(paho.NewClientOptions().AddBroker(fmt.Sprintf("tcp://127.0.0.1:%d", port)).SetClientID(clientID).
		SetAutoReconnect(false))
	if tok := p.c.Connect(); !tok.WaitTimeout(10*time.Second) || tok.Error() != nil {
		return nil, fmt.Errorf("mqtt peer %s: connect: %v", clientID, tok.Error())
	}
	return p, nil
}

func (p *mqttPeer) close() { p.c.Disconnect(100) }

// subscribeReplies keeps the replies published on topic: JSON objects whose in_reply_to names the message.
func (p *mqttPeer) subscribeReplies(topic string, decode func([]byte) string) error {
	tok := p.c.Subscribe(topic, 1, func(_ paho.Client, m paho.Message) {
		id := decode(m.Payload())
		p.mu.Lock()
		p.got[id]++
		close(p.wake)
		p.wake = make(chan struct{})
		p.mu.Unlock()
	})
	if !tok.WaitTimeout(10*time.Second) || tok.Error() != nil {
		return fmt.Errorf("mqtt subscribe %s: %v", topic, tok.Error())
	}
	return nil
}

func (p *mqttPeer) publish(topic string, body []byte) error {
	tok := p.c.Publish(topic, 1, false, body)
	if !tok.WaitTimeout(10 * time.Second) {
		return errors.New("mqtt publish: no PUBACK within 10 s")
	}
	return tok.Error()
}

// replies is how many replies to id arrived.
func (p *mqttPeer) replies(id string) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.got[id]
}

// waitReply waits until a reply to id arrived, at most within.
func (p *mqttPeer) waitReply(id string, within time.Duration) error {
	deadline := time.NewTimer(within)
	defer deadline.Stop()
	for {
		p.mu.Lock()
		n, wake := p.got[id], p.wake
		p.mu.Unlock()
		if n > 0 {
			return nil
		}
		select {
		case <-wake:
		case <-deadline.C:
			return fmt.Errorf("no MQTT reply to %s within %s", id, within)
		}
	}
}

func (p *mqttPeer) all() map[string]int {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make(map[string]int, len(p.got))
	for k, v := range p.got {
		out[k] = v
	}
	return out
}

// waitFor polls cond until it holds or within passes; what names the awaited thing in the error.
func waitFor(what string, within time.Duration, cond func() bool) error {
	return waitEvery(poll, what, within, cond)
}

// waitEvery is waitFor with its own step, for a condition that costs a call to the daemon.
func waitEvery(step time.Duration, what string, within time.Duration, cond func() bool) error {
	deadline := time.Now().Add(within)
	for !cond() {
		if time.Now().After(deadline) {
			return fmt.Errorf("timed out after %s waiting for %s", within, what)
		}
		time.Sleep(step)
	}
	return nil
}

// poll is waitFor's step: fine enough that it does not quantize a millisecond-scale measurement.
var poll = 100 * time.Microsecond

// channelHealthy reports whether the daemon's health lists channel:<id> as ok.
func channelHealthy(sock, id string) bool {
	c, _, err := dialInit(sock)
	if err != nil {
		return false
	}
	defer c.Close()
	var h struct {
		Components map[string]struct {
			Status string `json:"status"`
		} `json:"components"`
	}
	if err := c.callInto("health", map[string]any{}, &h); err != nil {
		return false
	}
	return h.Components["channel:"+id].Status == "ok"
}

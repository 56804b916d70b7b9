package mqtt

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	paho "github.com/eclipse/paho.mqtt.golang"

	"github.com/zeroclaw-go/zeroclaw/internal/channel"
	"github.com/zeroclaw-go/zeroclaw/internal/config"
)

const mosquittoBin = "/usr/sbin/mosquitto"

// broker is a real mosquitto on a loopback port, restartable on the same port.
type broker struct {
	t    *testing.T
	conf string
	port int
	cmd  *exec.Cmd
}

func startBroker(t *testing.T) *broker {
	t.Helper()
	if _, err := os.Stat(mosquittoBin); err != nil {
		t.Fatalf("mosquitto is required (apt-get install mosquitto; .ci/run installs it): %v", err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	dir := t.TempDir()
	b := &broker{t: t, conf: filepath.Join(dir, "mosquitto.conf"), port: port}
	// Persistence on: a restarted broker keeps the chat session's unacknowledged messages, as a real one does.
	conf := fmt.Sprintf("listener %d 127.0.0.1\nallow_anonymous true\npersistence true\npersistence_location %s/\nautosave_interval 1\n", port, dir)
	if err := os.WriteFile(b.conf, []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	b.start()
	t.Cleanup(b.stop)
	return b
}

func (b *broker) url() string { return fmt.Sprintf("mqtt://127.0.0.1:%d", b.port) }

func (b *broker) start() {
	b.t.Helper()
	b.cmd = exec.Command(mosquittoBin, "-c", b.conf)
	if err := b.cmd.Start(); err != nil {
		b.t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", b.port))
		if err == nil {
			c.Close()
			return
		}
		if time.Now().After(deadline) {
			b.t.Fatalf("mosquitto did not listen on %d: %v", b.port, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// stop ends the broker with SIGTERM (it saves its sessions) and waits for it.
func (b *broker) stop() {
	if b.cmd != nil {
		_ = b.cmd.Process.Signal(os.Interrupt)
		_ = b.cmd.Wait()
		b.cmd = nil
	}
}

func peer(t *testing.T, b *broker, id string) paho.Client {
	t.Helper()
	c := paho.NewClient(paho.NewClientOptions().AddBroker(strings.Replace(b.url(), "mqtt://", "tcp://", 1)).SetClientID(id))
	if tok := c.Connect(); !tok.WaitTimeout(10*time.Second) || tok.Error() != nil {
		t.Fatalf("peer connect: %v", tok.Error())
	}
	t.Cleanup(func() { c.Disconnect(100) })
	return c
}

func pub(t *testing.T, c paho.Client, topic string, v any) {
	t.Helper()
	body, ok := v.([]byte)
	if !ok {
		body, _ = json.Marshal(v)
	}
	if tok := c.Publish(topic, 1, false, body); !tok.WaitTimeout(10*time.Second) || tok.Error() != nil {
		t.Fatalf("publish: %v", tok.Error())
	}
}

// replies subscribes to a reply topic and returns the channel of decoded replies.
func replies(t *testing.T, c paho.Client, topic string) <-chan Reply {
	t.Helper()
	ch := make(chan Reply, 64)
	tok := c.Subscribe(topic, 1, func(_ paho.Client, m paho.Message) {
		var r Reply
		if err := json.Unmarshal(m.Payload(), &r); err != nil {
			t.Errorf("reply is not JSON: %q", m.Payload())
		}
		ch <- r
	})
	if !tok.WaitTimeout(10*time.Second) || tok.Error() != nil {
		t.Fatalf("subscribe: %v", tok.Error())
	}
	return ch
}

// core stands in for the channel core: it records events by EventID (the core's UNIQUE key), counts every
// Deliver call, and can be told to refuse the next calls.
type core struct {
	mu       sync.Mutex
	calls    int
	events   map[string]channel.Inbound
	order    []string
	refuse   int
	progress int
	got      chan channel.Inbound
}

func newCore() *core {
	return &core{events: map[string]channel.Inbound{}, got: make(chan channel.Inbound, 64)}
}

func (c *core) Deliver(_ context.Context, ev channel.Inbound) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.calls++
	if c.refuse > 0 {
		c.refuse--
		return errors.New("disk full")
	}
	if _, dup := c.events[ev.EventID]; !dup {
		c.events[ev.EventID] = ev
		c.order = append(c.order, ev.EventID)
		c.got <- ev
	}
	return nil
}

func (c *core) Progress() {
	c.mu.Lock()
	c.progress++
	c.mu.Unlock()
}

func (c *core) next(t *testing.T) channel.Inbound {
	t.Helper()
	select {
	case ev := <-c.got:
		return ev
	case <-time.After(20 * time.Second):
		t.Fatal("no event reached the core")
	}
	return channel.Inbound{}
}

func (c *core) stats() (calls, events int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.calls, len(c.events)
}

func cfgFor(b *broker) config.MQTTConfig {
	return config.MQTTConfig{Enabled: true, BrokerURL: b.url(), ClientID: "zc", QoS: 1, KeepAliveSecs: 30,
		ChatTopic: "zc/+/in", ReplyTopic: "zc/{sender}/out"}
}

// running starts Run in the background. done is closed when Run returns; stop cancels it and returns what Run
// returned.
func running(t *testing.T, a *Adapter, d channel.Deliverer) (done <-chan struct{}, stop func() error) {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	ch := make(chan struct{})
	var err error
	go func() { err = a.Run(ctx, d); close(ch) }()
	stop = func() error { cancel(); <-ch; return err }
	t.Cleanup(func() { _ = stop() })
	return ch, stop
}

func waitConnected(t *testing.T, a *Adapter) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		a.mu.Lock()
		ok := a.client != nil
		a.mu.Unlock()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("the adapter did not connect")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestChatTurnThroughMosquitto(t *testing.T) {
	b := startBroker(t)
	a, err := New(channel.ID{Type: "mqtt", Alias: "home"}, cfgFor(b), nil)
	if err != nil {
		t.Fatal(err)
	}
	d := newCore()
	running(t, a, d)
	waitConnected(t, a)
	alice := peer(t, b, "alice")
	out := replies(t, alice, "zc/alice/out")

	pub(t, alice, "zc/alice/in", Message{ID: "m1", Text: "list my files"})
	ev := d.next(t)
	if ev.EventID != "alice/m1" || ev.Sender != "alice" || ev.ReplyTarget != "alice" || ev.Text != "list my files" || ev.Kind != channel.KindMessage {
		t.Fatalf("event: %+v", ev)
	}
	// The tool call needs approval: the prompt goes out, the answer comes back as an approval event.
	if _, err := a.Prompt(t.Context(), channel.ApprovalPrompt{ReplyTarget: "alice", Token: "tok-7", Text: "shell: ls"}); err != nil {
		t.Fatal(err)
	}
	if r := <-out; r.Type != "approval" || r.Token != "tok-7" || r.Text != "shell: ls" {
		t.Fatalf("prompt: %+v", r)
	}
	pub(t, alice, "zc/alice/in", Message{ID: "m2", Approval: &Approval{Token: "tok-7", Decision: "allow_once"}})
	ev = d.next(t)
	if ev.Kind != channel.KindApproval || ev.Approval == nil || ev.Approval.Token != "tok-7" || ev.Approval.Decision != "allow_once" {
		t.Fatalf("approval: %+v", ev)
	}
	sent, err := a.Send(t.Context(), channel.Outbound{ReplyTarget: "alice", ReplyTo: "m1", Text: "a.txt b.txt", Key: "out-1"})
	if err != nil || sent.MessageID != "out-1" {
		t.Fatalf("send: %+v %v", sent, err)
	}
	if r := <-out; r.Type != "message" || r.ID != "out-1" || r.InReplyTo != "m1" || r.Text != "a.txt b.txt" {
		t.Fatalf("reply: %+v", r)
	}
	// Bob's reply topic got nothing of alice's conversation.
	if _, err := a.Send(t.Context(), channel.Outbound{ReplyTarget: "bob/../alice", Text: "x"}); !errors.Is(err, channel.ErrPermanent) {
		t.Fatalf("a reply target with a topic separator: %v", err)
	}
}

func TestUnrecordedMessageIsRedeliveredAndRecordedOnce(t *testing.T) {
	b := startBroker(t)
	a, err := New(channel.ID{Type: "mqtt", Alias: "home"}, cfgFor(b), nil)
	if err != nil {
		t.Fatal(err)
	}
	d := newCore()
	d.refuse = 1 // the first Deliver fails: not recorded, so not acknowledged
	done, first := running(t, a, d)
	waitConnected(t, a)
	alice := peer(t, b, "alice")
	pub(t, alice, "zc/alice/in", Message{ID: "m1", Text: "hello"})
	select {
	case <-done:
		if err := first(); err == nil || !strings.Contains(err.Error(), "did not record") {
			t.Fatalf("Run after a refused message: %v", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("Run kept going after the core refused a message")
	}
	// The supervisor runs it again: the broker redelivers the unacknowledged message, with the same id.
	_, stop := running(t, a, d)
	if ev := d.next(t); ev.EventID != "alice/m1" {
		t.Fatalf("redelivered %+v", ev)
	}
	// A second Run after an acknowledged message gets nothing again; a publisher's retry of m1 is the same event.
	pub(t, alice, "zc/alice/in", Message{ID: "m1", Text: "hello"})
	pub(t, alice, "zc/alice/in", Message{ID: "m2", Text: "next"})
	if ev := d.next(t); ev.EventID != "alice/m2" {
		t.Fatalf("after the retry: %+v", ev)
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	if calls, events := d.stats(); events != 2 || calls != 4 {
		t.Fatalf("calls %d events %d, want 4 calls (refused, redelivery, retry, m2) and 2 events", calls, events)
	}
}

func TestBrokerRestartEndsRunAndTheNextRunResumes(t *testing.T) {
	b := startBroker(t)
	a, err := New(channel.ID{Type: "mqtt", Alias: "home"}, cfgFor(b), nil)
	if err != nil {
		t.Fatal(err)
	}
	d := newCore()
	done, first := running(t, a, d)
	waitConnected(t, a)
	b.stop()
	select {
	case <-done:
		if err := first(); err == nil {
			t.Fatal("Run returned nil for a lost broker")
		}
	case <-time.After(30 * time.Second):
		t.Fatal("a lost broker did not end Run")
	}
	// While the broker is down one Run is one dial that fails: the adapter itself never loops (the core's
	// supervisor owns the backoff).
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	err = a.Run(ctx, d)
	cancel()
	if err == nil || !strings.Contains(err.Error(), "connect") {
		t.Fatalf("Run with the broker down: %v", err)
	}
	if _, err := a.Send(t.Context(), channel.Outbound{ReplyTarget: "alice", Text: "x"}); !errors.Is(err, ErrNotConnected) {
		t.Fatalf("send while down: %v", err)
	}
	b.start()
	running(t, a, d)
	waitConnected(t, a)
	alice := peer(t, b, "alice")
	pub(t, alice, "zc/alice/in", Message{ID: "after", Text: "back"})
	if ev := d.next(t); ev.EventID != "alice/after" {
		t.Fatalf("after the restart: %+v", ev)
	}
}

func TestHostilePayloadsAreRefusedAndAcknowledged(t *testing.T) {
	b := startBroker(t)
	a, err := New(channel.ID{Type: "mqtt", Alias: "home"}, cfgFor(b), nil)
	if err != nil {
		t.Fatal(err)
	}
	d := newCore()
	running(t, a, d)
	waitConnected(t, a)
	m := peer(t, b, "mallory")
	pub(t, m, "zc/mallory/in", []byte("not json"))
	pub(t, m, "zc/mallory/in", Message{Text: "no id"})
	pub(t, m, "zc/mallory/in", Message{ID: strings.Repeat("x", MaxIDBytes+1), Text: "long id"})
	pub(t, m, "zc/mallory/in", Message{ID: "e", Text: "   "})
	pub(t, m, "zc/mallory/in", Message{ID: "a", Approval: &Approval{Token: "t", Decision: "sudo"}})
	pub(t, m, "zc/mallory/in", []byte(`{"id":"big","text":"`+strings.Repeat("a", MaxPayload)+`"}`))
	pub(t, m, "zc/mallory/in", Message{ID: "ok", Text: "fine"})
	if ev := d.next(t); ev.EventID != "mallory/ok" {
		t.Fatalf("first event delivered: %+v", ev)
	}
	if calls, _ := d.stats(); calls != 1 {
		t.Fatalf("%d Deliver calls: a refused payload reached the core", calls)
	}
}

func TestDecodeTopicAndConfig(t *testing.T) {
	if s, ok := senderOf("zc/+/in", "zc/alice/in"); !ok || s != "alice" {
		t.Fatal(s, ok)
	}
	for _, topic := range []string{"zc/alice/out", "zc/a/b/in", "zc//in", "other/alice/in"} {
		if _, ok := senderOf("zc/+/in", topic); ok {
			t.Errorf("%q matched", topic)
		}
	}
	bad := []config.MQTTConfig{
		{BrokerURL: "mqtt://h", ClientID: "c", ChatTopic: "zc/#", ReplyTopic: "zc/{sender}"},
		{BrokerURL: "mqtt://h", ClientID: "c", ChatTopic: "zc/+/+", ReplyTopic: "zc/{sender}"},
		{BrokerURL: "mqtt://h", ClientID: "c", ChatTopic: "zc/+", ReplyTopic: "zc/out"},
		{BrokerURL: "mqtt://h", ClientID: "c", ChatTopic: "zc/+", ReplyTopic: "zc/+/{sender}"},
		{BrokerURL: "mqtt://h", ChatTopic: "zc/+", ReplyTopic: "zc/{sender}"},
	}
	for _, c := range bad {
		if _, err := New(channel.ID{Type: "mqtt", Alias: "x"}, c, nil); err == nil {
			t.Errorf("New accepted %+v", c)
		}
	}
}

func FuzzDecode(f *testing.F) {
	f.Add("zc/alice/in", []byte(`{"id":"1","text":"hi"}`))
	f.Add("zc/bob/in", []byte(`{"id":"2","approval":{"token":"t","decision":"allow_once"}}`))
	a := &Adapter{c: config.MQTTConfig{ChatTopic: "zc/+/in"}}
	f.Fuzz(func(t *testing.T, topic string, payload []byte) {
		ev, why := a.decode(topic, payload)
		if why != "" {
			return
		}
		if ev.Sender == "" || strings.ContainsAny(ev.Sender, "/+#\x00") || len(ev.Sender) > MaxSender {
			t.Fatalf("sender %q", ev.Sender)
		}
		if !strings.HasPrefix(ev.EventID, ev.Sender+"/") || len(ev.MessageID) > MaxIDBytes {
			t.Fatalf("event id %q", ev.EventID)
		}
		if ev.Kind == channel.KindApproval && ev.Approval == nil {
			t.Fatal("approval without answer")
		}
	})
}

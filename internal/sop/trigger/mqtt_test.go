package trigger

import (
	"context"
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

	"github.com/zeroclaw-go/zeroclaw/internal/config"
	"github.com/zeroclaw-go/zeroclaw/internal/sop"
	"github.com/zeroclaw-go/zeroclaw/internal/sop/engine"
	"github.com/zeroclaw-go/zeroclaw/internal/sop/runstore"
)

const mosquittoBin = "/usr/sbin/mosquitto"

// startMosquitto runs a real broker on a free loopback port for the test and returns its mqtt:// URL.
func startMosquitto(t *testing.T) string {
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
	conf := filepath.Join(dir, "mosquitto.conf")
	if err := os.WriteFile(conf, fmt.Appendf(nil, "listener %d 127.0.0.1\nallow_anonymous true\npersistence false\n", port), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(mosquittoBin, "-c", conf)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	deadline := time.Now().Add(10 * time.Second)
	for {
		c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", port))
		if err == nil {
			c.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("mosquitto did not listen on %d: %v", port, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	return fmt.Sprintf("mqtt://127.0.0.1:%d", port)
}

func publisher(t *testing.T, broker string) paho.Client {
	t.Helper()
	o := paho.NewClientOptions().AddBroker(strings.Replace(broker, "mqtt://", "tcp://", 1)).SetClientID("pub-" + t.Name())
	c := paho.NewClient(o)
	if tok := c.Connect(); !tok.WaitTimeout(10*time.Second) || tok.Error() != nil {
		t.Fatalf("publisher connect: %v", tok.Error())
	}
	t.Cleanup(func() { c.Disconnect(100) })
	return c
}

func publish(t *testing.T, c paho.Client, topic, payload string) {
	t.Helper()
	if tok := c.Publish(topic, 1, false, payload); !tok.WaitTimeout(10*time.Second) || tok.Error() != nil {
		t.Fatalf("publish: %v", tok.Error())
	}
}

// recorder is a Dispatcher that keeps every event and can hand it on to a real engine.
type recorder struct {
	mu     sync.Mutex
	events []sop.Event
	next   Dispatcher
	fail   func(n int) error // the error of the n-th delivery (1-based), after next took it
	got    chan sop.Event
}

func newRecorder(next Dispatcher) *recorder {
	return &recorder{next: next, got: make(chan sop.Event, 64)}
}

func (r *recorder) Dispatch(ctx context.Context, ev sop.Event) ([]engine.Result, error) {
	var res []engine.Result
	var err error
	if r.next != nil {
		res, err = r.next.Dispatch(ctx, ev)
	}
	r.mu.Lock()
	r.events = append(r.events, ev)
	n := len(r.events)
	r.mu.Unlock()
	if err == nil && r.fail != nil {
		err = r.fail(n)
	}
	r.got <- ev
	return res, err
}

func (r *recorder) wait(t *testing.T) sop.Event {
	t.Helper()
	select {
	case ev := <-r.got:
		return ev
	case <-time.After(20 * time.Second):
		t.Fatal("no MQTT event dispatched")
	}
	return sop.Event{}
}

func runSource(t *testing.T, m *MQTT) context.CancelFunc {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() { defer close(done); _ = m.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	return func() { cancel(); <-done }
}

// waitSubscribed waits until the source subscribed (Run's connect is asynchronous to the test).
func waitSubscribed(t *testing.T, m *MQTT, n int) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		m.mu.Lock()
		k := len(m.subscribed)
		m.mu.Unlock()
		if k >= n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the source never subscribed to %d filters", n)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestMQTTDispatchesSOPTopicsFromARealBroker(t *testing.T) {
	broker := startMosquitto(t)
	rec := newRecorder(nil)
	topics := []string{"alerts/+/cpu", "bad/#/x", "plant/#"}
	m, err := NewMQTT(MQTTOptions{Alias: "home", Config: config.MQTTConfig{Enabled: true, BrokerURL: broker, ClientID: "zc-1", QoS: 1, KeepAliveSecs: 30},
		Topics: func() []string { return topics }, Dispatcher: rec, PayloadMax: 16})
	if err != nil {
		t.Fatal(err)
	}
	runSource(t, m)
	waitSubscribed(t, m, 2)
	pub := publisher(t, broker)
	publish(t, pub, "alerts/h1/cpu", `{"value":90,"pad":"xxxxxxxxxxxxxxxxxxxxxxxx"}`)
	ev := rec.wait(t)
	if ev.Source != sop.SourceMQTT || ev.Topic != "alerts/h1/cpu" || ev.Payload != `{"value":90,"pad` || !strings.HasPrefix(ev.Key, "mqtt:home:") {
		t.Fatalf("event: %+v", ev)
	}
	publish(t, pub, "unrelated/topic", "x") // not subscribed
	publish(t, pub, "plant/a/b", "\xff\xfe ok")
	ev = rec.wait(t)
	if ev.Topic != "plant/a/b" || ev.Payload != "\uFFFD ok" {
		t.Fatalf("second event (invalid UTF-8 replaced): %+v", ev)
	}
	// A reload that drops a SOP's topic unsubscribes it.
	topics = []string{"plant/#"}
	m.Changed()
	publish(t, pub, "alerts/h2/cpu", `{"value":99}`)
	publish(t, pub, "plant/c", "still")
	if ev = rec.wait(t); ev.Topic != "plant/c" {
		t.Fatalf("a dropped topic was still delivered: %+v", ev)
	}
}

// QoS 1 redelivery: the daemon dies (or the engine fails) after the engine took a message but before it was
// acknowledged; the broker redelivers it on the next connection with the same message id, and the engine
// admits one run for the two deliveries.
func TestMQTTRedeliveryAdmitsOneRun(t *testing.T) {
	broker := startMosquitto(t)
	eng := engine.New(t.Context(), engine.Config{Store: runstore.NewMemory(), Settings: engine.Defaults()})
	t.Cleanup(eng.Close)
	eng.Reload([]sop.Sop{{Name: "alert", Description: "d", Version: "0.1.0", Priority: sop.PriorityNormal,
		ExecutionMode: sop.ModeAuto, MaxConcurrent: 4, AdmissionPolicy: sop.AdmitParallel,
		Triggers: []sop.Trigger{{Type: sop.SourceMQTT, Topic: "alerts/#"}},
		Steps:    []sop.Step{{Number: 1, Title: "Look", Kind: sop.KindExecute}}}})
	rec := newRecorder(eng)
	rec.fail = func(n int) error {
		if n == 1 {
			return errors.New("killed before the ack")
		}
		return nil
	}
	cfg := config.MQTTConfig{Enabled: true, BrokerURL: broker, ClientID: "zc-redeliver", QoS: 1, KeepAliveSecs: 30}
	opts := MQTTOptions{Alias: "home", Config: cfg, Topics: func() []string { return []string{"alerts/#"} }, Dispatcher: rec}
	m1, err := NewMQTT(opts)
	if err != nil {
		t.Fatal(err)
	}
	stop1 := runSource(t, m1)
	waitSubscribed(t, m1, 1)
	pub := publisher(t, broker) // one publisher: a second one under the same client id would take its session
	publish(t, pub, "alerts/disk", `{"free":1}`)
	first := rec.wait(t)
	stop1() // the message was never acknowledged
	m2, err := NewMQTT(opts)
	if err != nil {
		t.Fatal(err)
	}
	runSource(t, m2)
	second := rec.wait(t)
	if first.Key == "" || second.Key != first.Key || second.Payload != first.Payload {
		t.Fatalf("redelivery: first %+v second %+v", first, second)
	}
	if runs := eng.Runs("alert"); len(runs) != 1 {
		t.Fatalf("two deliveries of one message admitted %d runs: %+v", len(runs), runs)
	}
	// A new message (a fresh id) is a new run.
	publish(t, pub, "alerts/disk", `{"free":2}`)
	rec.wait(t)
	if runs := eng.Runs("alert"); len(runs) != 2 {
		t.Fatalf("a second message admitted %d runs in all, want 2", len(runs))
	}
}

func TestMQTTConfigRefused(t *testing.T) {
	rec := newRecorder(nil)
	for _, c := range []struct {
		cfg  config.MQTTConfig
		want string
	}{
		{config.MQTTConfig{BrokerURL: "tcp://x", ClientID: "c", QoS: 1}, "must start with 'mqtt://' or 'mqtts://'"},
		{config.MQTTConfig{BrokerURL: "mqtts://x", ClientID: "c", QoS: 1}, "use_tls must agree"},
		{config.MQTTConfig{BrokerURL: "mqtt://x", ClientID: "c", QoS: 7}, "qos must be 0, 1, or 2"},
		{config.MQTTConfig{BrokerURL: "mqtt://x", QoS: 1}, "client_id must not be empty"},
	} {
		if _, err := NewMQTT(MQTTOptions{Alias: "a", Config: c.cfg, Dispatcher: rec}); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want %q", c.cfg, err, c.want)
		}
	}
	for f, ok := range map[string]bool{"a/b": true, "a/+/c": true, "#": true, "a/#": true, "a/#/b": false, "a+/b": false, "": false, "a\x00": false, "x#": false} {
		if ValidFilter(f) != ok {
			t.Errorf("ValidFilter(%q) = %v", f, !ok)
		}
	}
}

// A broker that is not there yet: the source retries and connects once it is up.
func TestMQTTConnectsWhenTheBrokerComesUp(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	rec := newRecorder(nil)
	m, err := NewMQTT(MQTTOptions{Alias: "late", Config: config.MQTTConfig{BrokerURL: "mqtt://" + addr, ClientID: "zc-late", QoS: 1}, Dispatcher: rec,
		Topics: func() []string { return []string{"t"} }})
	if err != nil {
		t.Fatal(err)
	}
	stop := runSource(t, m)
	stop() // Run returns promptly when cancelled while it cannot connect
}

// A packet over the bound never reaches memory whole: the connection drops before paho reads it, paho
// reconnects, and the next message arrives.
func TestMQTTRefusesAnOversizedPacket(t *testing.T) {
	broker := startMosquitto(t)
	rec := newRecorder(nil)
	m, err := NewMQTT(MQTTOptions{Alias: "small", Config: config.MQTTConfig{Enabled: true, BrokerURL: broker, ClientID: "zc-small", QoS: 0, KeepAliveSecs: 30},
		Topics: func() []string { return []string{"big/#"} }, Dispatcher: rec, MaxPacket: 4096})
	if err != nil {
		t.Fatal(err)
	}
	runSource(t, m)
	waitSubscribed(t, m, 1)
	pub := publisher(t, broker)
	if tok := pub.Publish("big/one", 0, false, strings.Repeat("x", 64<<10)); !tok.WaitTimeout(10*time.Second) || tok.Error() != nil {
		t.Fatal(tok.Error())
	}
	// After the drop the source reconnects and subscribes again; keep publishing a small message until one
	// arrives (QoS 0: one sent while it was away is lost, as the protocol says).
	deadline := time.Now().Add(30 * time.Second)
	for {
		if tok := pub.Publish("big/two", 0, false, "small"); !tok.WaitTimeout(10*time.Second) || tok.Error() != nil {
			t.Fatal(tok.Error())
		}
		select {
		case ev := <-rec.got:
			if ev.Topic != "big/two" || ev.Payload != "small" {
				t.Fatalf("the oversized message got through: %q %d bytes", ev.Topic, len(ev.Payload))
			}
			return
		case <-time.After(200 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatal("no message after the oversized one")
		}
	}
}

func TestPacketLimitParsesHeaders(t *testing.T) {
	// Two packets (PINGRESP: 0xd0 0x00; a PUBLISH of remaining length 200: 0x30 0xc8 0x01 + body), then one
	// announcing 2^21 bytes: the read that meets it fails (the bytes before it in that read are dropped with
	// the connection).
	var stream []byte
	stream = append(stream, 0xd0, 0x00, 0x30, 0xc8, 0x01)
	stream = append(stream, make([]byte, 200)...)
	stream = append(stream, 0x30, 0x80, 0x80, 0x80, 0x01)
	a, b := net.Pipe()
	go func() { _, _ = a.Write(stream); a.Close() }()
	p := &packetLimit{Conn: b, max: 1000}
	buf := make([]byte, 7)
	total := 0
	var err error
	for err == nil {
		var n int
		n, err = p.Read(buf)
		total += n
	}
	if total < 5 || total > 205 || err == nil || !strings.Contains(err.Error(), "more than 1000 bytes") {
		t.Fatalf("read %d bytes, err %v", total, err)
	}
}

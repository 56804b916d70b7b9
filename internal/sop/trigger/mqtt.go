package trigger

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	paho "github.com/eclipse/paho.mqtt.golang"

	"github.com/zeroclaw-go/zeroclaw/internal/config"
	"github.com/zeroclaw-go/zeroclaw/internal/sop"
)

// Bounds of one MQTT source.
const (
	MaxTopics      = 256  // topic filters subscribed
	MaxTopicBytes  = 1024 // one filter
	maxBackoff     = time.Minute
	connectTimeout = 10 * time.Second
)

// MQTTOptions configure an MQTT source.
type MQTTOptions struct {
	Alias  string // channels.mqtt.<alias>
	Config config.MQTTConfig
	// Topics returns the topic filters of the loaded SOPs' mqtt triggers; they are subscribed with the
	// configured ones, at connect and after Changed.
	Topics     func() []string
	Dispatcher Dispatcher
	PayloadMax int // [sop] untrusted_payload_max_bytes (0: HardPayloadMax)
	MaxPacket  int // the largest packet accepted from the broker (0: MaxPacketBytes)
	Logger     *slog.Logger
}

// MQTT subscribes to one broker and dispatches every message as an mqtt event. With QoS 1 or 2 its session
// is kept by the broker (clean session off, under the configured client id) and a message is acknowledged
// only after the engine took it: a message the daemon did not finish, because it was killed or the engine
// refused it, is redelivered with the same message id, and its dedup key (alias, message id, topic and
// payload) makes the engine admit it once.
type MQTT struct {
	o   MQTTOptions
	log *slog.Logger

	mu         sync.Mutex // guards the fields below
	client     paho.Client
	subscribed []string
}

// NewMQTT checks the config (as upstream's validate) and returns the source; Run connects.
func NewMQTT(o MQTTOptions) (*MQTT, error) {
	c := o.Config
	if c.QoS < 0 || c.QoS > 2 {
		return nil, fmt.Errorf("mqtt %s: qos must be 0, 1, or 2, got %d", o.Alias, c.QoS)
	}
	if _, err := brokerURL(c); err != nil {
		return nil, fmt.Errorf("mqtt %s: %w", o.Alias, err)
	}
	if strings.TrimSpace(c.ClientID) == "" {
		return nil, fmt.Errorf("mqtt %s: client_id must not be empty", o.Alias)
	}
	if o.Dispatcher == nil {
		return nil, errors.New("mqtt: no dispatcher")
	}
	lg := o.Logger
	if lg == nil {
		lg = slog.New(slog.DiscardHandler)
	}
	return &MQTT{o: o, log: lg.With("component", "sop-mqtt", "channel", o.Alias)}, nil
}

// brokerURL turns mqtt://host[:port] and mqtts://host[:port] into paho's tcp:// and ssl:// forms.
func brokerURL(c config.MQTTConfig) (string, error) {
	u, err := url.Parse(c.BrokerURL)
	if err != nil || u.Host == "" {
		return "", fmt.Errorf("broker_url must be mqtt://host[:port] or mqtts://host[:port], got: %s", c.BrokerURL)
	}
	switch {
	case u.Scheme == "mqtt" && !c.UseTLS:
		if u.Port() == "" {
			u.Host += ":1883"
		}
		return "tcp://" + u.Host, nil
	case u.Scheme == "mqtts" && c.UseTLS:
		if u.Port() == "" {
			u.Host += ":8883"
		}
		return "ssl://" + u.Host, nil
	case u.Scheme == "mqtt" || u.Scheme == "mqtts":
		return "", errors.New("use_tls must agree with the broker_url scheme (mqtts:// needs use_tls = true, mqtt:// false)")
	}
	return "", fmt.Errorf("broker_url must start with 'mqtt://' or 'mqtts://', got: %s", c.BrokerURL)
}

// ValidFilter reports whether f is a well-formed MQTT topic filter ("#" only last and alone in its level,
// "+" alone in its level, no NUL, bounded).
func ValidFilter(f string) bool {
	if f == "" || len(f) > MaxTopicBytes || strings.ContainsRune(f, 0) {
		return false
	}
	levels := strings.Split(f, "/")
	for i, l := range levels {
		if strings.Contains(l, "#") && (l != "#" || i != len(levels)-1) {
			return false
		}
		if strings.Contains(l, "+") && l != "+" {
			return false
		}
	}
	return true
}

// filters is the sorted union of the configured and the SOPs' topic filters, the invalid ones dropped (and
// logged) and at most MaxTopics.
func (m *MQTT) filters() []string {
	all := append([]string(nil), m.o.Config.Topics...)
	if m.o.Topics != nil {
		all = append(all, m.o.Topics()...)
	}
	slices.Sort(all)
	all = slices.Compact(all)
	out := all[:0]
	for _, f := range all {
		if !ValidFilter(f) {
			m.log.Warn("MQTT SOP listener: topic filter refused", "topic", sop.CapUntrusted(f, 200))
			continue
		}
		out = append(out, f)
	}
	if len(out) > MaxTopics {
		m.log.Warn("MQTT SOP listener: too many topic filters; the rest are not subscribed", "max", MaxTopics, "have", len(out))
		out = out[:MaxTopics]
	}
	return out
}

// Run connects (retrying with backoff until ctx ends), subscribes, and dispatches messages until ctx is done;
// paho reconnects a lost connection by itself (up to a minute apart). It returns nil when ctx ends.
func (m *MQTT) Run(ctx context.Context) error {
	broker, _ := brokerURL(m.o.Config)
	c := m.o.Config
	opts := paho.NewClientOptions().AddBroker(broker).SetClientID(c.ClientID).
		SetKeepAlive(time.Duration(max(c.KeepAliveSecs, 1)) * time.Second).
		SetCleanSession(c.QoS == 0).SetAutoAckDisabled(true).SetOrderMatters(true).
		SetAutoReconnect(true).SetMaxReconnectInterval(maxBackoff).SetConnectTimeout(connectTimeout).
		SetCustomOpenConnectionFn(dialBounded(m.maxPacket())).
		SetDefaultPublishHandler(func(_ paho.Client, msg paho.Message) { m.deliver(ctx, msg) }).
		SetOnConnectHandler(func(cl paho.Client) { m.subscribe(cl) }).
		SetConnectionLostHandler(func(_ paho.Client, err error) {
			m.log.Warn("MQTT SOP listener: connection error", "err", err)
		})
	if c.Username != "" {
		opts.SetUsername(c.Username).SetPassword(c.Password)
	}
	cl := paho.NewClient(opts)
	m.mu.Lock()
	m.client = cl
	m.mu.Unlock()
	defer cl.Disconnect(250)
	backoff := time.Second
	for {
		tok := cl.Connect()
		if tok.WaitTimeout(connectTimeout) && tok.Error() == nil {
			break
		}
		err := tok.Error()
		if err == nil {
			err = errors.New("timed out")
		}
		m.log.Warn("MQTT SOP listener: cannot connect; retrying", "broker", broker, "err", err, "in", backoff)
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(backoff):
		}
		backoff = min(backoff*2, maxBackoff)
	}
	m.log.Info("MQTT SOP listener: connected to broker", "broker", broker)
	<-ctx.Done()
	return nil
}

func (m *MQTT) maxPacket() int {
	if m.o.MaxPacket > 0 {
		return m.o.MaxPacket
	}
	return MaxPacketBytes
}

// Changed subscribes to the SOPs' current topic filters (after a reload) and drops those no SOP names.
func (m *MQTT) Changed() {
	m.mu.Lock()
	cl := m.client
	m.mu.Unlock()
	if cl != nil && cl.IsConnectionOpen() {
		m.subscribe(cl)
	}
}

func (m *MQTT) subscribe(cl paho.Client) {
	want := m.filters()
	m.mu.Lock()
	old := m.subscribed
	m.mu.Unlock()
	var gone []string
	for _, f := range old {
		if !slices.Contains(want, f) {
			gone = append(gone, f)
		}
	}
	if len(gone) > 0 {
		cl.Unsubscribe(gone...).WaitTimeout(connectTimeout)
	}
	if len(want) > 0 {
		subs := make(map[string]byte, len(want))
		for _, f := range want {
			subs[f] = byte(m.o.Config.QoS)
		}
		tok := cl.SubscribeMultiple(subs, nil) // messages go to the default handler
		if tok.WaitTimeout(connectTimeout) && tok.Error() != nil {
			m.log.Warn("MQTT SOP listener: subscribe failed", "err", tok.Error())
			return
		}
		m.log.Info("MQTT SOP listener: subscribed", "topics", len(want))
	}
	m.mu.Lock()
	m.subscribed = want
	m.mu.Unlock()
}

// deliver dispatches one message and acknowledges it once the engine took it (an error leaves it for the
// broker to redeliver on the next connection).
func (m *MQTT) deliver(ctx context.Context, msg paho.Message) {
	ev := sop.Event{Source: sop.SourceMQTT, Topic: sop.CapUntrusted(strings.ToValidUTF8(msg.Topic(), "\uFFFD"), MaxTopicBytes),
		Payload: capPayload(msg.Payload(), m.o.PayloadMax)}
	if msg.Qos() > 0 {
		// A redelivery carries the same id and DUP; the digest tells apart two messages that reused one id.
		ev.Key = fmt.Sprintf("mqtt:%s:%d:%s", m.o.Alias, msg.MessageID(), digest(msg.Topic(), string(msg.Payload())))
		// An id is free for reuse once acknowledged (a broker that lost its session numbers from 1 again),
		// and a redelivery must carry DUP: only a DUP message can be one the engine already took.
		ev.Fresh = !msg.Duplicate()
	}
	res, err := m.o.Dispatcher.Dispatch(ctx, ev)
	if err != nil {
		m.log.Warn("MQTT SOP listener: the engine did not take a message; left for redelivery", "topic", ev.Topic, "err", err)
		return
	}
	started, other := summarize(res)
	m.log.Debug("MQTT SOP listener: message dispatched", "topic", ev.Topic, "dup", msg.Duplicate(), "started", started, "not_started", other)
	msg.Ack()
}

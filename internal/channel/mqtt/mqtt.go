// Package mqtt is the MQTT chat adapter: a channels.mqtt entry with chat_topic set is also a chat channel.
// Messages published to chat_topic (QoS 1, one "+" level being the sender's id) are JSON objects with the
// publisher's own message id; each is handed to the channel core and acknowledged to the broker only after
// the core recorded it, so a message the daemon did not record is redelivered with the same id and the core
// (which dedupes by it) answers it once. Replies, approval prompts and their acknowledgements are JSON
// published to reply_topic with {sender} replaced. Upstream's MQTT is input-only (SOP events); this is ours,
// on its own client session beside the SOP trigger source (internal/sop/trigger), which keeps working.
package mqtt

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	paho "github.com/eclipse/paho.mqtt.golang"

	"github.com/zeroclaw-go/zeroclaw/internal/channel"
	"github.com/zeroclaw-go/zeroclaw/internal/config"
	"github.com/zeroclaw-go/zeroclaw/internal/sop/trigger"
)

// Bounds of the chat adapter.
const (
	MaxPayload   = 64 << 10 // one chat message or reply, JSON included
	MaxIDBytes   = 128      // the publisher's message id
	MaxSender    = 128      // the sender's topic level
	MaxReplyText = 32 << 10 // runes in one reply (longer answers are split by the core)
	waitTimeout  = 10 * time.Second
	// ClientSuffix is appended to client_id for the chat session, so the broker keeps it apart from the
	// SOP source's session under the plain client_id.
	ClientSuffix = "-chat"
)

// Message is the JSON of a chat message published to chat_topic.
type Message struct {
	ID       string    `json:"id"`
	Text     string    `json:"text,omitempty"`
	Approval *Approval `json:"approval,omitempty"` // an answer to an approval prompt
}

// Approval answers a prompt: its token and allow_once, allow_always or reject_once.
type Approval struct {
	Token    string `json:"token"`
	Decision string `json:"decision"`
}

// Reply is the JSON published to reply_topic. Type is "message", "approval" (a prompt: Token and Text) or
// "approval_ack" (Token and Text, the notice).
type Reply struct {
	Type      string `json:"type"`
	ID        string `json:"id,omitempty"`          // the core's key of the message (stable across retries)
	InReplyTo string `json:"in_reply_to,omitempty"` // the chat message answered
	Token     string `json:"token,omitempty"`
	Text      string `json:"text"`
}

// Type is the channel type "mqtt": the enabled channels.mqtt entries with a chat_topic.
func Type() channel.Type {
	return channel.Type{
		Name: "mqtt",
		Instances: func(cfg *config.Config) map[string]any {
			out := map[string]any{}
			for alias, c := range cfg.Channels.MQTT {
				if c.Enabled && c.ChatTopic != "" {
					out[alias] = c
				}
			}
			return out
		},
		ExcludedTools: func(s any) []string { return s.(config.MQTTConfig).ExcludedTools },
		New: func(inst channel.Instance, deps channel.Deps) (channel.Adapter, error) {
			return New(inst.ID, inst.Settings.(config.MQTTConfig), deps.Logger)
		},
	}
}

// Adapter is one broker's chat session.
type Adapter struct {
	id     channel.ID
	c      config.MQTTConfig
	broker string
	log    *slog.Logger

	mu     sync.Mutex // guards client
	client paho.Client
}

var (
	_ channel.Adapter  = (*Adapter)(nil)
	_ channel.Prompter = (*Adapter)(nil)
)

// New checks c and returns the adapter; Run connects.
func New(id channel.ID, c config.MQTTConfig, lg *slog.Logger) (*Adapter, error) {
	broker, err := trigger.BrokerURL(c)
	if err != nil {
		return nil, fmt.Errorf("mqtt %s: %w", id.Alias, err)
	}
	if msg := config.ChatTopicProblem(c.ChatTopic); msg != "" {
		return nil, fmt.Errorf("mqtt %s: %s", id.Alias, msg)
	}
	if msg := config.ReplyTopicProblem(c.ReplyTopic); msg != "" {
		return nil, fmt.Errorf("mqtt %s: %s", id.Alias, msg)
	}
	if strings.TrimSpace(c.ClientID) == "" {
		return nil, fmt.Errorf("mqtt %s: client_id must not be empty", id.Alias)
	}
	if c.QoS == 0 {
		c.QoS = 1 // a chat message must survive a restart: at least once, deduped by the core
	}
	if lg == nil {
		lg = slog.New(slog.DiscardHandler)
	}
	return &Adapter{id: id, c: c, broker: broker, log: lg.With("component", "channel", "channel", id.String())}, nil
}

// ID is the channel's id.
func (a *Adapter) ID() channel.ID { return a.id }

// Limits: a reply is one publish of at most MaxReplyText runes.
func (a *Adapter) Limits() channel.Limits { return channel.Limits{MaxRunes: MaxReplyText} }

// Run connects, subscribes chat_topic and hands every message to d until ctx ends. A lost connection, or a
// message the core could not record, ends Run with an error: the core's supervisor reconnects after its
// backoff, and the broker then redelivers what was not acknowledged.
func (a *Adapter) Run(ctx context.Context, d channel.Deliverer) error {
	lost := make(chan error, 1)
	fail := func(err error) {
		select {
		case lost <- err:
		default:
		}
	}
	opts := paho.NewClientOptions().AddBroker(a.broker).SetClientID(a.c.ClientID + ClientSuffix).
		SetKeepAlive(time.Duration(max(a.c.KeepAliveSecs, 1)) * time.Second).
		SetCleanSession(false).SetAutoAckDisabled(true).SetOrderMatters(true).
		SetAutoReconnect(false).SetConnectRetry(false).SetConnectTimeout(waitTimeout).
		SetCustomOpenConnectionFn(trigger.BoundedDialer(MaxPayload + 4<<10)).
		SetDefaultPublishHandler(func(_ paho.Client, m paho.Message) {
			if err := a.receive(ctx, d, m); err != nil {
				fail(err)
			}
		}).
		SetConnectionLostHandler(func(_ paho.Client, err error) { fail(fmt.Errorf("mqtt: connection lost: %w", err)) })
	if a.c.Username != "" {
		opts.SetUsername(a.c.Username).SetPassword(a.c.Password)
	}
	cl := paho.NewClient(opts)
	if err := wait(ctx, cl.Connect()); err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return fmt.Errorf("mqtt: connect %s: %w", a.broker, err)
	}
	defer cl.Disconnect(250)
	if err := wait(ctx, cl.Subscribe(a.c.ChatTopic, byte(a.c.QoS), nil)); err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return fmt.Errorf("mqtt: subscribe %s: %w", a.c.ChatTopic, err)
	}
	a.mu.Lock()
	a.client = cl
	a.mu.Unlock()
	defer func() {
		a.mu.Lock()
		a.client = nil
		a.mu.Unlock()
	}()
	a.log.Info("MQTT chat channel connected", "broker", a.broker, "topic", a.c.ChatTopic)
	d.Progress()
	// paho drops a connection whose PINGRESP stops coming (keep_alive), so an open connection at each
	// keep-alive tick is a broker that answered: that is the progress reported.
	tick := time.NewTicker(time.Duration(max(a.c.KeepAliveSecs, 1)) * time.Second)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case err := <-lost:
			if ctx.Err() != nil {
				return nil
			}
			return err
		case <-tick.C:
			if cl.IsConnectionOpen() {
				d.Progress()
			}
		}
	}
}

// receive decodes one message and delivers it; it acknowledges what the core recorded and what can never be
// delivered (malformed: a redelivery would be as malformed), and returns an error for what the core refused,
// leaving it unacknowledged for redelivery after Run reconnects.
func (a *Adapter) receive(ctx context.Context, d channel.Deliverer, m paho.Message) error {
	ev, why := a.decode(m.Topic(), m.Payload())
	if why != "" {
		a.log.Warn("MQTT chat message refused", "why", why)
		m.Ack()
		return nil
	}
	if err := d.Deliver(ctx, ev); err != nil {
		return fmt.Errorf("mqtt: the core did not record message %q: %w", ev.MessageID, err)
	}
	d.Progress()
	m.Ack()
	return nil
}

// decode turns a PUBLISH into an inbound event, or says why it cannot be one.
func (a *Adapter) decode(topic string, payload []byte) (channel.Inbound, string) {
	sender, ok := senderOf(a.c.ChatTopic, topic)
	if !ok {
		return channel.Inbound{}, "topic does not match chat_topic"
	}
	if len(payload) > MaxPayload {
		return channel.Inbound{}, fmt.Sprintf("payload of %d bytes is over %d", len(payload), MaxPayload)
	}
	var msg Message
	if err := json.Unmarshal(payload, &msg); err != nil {
		return channel.Inbound{}, "payload is not a JSON chat message"
	}
	if msg.ID == "" || len(msg.ID) > MaxIDBytes || !utf8.ValidString(msg.ID) {
		return channel.Inbound{}, "id missing or over 128 bytes (it is what makes a redelivery recognisable)"
	}
	ev := channel.Inbound{EventID: sender + "/" + msg.ID, Kind: channel.KindMessage, Sender: sender,
		ReplyTarget: sender, MessageID: msg.ID, Text: strings.ToValidUTF8(msg.Text, "\uFFFD")}
	if msg.Approval != nil {
		switch msg.Approval.Decision {
		case "allow_once", "allow_always", "reject_once":
		default:
			return channel.Inbound{}, "approval decision must be allow_once, allow_always or reject_once"
		}
		ev.Kind, ev.Text = channel.KindApproval, ""
		ev.Approval = &channel.ApprovalAnswer{Token: msg.Approval.Token, Decision: msg.Approval.Decision}
	} else if strings.TrimSpace(ev.Text) == "" {
		return channel.Inbound{}, "empty text"
	}
	return ev, ""
}

// senderOf matches topic against the filter's levels and returns the level under "+".
func senderOf(filter, topic string) (string, bool) {
	fl, tl := strings.Split(filter, "/"), strings.Split(topic, "/")
	if len(fl) != len(tl) {
		return "", false
	}
	sender := ""
	for i := range fl {
		switch {
		case fl[i] == "+":
			sender = tl[i]
		case fl[i] != tl[i]:
			return "", false
		}
	}
	if sender == "" || len(sender) > MaxSender || !utf8.ValidString(sender) || strings.ContainsAny(sender, "+#\x00") {
		return "", false
	}
	return sender, true
}

// Send publishes the reply to the sender's reply topic and waits for the broker's PUBACK.
func (a *Adapter) Send(ctx context.Context, m channel.Outbound) (channel.Sent, error) {
	if err := a.publish(ctx, m.ReplyTarget, Reply{Type: "message", ID: m.Key, InReplyTo: m.ReplyTo, Text: m.Text}); err != nil {
		return channel.Sent{}, err
	}
	return channel.Sent{MessageID: m.Key}, nil
}

// Prompt publishes an approval prompt; the answer is a chat message with "approval": {token, decision}.
func (a *Adapter) Prompt(ctx context.Context, p channel.ApprovalPrompt) (channel.Sent, error) {
	if err := a.publish(ctx, p.ReplyTarget, Reply{Type: "approval", Token: p.Token, Text: p.Text}); err != nil {
		return channel.Sent{}, err
	}
	return channel.Sent{MessageID: p.Token}, nil
}

// AckApproval has no sender to answer on MQTT (the answer carries none); the core's notice is published to
// nobody, so it is a no-op. The presser sees the outcome in the turn's reply.
func (a *Adapter) AckApproval(context.Context, channel.ApprovalAnswer, string) error { return nil }

// ErrNotConnected is a send while the chat session is down; the core retries it.
var ErrNotConnected = errors.New("mqtt: not connected")

func (a *Adapter) publish(ctx context.Context, sender string, r Reply) error {
	if sender == "" || len(sender) > MaxSender || strings.ContainsAny(sender, "/+#\x00") {
		return fmt.Errorf("%w: mqtt: bad reply target %q", channel.ErrPermanent, sender)
	}
	body, err := json.Marshal(r)
	if err != nil {
		return fmt.Errorf("%w: mqtt: %v", channel.ErrPermanent, err)
	}
	if len(body) > MaxPayload {
		return fmt.Errorf("%w: mqtt: reply of %d bytes is over %d", channel.ErrPermanent, len(body), MaxPayload)
	}
	cl, err := a.connected(ctx)
	if err != nil {
		return err
	}
	topic := strings.Replace(a.c.ReplyTopic, "{sender}", sender, 1)
	if err := wait(ctx, cl.Publish(topic, byte(a.c.QoS), false, body)); err != nil {
		return fmt.Errorf("mqtt: publish: %w", err)
	}
	return nil
}

// connected returns the client once Run has it connected, waiting up to waitTimeout: a reply queued while
// the session is (re)connecting, as at every start, goes out once it is up instead of spending the core's
// retries.
func (a *Adapter) connected(ctx context.Context) (paho.Client, error) {
	deadline := time.Now().Add(waitTimeout)
	for {
		a.mu.Lock()
		cl := a.client
		a.mu.Unlock()
		if cl != nil && cl.IsConnectionOpen() {
			return cl, nil
		}
		if time.Now().After(deadline) {
			return nil, ErrNotConnected
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// wait waits for a paho token, bounded by ctx and waitTimeout.
func wait(ctx context.Context, t paho.Token) error {
	tctx, cancel := context.WithTimeout(ctx, waitTimeout)
	defer cancel()
	select {
	case <-t.Done():
		return t.Error()
	case <-tctx.Done():
		return tctx.Err()
	}
}

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/coder/websocket"
	paho "github.com/eclipse/paho.mqtt.golang"

	"github.com/zeroclaw-go/zeroclaw/internal/channel/discord/discordfake"
	"github.com/zeroclaw-go/zeroclaw/internal/channel/email/mailtest"
	"github.com/zeroclaw-go/zeroclaw/internal/channel/slack/slackfake"
	"github.com/zeroclaw-go/zeroclaw/internal/channel/telegram/tgfake"
)

// benchChannels: for each chat channel, a message's way from the platform through the real daemon (record in
// sessions.db, turn on the offline echo model, outbox record) until the platform holds the reply: "inbound →
// reply at the platform". Beside it, measured in the same run against the same server, the floor: the same
// message's way through the platform with no daemon in it (a bare client that receives the message and sends
// the reply by the same protocol). Messages go one at a time; the row is the median per message.
//
// The section runs a daemon of its own (a fresh install whose config binds the default agent to every
// platform), so the other sections' daemon and numbers are untouched.
func benchChannels(b *bench) error {
	r := &chanBench{b: b, n: b.n(40)}
	defer r.close()
	if err := r.start(); err != nil {
		return err
	}
	for _, m := range []struct {
		name string
		f    func() error
	}{{"telegram", r.telegram}, {"mqtt", r.mqtt}, {"irc", r.ircRound}, {"discord", r.discord}, {"slack", r.slack}, {"matrix", r.matrix}, {"email", r.email}} {
		if err := m.f(); err != nil {
			return fmt.Errorf("%s: %w", m.name, err)
		}
	}
	return nil
}

// chanBench is the channels section's platforms and daemon.
type chanBench struct {
	b    *bench
	n    int
	tg   *tgfake.Server
	mq   *extServer
	irc  *extServer
	dc   *discordfake.Server
	mail *mailtest.Servers
	sl   *slackfake.Server
	mx   *matrixWorld
	in   *install

	smtpProxy *firstByteProxy
	d         *proc
	stop      []func()
}

func (r *chanBench) close() {
	if r.d != nil {
		_ = r.d.stop()
	}
	for i := len(r.stop) - 1; i >= 0; i-- {
		r.stop[i]()
	}
	if r.in != nil {
		r.in.remove()
	}
}

func (r *chanBench) start() (err error) {
	r.tg = tgfake.Start(tgToken)
	r.stop = append(r.stop, r.tg.Close)
	if r.mq, err = startMosquitto(); err != nil {
		return err
	}
	r.stop = append(r.stop, r.mq.stop)
	if r.irc, err = startNgircd(); err != nil {
		return err
	}
	r.stop = append(r.stop, r.irc.stop)
	r.dc = discordfake.Start(dcToken)
	r.stop = append(r.stop, r.dc.Close)
	blocks := telegramTOML(r.tg.URL()) + mqttTOML(r.mq.port) + ircTOML(r.irc.port) + discordTOML(r.dc.URL())
	r.sl = slackfake.Start(slackBot, slackApp)
	r.stop = append(r.stop, r.sl.Close)
	r.mx = newMatrixWorld()
	r.stop = append(r.stop, r.mx.fake.Close)
	blocks += slackTOML(r.sl.URL()) + r.mx.toml()
	ids := []string{"telegram.default", "mqtt.home", "irc.local", "discord.default", "slack.default", "matrix.default"}
	if err := r.mailServers(); err != nil {
		return err
	}
	if r.mail != nil {
		blocks += emailTOML(r.mail.IMAPPort, r.smtpProxy.port())
		ids = append(ids, "email.work")
	}
	if r.in, err = newInstall(installOptions{channels: blocks}); err != nil {
		return err
	}
	if r.d, err = startDaemon(r.b.bin, r.in); err != nil {
		return err
	}
	for _, id := range ids {
		if err := waitEvery(20*time.Millisecond, "channel "+id+" healthy", 30*time.Second, func() bool { return channelHealthy(r.in.sock, id) }); err != nil {
			return err
		}
	}
	return nil
}

// row records one channel's medians: inbound → reply through the daemon, and the floor.
func (r *chanBench) row(name string, through, floor []time.Duration) {
	const sec = "channels"
	ms := func(ds []time.Duration) float64 { return median(durations(ds, time.Millisecond)) }
	r.b.res.addFloor(sec, name, "ms", noTarget(), ms(through), ms(floor))
}

// telegram: an update queued at the fake → the daemon's sendMessage accepted by the fake. The daemon is in a
// getUpdates long poll that the update wakes. Floor: a bare client in the same long poll that answers each
// update with one sendMessage.
func (r *chanBench) telegram() error {
	var through []time.Duration
	for i := range r.n {
		before := len(r.tg.Sent())
		start := time.Now()
		id := r.tg.SendText(tgOwner, "owner", fmt.Sprintf("bench ping %d", i))
		if err := waitFor(fmt.Sprintf("the reply to update %d", id), 30*time.Second, func() bool { return len(r.tg.Sent()) > before }); err != nil {
			return err
		}
		through = append(through, time.Since(start))
		if got := r.tg.Sent()[before]; got.ReplyTo != id {
			return fmt.Errorf("the reply %+v does not answer update %d", got, id)
		}
	}
	// The floor needs the daemon out of the long poll: another fake, the same code.
	fake := tgfake.Start(tgToken)
	defer fake.Close()
	done := make(chan error, 1)
	quit := make(chan struct{})
	go func() { done <- bareTelegram(fake.URL(), quit) }()
	var floor []time.Duration
	for i := range r.n {
		before := len(fake.Sent())
		start := time.Now()
		fake.SendText(tgOwner, "owner", fmt.Sprintf("floor ping %d", i))
		if err := waitFor("the bare client's reply", 30*time.Second, func() bool { return len(fake.Sent()) > before }); err != nil {
			return err
		}
		floor = append(floor, time.Since(start))
	}
	close(quit)
	fake.SendText(tgOwner, "owner", "release the poll")
	if err := <-done; err != nil {
		return err
	}
	r.row("telegram: update queued → sendMessage at the Bot API", through, floor)
	return nil
}

// bareTelegram long-polls getUpdates and answers each update with a sendMessage, until quit.
func bareTelegram(url string, quit <-chan struct{}) error {
	hc := &http.Client{Timeout: 30 * time.Second}
	post := func(method string, body any, out any) error {
		raw, _ := json.Marshal(body)
		resp, err := hc.Post(url+"/bot"+tgToken+"/"+method, "application/json", bytes.NewReader(raw))
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("%s: HTTP %d", method, resp.StatusCode)
		}
		return json.NewDecoder(resp.Body).Decode(out)
	}
	offset := int64(0)
	for {
		select {
		case <-quit:
			return nil
		default:
		}
		var page struct {
			Result []struct {
				UpdateID int64 `json:"update_id"`
				Message  struct {
					MessageID int64 `json:"message_id"`
					Chat      struct {
						ID int64 `json:"id"`
					} `json:"chat"`
					Text string `json:"text"`
				} `json:"message"`
			} `json:"result"`
		}
		if err := post("getUpdates", map[string]any{"offset": offset, "timeout": 10}, &page); err != nil {
			return err
		}
		for _, u := range page.Result {
			offset = u.UpdateID + 1
			select {
			case <-quit:
				return nil
			default:
			}
			var sent map[string]any
			if err := post("sendMessage", map[string]any{"chat_id": u.Message.Chat.ID, "text": "echo: " + u.Message.Text,
				"reply_parameters": map[string]any{"message_id": u.Message.MessageID}}, &sent); err != nil {
				return err
			}
		}
	}
}

// mqtt: a QoS 1 chat message published to the real Mosquitto → the daemon's reply received by the publisher's
// subscription. Floor: a bare paho client subscribed to the same kind of topic republishes each message as
// the reply (QoS 1 both ways), so the floor is two broker hops with their acknowledgements.
func (r *chanBench) mqtt() error {
	decode := func(p []byte) string {
		var m struct {
			InReplyTo string `json:"in_reply_to"`
			ID        string `json:"id"`
		}
		_ = json.Unmarshal(p, &m)
		if m.InReplyTo != "" {
			return m.InReplyTo
		}
		return m.ID
	}
	peer, err := dialMQTT(r.mq.port, "bench-alice")
	if err != nil {
		return err
	}
	defer peer.close()
	if err := peer.subscribeReplies("zc/alice/out", decode); err != nil {
		return err
	}
	if err := peer.subscribeReplies("fl/alice/out", decode); err != nil {
		return err
	}
	echo, err := dialMQTT(r.mq.port, "bench-echo")
	if err != nil {
		return err
	}
	defer echo.close()
	if tok := echo.c.Subscribe("fl/+/in", 1, func(_ paho.Client, m paho.Message) {
		sender := strings.Split(m.Topic(), "/")[1]
		echo.c.Publish("fl/"+sender+"/out", 1, false, m.Payload())
	}); !tok.WaitTimeout(10*time.Second) || tok.Error() != nil {
		return fmt.Errorf("mqtt subscribe: %v", tok.Error())
	}
	measure := func(topic, prefix string) ([]time.Duration, error) {
		var out []time.Duration
		for i := range r.n {
			id := fmt.Sprintf("%s%d", prefix, i)
			body, _ := json.Marshal(map[string]string{"id": id, "text": "bench ping " + id})
			start := time.Now()
			if err := peer.publish(topic, body); err != nil {
				return nil, err
			}
			if err := peer.waitReply(id, 30*time.Second); err != nil {
				return nil, err
			}
			out = append(out, time.Since(start))
		}
		return out, nil
	}
	through, err := measure("zc/alice/in", "b")
	if err != nil {
		return err
	}
	floor, err := measure("fl/alice/in", "f")
	if err != nil {
		return err
	}
	r.row("mqtt: QoS 1 publish → reply at the subscriber (Mosquitto)", through, floor)
	return nil
}

// ircSpacing is the pause between two IRC messages of one user: ngIRCd handles at most 3 commands a second of a
// client and queues the rest, so back-to-back messages would measure its flood throttle, not the round trip.
const ircSpacing = 400 * time.Millisecond

// irc: a PRIVMSG from a user on the real ngIRCd to the bot → the bot's PRIVMSG back received by the user.
// Floor: the same user and server, a bare client that echoes each PRIVMSG to its sender.
func (r *chanBench) ircRound() error {
	alice, err := dialIRC(r.irc.port, "alice", false)
	if err != nil {
		return err
	}
	defer alice.close()
	echo, err := dialIRC(r.irc.port, "echoer", true)
	if err != nil {
		return err
	}
	defer echo.close()
	// The bot is on the server once it answers; until then ngIRCd refuses the message (401).
	up := false
	for i := 0; i < 30 && !up; i++ {
		mark := alice.mark()
		alice.send(fmt.Sprintf("PRIVMSG zcbot :warm up %d", i))
		up = alice.waitFrom("zcbot", fmt.Sprintf("warm up %d", i), mark, time.Second) == nil
	}
	if !up {
		return errors.New("the bot never answered on ngIRCd within 30 s")
	}
	n := max(3, r.n/3)
	measure := func(to, prefix string) ([]time.Duration, error) {
		var out []time.Duration
		for i := range n {
			time.Sleep(ircSpacing)
			text := fmt.Sprintf("%s %d", prefix, i)
			mark := alice.mark()
			start := time.Now()
			alice.send("PRIVMSG " + to + " :" + text)
			if err := alice.waitFrom(to, text, mark, 30*time.Second); err != nil {
				return nil, fmt.Errorf("no answer from %s to %q: %w", to, text, err)
			}
			out = append(out, time.Since(start))
		}
		return out, nil
	}
	through, err := measure("zcbot", "bench ping")
	if err != nil {
		return err
	}
	floor, err := measure("echoer", "floor ping")
	if err != nil {
		return err
	}
	r.row("irc: PRIVMSG to the bot → its PRIVMSG back at the user (ngIRCd)", through, floor)
	return nil
}

// discord: a MESSAGE_CREATE dispatched on the fake's Gateway WebSocket → the daemon's REST createMessage (a
// reply to it) accepted by the fake. Floor: a bare Gateway client (HELLO, IDENTIFY, READY) on a second fake
// that answers each MESSAGE_CREATE with one createMessage.
func (r *chanBench) discord() error {
	measure := func(fake *discordfake.Server, prefix string) ([]time.Duration, error) {
		var out []time.Duration
		for i := range r.n {
			before := len(fake.Sent())
			start := time.Now()
			id := fake.SendText(dcOwner, "owner", dcChannel, "", fmt.Sprintf("%s %d", prefix, i))
			if err := waitFor("the reply to message "+id, 30*time.Second, func() bool { return len(fake.Sent()) > before }); err != nil {
				return nil, err
			}
			out = append(out, time.Since(start))
			if got := fake.Sent()[before]; got.ReplyTo != id {
				return nil, fmt.Errorf("the reply %+v does not answer message %s", got, id)
			}
		}
		return out, nil
	}
	through, err := measure(r.dc, "bench ping")
	if err != nil {
		return err
	}
	fake := discordfake.Start(dcToken)
	defer fake.Close()
	ctx, cancel := context.WithCancel(r.b.ctx)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- bareDiscord(ctx, fake.URL()) }()
	if err := waitFor("the bare client's gateway session", 20*time.Second, fake.Caught); err != nil {
		return err
	}
	floor, err := measure(fake, "floor ping")
	if err != nil {
		return err
	}
	cancel()
	if err := <-done; err != nil && ctx.Err() == nil {
		return err
	}
	r.row("discord: MESSAGE_CREATE on the Gateway → createMessage at REST v10", through, floor)
	return nil
}

// bareDiscord is a Gateway v10 client that answers each MESSAGE_CREATE not its own with a reply over REST.
func bareDiscord(ctx context.Context, base string) error {
	ws, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(base, "http")+"/gateway?v=10&encoding=json", nil)
	if err != nil {
		return err
	}
	defer ws.CloseNow()
	ident, _ := json.Marshal(map[string]any{"op": 2, "d": map[string]any{"token": dcToken, "intents": 37377,
		"properties": map[string]any{"os": "linux", "browser": "zcbench", "device": "zcbench"}}})
	if err := ws.Write(ctx, websocket.MessageText, ident); err != nil {
		return err
	}
	hc := &http.Client{Timeout: 30 * time.Second}
	for {
		_, raw, err := ws.Read(ctx)
		if err != nil {
			return err
		}
		var p struct {
			T string `json:"t"`
			D struct {
				ID        string `json:"id"`
				ChannelID string `json:"channel_id"`
				Content   string `json:"content"`
				Author    struct {
					Bot bool `json:"bot"`
				} `json:"author"`
			} `json:"d"`
		}
		if json.Unmarshal(raw, &p) != nil || p.T != "MESSAGE_CREATE" || p.D.Author.Bot {
			continue
		}
		body, _ := json.Marshal(map[string]any{"content": "echo: " + p.D.Content, "message_reference": map[string]any{"message_id": p.D.ID}})
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, base+"/api/v10/channels/"+p.D.ChannelID+"/messages", bytes.NewReader(body))
		req.Header.Set("Authorization", "Bot "+dcToken)
		req.Header.Set("Content-Type", "application/json")
		resp, err := hc.Do(req)
		if err != nil {
			return err
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("createMessage: HTTP %d", resp.StatusCode)
		}
	}
}

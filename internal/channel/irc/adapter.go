package irc

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/zeroclaw-go/zeroclaw/internal/channel"
	"github.com/zeroclaw-go/zeroclaw/internal/config"
)

// MaxReplyRunes is what the core puts in one Send; the client splits it into lines (at most maxSendLines).
const MaxReplyRunes = 4000

// Type is the channel type "irc": the enabled channels.irc entries.
func Type() channel.Type {
	return channel.Type{
		Name: "irc",
		Instances: func(cfg *config.Config) map[string]any {
			out := map[string]any{}
			for alias, c := range cfg.Channels.IRC {
				if c.Enabled {
					out[alias] = c
				}
			}
			return out
		},
		ExcludedTools: func(s any) []string { return s.(config.IRCConfig).ExcludedTools },
		New: func(inst channel.Instance, deps channel.Deps) (channel.Adapter, error) {
			return NewAdapter(inst.ID, inst.Settings.(config.IRCConfig), deps.Logger)
		},
	}
}

// Adapter is one IRC server as a chat channel. Approvals use a reply convention: the prompt asks for
// "yes <token>", "always <token>" or "no <token>", and such a reply is an approval answer, not a message.
type Adapter struct {
	id          channel.ID
	client      *Client
	mentionOnly bool
	log         *slog.Logger
	boot        string        // distinguishes this process's event ids (IRC has none of its own, nor redelivery)
	seq         atomic.Uint64 // and numbers them
	d           atomic.Pointer[deliverer]
}

type deliverer struct{ channel.Deliverer }

var (
	_ channel.Adapter  = (*Adapter)(nil)
	_ channel.Prompter = (*Adapter)(nil)
)

// NewAdapter builds the adapter for one channels.irc entry.
func NewAdapter(id channel.ID, c config.IRCConfig, lg *slog.Logger) (*Adapter, error) {
	if lg == nil {
		lg = slog.New(slog.DiscardHandler)
	}
	lg = lg.With("component", "channel", "channel", id.String())
	a := &Adapter{id: id, mentionOnly: c.MentionOnly, log: lg, boot: strconv.FormatInt(time.Now().UnixNano(), 36)}
	cl, err := New(Options{Addr: net.JoinHostPort(c.Server, strconv.Itoa(c.Port)), TLS: c.UseTLS, Insecure: !c.VerifyTLS,
		Nick: c.Nickname, User: c.Username, Channels: c.Channels, ServerPassword: c.ServerPassword,
		SASLPassword: c.SASLPassword, NickServPassword: c.NickServPassword, Logger: lg,
		OnLine: func() {
			if d := a.d.Load(); d != nil {
				d.Progress()
			}
		}})
	if err != nil {
		return nil, fmt.Errorf("irc %s: %w", id.Alias, err)
	}
	if c.Server == "" || c.Port <= 0 || c.Port > 65535 {
		return nil, fmt.Errorf("irc %s: server and port are required", id.Alias)
	}
	a.client = cl
	return a, nil
}

// ID is the channel's id.
func (a *Adapter) ID() channel.ID { return a.id }

// Limits: the core hands over at most MaxReplyRunes; the client splits them at the line limit.
func (a *Adapter) Limits() channel.Limits { return channel.Limits{MaxRunes: MaxReplyRunes} }

// State is the connection's state (connected, nick, last line, last error).
func (a *Adapter) State() State { return a.client.State() }

// Run connects and hands every message to d until ctx ends (the client reconnects by itself with backoff).
// IRC has no acknowledgement and no redelivery: a message the core could not record is logged and lost.
func (a *Adapter) Run(ctx context.Context, d channel.Deliverer) error {
	a.d.Store(&deliverer{d})
	defer a.d.Store(nil)
	err := a.client.Run(ctx, func(ctx context.Context, in Inbound) {
		ev, ok := a.inbound(in)
		if !ok {
			return
		}
		if err := d.Deliver(ctx, ev); err != nil && ctx.Err() == nil {
			a.log.Warn("IRC message not recorded by the core; IRC cannot redeliver it", "from", in.Nick, "err", err)
		}
	})
	if errors.Is(err, ErrFatal) {
		return fmt.Errorf("%w: %v", channel.ErrPermanent, err)
	}
	return err
}

var approvalReply = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^\s*(yes|always|no)\s+([A-Za-z0-9_.:-]{1,128})\s*$`) })

// inbound turns a PRIVMSG into an event; ok is false for a channel message that does not mention the bot
// when mention_only is set.
func (a *Adapter) inbound(in Inbound) (channel.Inbound, bool) {
	group := in.ReplyTo != in.Nick
	nick := a.client.State().Nick
	text := in.Text
	if group && a.mentionOnly {
		if !mentions(text, nick) {
			return channel.Inbound{}, false
		}
	}
	if group {
		text = stripMention(text, nick)
	}
	id := in.ID
	if id == "" {
		id = a.boot + "-" + strconv.FormatUint(a.seq.Add(1), 10)
	}
	ev := channel.Inbound{EventID: id, Kind: channel.KindMessage, Sender: in.Nick, SenderName: in.Nick,
		ReplyTarget: in.ReplyTo, MessageID: in.ID, Text: text, Group: group}
	if m := approvalReply().FindStringSubmatch(text); m != nil {
		decision := map[string]string{"yes": "allow_once", "always": "allow_always", "no": "reject_once"}[strings.ToLower(m[1])]
		ev.Kind, ev.Text = channel.KindApproval, ""
		ev.Approval = &channel.ApprovalAnswer{Token: m[2], Decision: decision, AckID: in.ReplyTo}
	}
	return ev, true
}

func mentions(text, nick string) bool {
	t, n := strings.ToLower(text), strings.ToLower(nick)
	for i := strings.Index(t, n); i >= 0; {
		end := i + len(n)
		before := i == 0 || !isNickChar(t[i-1])
		after := end == len(t) || !isNickChar(t[end])
		if before && after {
			return true
		}
		j := strings.Index(t[i+1:], n)
		if j < 0 {
			break
		}
		i += 1 + j
	}
	return false
}

func isNickChar(b byte) bool {
	return b >= 'a' && b <= 'z' || b >= '0' && b <= '9' || strings.IndexByte("[]\\`_^{|}-", b) >= 0
}

// stripMention drops a leading "nick:" or "nick," address.
func stripMention(text, nick string) string {
	if len(text) > len(nick) && strings.EqualFold(text[:len(nick)], nick) && (text[len(nick)] == ':' || text[len(nick)] == ',') {
		return strings.TrimSpace(text[len(nick)+1:])
	}
	return text
}

// Send writes the reply to the channel or nick it answers.
func (a *Adapter) Send(ctx context.Context, m channel.Outbound) (channel.Sent, error) {
	if _, err := a.client.Send(ctx, m.ReplyTarget, m.Text); err != nil {
		if errors.Is(err, ErrNotConnected) || ctx.Err() != nil {
			return channel.Sent{}, err
		}
		if strings.Contains(err.Error(), "neither a channel nor a nick") {
			return channel.Sent{}, fmt.Errorf("%w: %v", channel.ErrPermanent, err)
		}
		return channel.Sent{}, err
	}
	return channel.Sent{}, nil
}

// Prompt asks in the chat for a reply naming the token.
func (a *Adapter) Prompt(ctx context.Context, p channel.ApprovalPrompt) (channel.Sent, error) {
	text := "Approval needed: " + p.Text + "\nReply \"yes " + p.Token + "\" to run it once, \"always " + p.Token +
		"\" to allow it for this session, or \"no " + p.Token + "\" to refuse."
	_, err := a.Send(ctx, channel.Outbound{ReplyTarget: p.ReplyTarget, Text: text})
	return channel.Sent{MessageID: p.Token}, err
}

// AckApproval says the notice in the chat the answer came from (AckID).
func (a *Adapter) AckApproval(ctx context.Context, ans channel.ApprovalAnswer, notice string) error {
	if ans.AckID == "" || notice == "" {
		return nil
	}
	_, err := a.Send(ctx, channel.Outbound{ReplyTarget: ans.AckID, Text: notice})
	return err
}

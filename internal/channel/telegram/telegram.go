// Package telegram is the Telegram channel: the Bot API by long polling (getUpdates with an offset), replies
// with sendMessage, typing with sendChatAction, approvals with an inline keyboard answered by callback_query
// and answerCallbackQuery. The offset is advanced past an update only after the core has recorded it.
package telegram

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/zeroclaw-go/zeroclaw/internal/channel"
	"github.com/zeroclaw-go/zeroclaw/internal/config"
)

// Bounds on what the Bot API (or something posing as it) can make the adapter hold.
const (
	maxResponseBytes  = 8 << 20
	maxUpdatesPerPoll = 100
	// MaxMessageRunes is sendMessage's text limit.
	MaxMessageRunes = 4096
)

// Type is the telegram platform for a channel.Registry.
func Type() channel.Type {
	return channel.Type{Name: "telegram",
		Instances: func(cfg *config.Config) map[string]any {
			out := map[string]any{}
			for alias, t := range cfg.Channels.Telegram {
				if t.Enabled {
					out[alias] = t
				}
			}
			return out
		},
		ApprovalTimeout: func(s any) time.Duration {
			return time.Duration(s.(config.TelegramConfig).ApprovalTimeoutSecs) * time.Second
		},
		ExcludedTools: func(s any) []string { return s.(config.TelegramConfig).ExcludedTools },
		New: func(inst channel.Instance, deps channel.Deps) (channel.Adapter, error) {
			return New(inst.ID, inst.Settings.(config.TelegramConfig), deps.HTTP)
		},
	}
}

// Adapter is one bot.
type Adapter struct {
	id          channel.ID
	base        string // <api_base_url>/bot<token>/
	pollTimeout int
	hc          *http.Client
	mentionOnly bool
}

// New builds the adapter of one [channels.telegram.<alias>] entry.
func New(id channel.ID, c config.TelegramConfig, hc *http.Client) (*Adapter, error) {
	if c.BotToken == "" {
		return nil, fmt.Errorf("telegram %s: bot_token is empty: %w", id, channel.ErrPermanent)
	}
	if strings.ContainsAny(c.BotToken, "/?# \n") {
		return nil, fmt.Errorf("telegram %s: bot_token has characters a token never has: %w", id, channel.ErrPermanent)
	}
	if hc == nil {
		hc = &http.Client{}
	}
	base := strings.TrimRight(c.APIBaseURL, "/")
	if base == "" {
		base = "https://api.telegram.org"
	}
	pt := c.PollTimeoutSecs
	if pt <= 0 || pt > 50 {
		pt = 30
	}
	return &Adapter{id: id, base: base + "/bot" + c.BotToken + "/", pollTimeout: pt, hc: hc, mentionOnly: c.MentionOnly}, nil
}

// ID implements channel.Adapter.
func (a *Adapter) ID() channel.ID { return a.id }

// Limits implements channel.Adapter.
func (a *Adapter) Limits() channel.Limits { return channel.Limits{MaxRunes: MaxMessageRunes} }

// apiError is a Bot API error answer.
type apiError struct {
	method string
	status int
	code   int
	desc   string
}

func (e *apiError) Error() string {
	return fmt.Sprintf("telegram %s: %d %s", e.method, max(e.code, e.status), e.desc)
}

// call posts params to method and decodes the result into out (nil: ignored). The token never appears in an
// error: errors name the method only.
func (a *Adapter) call(ctx context.Context, method string, params any, out any) error {
	body, err := json.Marshal(params)
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, a.base+method, bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("telegram %s: bad api_base_url: %w", method, channel.ErrPermanent)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := a.hc.Do(req)
	if err != nil {
		var ue interface{ Unwrap() error }
		if errors.As(err, &ue) && ctx.Err() == nil {
			return fmt.Errorf("telegram %s: %w", method, ue.Unwrap()) // the url.Error names the URL (the token)
		}
		return fmt.Errorf("telegram %s: %w", method, ctx.Err())
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxResponseBytes+1))
	if err != nil {
		return fmt.Errorf("telegram %s: read: %w", method, err)
	}
	if len(raw) > maxResponseBytes {
		return fmt.Errorf("telegram %s: answer larger than %d bytes", method, maxResponseBytes)
	}
	var r apiResponse
	if err := json.Unmarshal(raw, &r); err != nil {
		return fmt.Errorf("telegram %s: status %d, not a Bot API answer", method, resp.StatusCode)
	}
	if !r.OK {
		e := &apiError{method: method, status: resp.StatusCode, code: r.ErrorCode, desc: clip(r.Description, 200)}
		code := max(r.ErrorCode, resp.StatusCode)
		switch {
		case code == http.StatusTooManyRequests:
			after := time.Second
			if r.Parameters != nil && r.Parameters.RetryAfter > 0 {
				after = time.Duration(min(r.Parameters.RetryAfter, 3600)) * time.Second
			}
			return &channel.RetryAfter{After: after, Err: e}
		case code == http.StatusUnauthorized || code == http.StatusNotFound && method == "getUpdates":
			return fmt.Errorf("%w (check bot_token): %w", e, channel.ErrPermanent)
		case code == http.StatusConflict:
			return fmt.Errorf("%w: ensure only one zeroclaw process is using this bot token", e)
		case (code == http.StatusBadRequest || code == http.StatusForbidden) && method != "getUpdates":
			return fmt.Errorf("%w: %w", e, channel.ErrPermanent)
		}
		return e
	}
	if out != nil {
		if err := json.Unmarshal(r.Result, out); err != nil {
			return fmt.Errorf("telegram %s: result: %w", method, err)
		}
	}
	return nil
}

func clip(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}

// Run implements channel.Adapter: long polls getUpdates, delivers each update it takes, and advances the
// offset past an update only once Deliver recorded it (or the update carries nothing to take).
func (a *Adapter) Run(ctx context.Context, d channel.Deliverer) error {
	var offset int64
	for {
		var ups []json.RawMessage
		pollCtx, cancel := context.WithTimeout(ctx, time.Duration(a.pollTimeout+15)*time.Second)
		err := a.call(pollCtx, "getUpdates", map[string]any{"offset": offset, "timeout": a.pollTimeout,
			"limit": maxUpdatesPerPoll, "allowed_updates": []string{"message", "callback_query"}}, &ups)
		cancel()
		if ctx.Err() != nil {
			return nil
		}
		if err != nil {
			return err
		}
		d.Progress()
		for _, raw := range ups {
			ev, id, ok, err := DecodeUpdate(raw)
			if err != nil {
				continue // undecodable: skipped (it would block every later update forever)
			}
			if ok && !(a.mentionOnly && ev.Group && ev.Kind == channel.KindMessage && !strings.Contains(ev.Text, "@")) {
				if err := d.Deliver(ctx, ev); err != nil {
					if ctx.Err() != nil {
						return nil
					}
					return fmt.Errorf("telegram: record update %d: %w", id, err)
				}
			}
			offset = max(offset, id+1)
		}
	}
}

type sentMessage struct {
	MessageID int64 `json:"message_id"`
}

func chatID(s string) any {
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		return n
	}
	return s // @channelusername
}

// Send implements channel.Adapter (plain text, no parse_mode: a model's stray '*' cannot make it fail).
func (a *Adapter) Send(ctx context.Context, m channel.Outbound) (channel.Sent, error) {
	p := map[string]any{"chat_id": chatID(m.ReplyTarget), "text": m.Text}
	if m.Thread != "" {
		p["message_thread_id"] = chatID(m.Thread)
	}
	if m.ReplyTo != "" {
		p["reply_parameters"] = map[string]any{"message_id": chatID(m.ReplyTo), "allow_sending_without_reply": true}
	}
	var out sentMessage
	if err := a.call(ctx, "sendMessage", p, &out); err != nil {
		return channel.Sent{}, err
	}
	return channel.Sent{MessageID: strconv.FormatInt(out.MessageID, 10)}, nil
}

// Typing implements channel.Typer.
func (a *Adapter) Typing(ctx context.Context, target, thread string) error {
	p := map[string]any{"chat_id": chatID(target), "action": "typing"}
	if thread != "" {
		p["message_thread_id"] = chatID(thread)
	}
	return a.call(ctx, "sendChatAction", p, nil)
}

// Prompt implements channel.Prompter: the question with Approve / Deny buttons whose callback_data carry the
// token.
func (a *Adapter) Prompt(ctx context.Context, pr channel.ApprovalPrompt) (channel.Sent, error) {
	kb := map[string]any{"inline_keyboard": [][]map[string]string{{
		{"text": "✅ Approve", "callback_data": callbackPrefix + pr.Token + ":a"},
		{"text": "❌ Deny", "callback_data": callbackPrefix + pr.Token + ":d"},
	}}}
	p := map[string]any{"chat_id": chatID(pr.ReplyTarget), "text": pr.Text, "reply_markup": kb}
	if pr.Thread != "" {
		p["message_thread_id"] = chatID(pr.Thread)
	}
	var out sentMessage
	if err := a.call(ctx, "sendMessage", p, &out); err != nil {
		return channel.Sent{}, err
	}
	return channel.Sent{MessageID: strconv.FormatInt(out.MessageID, 10)}, nil
}

// AckApproval implements channel.Prompter.
func (a *Adapter) AckApproval(ctx context.Context, ans channel.ApprovalAnswer, notice string) error {
	return a.call(ctx, "answerCallbackQuery", map[string]any{"callback_query_id": ans.AckID, "text": notice}, nil)
}

package discord

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/zeroclaw-go/zeroclaw/internal/channel"
)

// Bounds on what the REST API (or something posing as it) can make the adapter hold.
const (
	maxResponseBytes = 1 << 20
	maxRetryAfter    = time.Hour
	// MaxMessageRunes is a message's content limit.
	MaxMessageRunes = 2000
	// maxPromptRunes leaves room under the limit for the escaping of a prompt's text.
	maxPromptRunes = 1900
	userAgent      = "DiscordBot (https://github.com/zeroclaw-go/zeroclaw, 1)"
)

// apiError is a REST error answer ({"code", "message"}).
type apiError struct {
	route   string
	status  int
	code    int
	message string
}

func (e *apiError) Error() string {
	return fmt.Sprintf("discord %s: %d (code %d) %s", e.route, e.status, e.code, e.message)
}

// limiter remembers the rate-limit buckets REST said were exhausted (X-RateLimit-Remaining: 0), by route, so
// the next call on that route is refused locally with a RetryAfter instead of earning a 429.
type limiter struct {
	mu    sync.Mutex
	until map[string]time.Time
}

func (l *limiter) wait(route string, now time.Time) time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	if t, ok := l.until[route]; ok {
		if d := t.Sub(now); d > 0 {
			return d
		}
		delete(l.until, route)
	}
	return 0
}

func (l *limiter) note(route string, h http.Header, now time.Time) {
	if h.Get("X-RateLimit-Remaining") != "0" {
		return
	}
	d := seconds(h.Get("X-RateLimit-Reset-After"))
	if d <= 0 {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.until == nil {
		l.until = map[string]time.Time{}
	}
	if len(l.until) > 1024 { // one entry per channel written to: bounded anyway
		clear(l.until)
	}
	l.until[route] = now.Add(d)
}

// seconds reads a header's (fractional) seconds, clamped to [0, maxRetryAfter].
func seconds(s string) time.Duration {
	f, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	if err != nil || math.IsNaN(f) || f <= 0 {
		return 0
	}
	if f >= maxRetryAfter.Seconds() {
		return maxRetryAfter
	}
	return time.Duration(f * float64(time.Second))
}

// call sends one REST request: body (nil: none) as JSON, the answer decoded into out (nil: ignored). route
// names the call in errors and in the limiter; the token never appears in an error. auth false leaves the bot
// token out (interaction callbacks are authorised by their own token).
func (a *Adapter) call(ctx context.Context, method, route, path string, auth bool, body, out any) error {
	if d := a.rl.wait(route, time.Now()); d > 0 {
		return &channel.RetryAfter{After: d, Err: fmt.Errorf("discord %s: rate limit bucket exhausted", route)}
	}
	var rd io.Reader
	if body != nil {
		raw, err := json.Marshal(body)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(raw)
	}
	req, err := http.NewRequestWithContext(ctx, method, a.api+path, rd)
	if err != nil {
		return fmt.Errorf("discord %s: bad api_base_url: %w", route, channel.ErrPermanent)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if auth {
		req.Header.Set("Authorization", "Bot "+a.token)
	}
	req.Header.Set("User-Agent", userAgent)
	resp, err := a.hc.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) { // the url.Error names the URL (an interaction token)
			err = ue.Err
		}
		if ctx.Err() != nil {
			err = ctx.Err()
		}
		return fmt.Errorf("discord %s: %w", route, err)
	}
	defer resp.Body.Close()
	a.rl.note(route, resp.Header, time.Now())
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxResponseBytes+1))
	if err != nil {
		return fmt.Errorf("discord %s: read: %w", route, err)
	}
	if len(raw) > maxResponseBytes {
		return fmt.Errorf("discord %s: answer larger than %d bytes", route, maxResponseBytes)
	}
	if resp.StatusCode >= 200 && resp.StatusCode < 300 {
		if out != nil && resp.StatusCode != http.StatusNoContent {
			if err := json.Unmarshal(raw, out); err != nil {
				return fmt.Errorf("discord %s: status %d, not a Discord answer", route, resp.StatusCode)
			}
		}
		return nil
	}
	var eb struct {
		Code       int     `json:"code"`
		Message    string  `json:"message"`
		RetryAfter float64 `json:"retry_after"`
	}
	_ = json.Unmarshal(raw, &eb)
	e := &apiError{route: route, status: resp.StatusCode, code: eb.Code, message: clip(eb.Message, 200)}
	switch s := resp.StatusCode; {
	case s == http.StatusTooManyRequests:
		after := seconds(strconv.FormatFloat(eb.RetryAfter, 'f', -1, 64))
		if after == 0 {
			after = seconds(resp.Header.Get("Retry-After"))
		}
		if after == 0 {
			after = time.Second
		}
		return &channel.RetryAfter{After: after, Err: e}
	case s == http.StatusUnauthorized:
		return fmt.Errorf("%w (check bot_token): %w", e, channel.ErrPermanent)
	case s == http.StatusForbidden || s == http.StatusNotFound || s == http.StatusBadRequest:
		return fmt.Errorf("%w: %w", e, channel.ErrPermanent)
	}
	return e
}

func clip(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}

// nonce is the message nonce of an outbox row: 25 characters at most, derived from the core's durable key, so
// a resend of the same row (after a crash, a timeout) carries the same nonce and, with enforce_nonce, Discord
// returns the message it already created instead of posting it twice.
func nonce(key string) string {
	if key == "" {
		return ""
	}
	h := sha256.Sum256([]byte(key))
	return "zc" + hex.EncodeToString(h[:])[:23]
}

type createdMessage struct {
	ID string `json:"id"`
}

func (a *Adapter) createMessage(ctx context.Context, channelID string, body map[string]any) (channel.Sent, error) {
	if !snowflake(channelID) {
		return channel.Sent{}, fmt.Errorf("discord: %q is not a channel id: %w", clip(channelID, 40), channel.ErrPermanent)
	}
	// No @everyone, role or user ping from a model's text or an echoed prompt, nor from the reply reference.
	body["allowed_mentions"] = map[string]any{"parse": []string{}, "replied_user": false}
	var out createdMessage
	if err := a.call(ctx, http.MethodPost, "messages:"+channelID, "/channels/"+channelID+"/messages", true, body, &out); err != nil {
		return channel.Sent{}, err
	}
	return channel.Sent{MessageID: out.ID}, nil
}

// Send implements channel.Adapter: one message, carrying the nonce of m.Key with enforce_nonce.
func (a *Adapter) Send(ctx context.Context, m channel.Outbound) (channel.Sent, error) {
	body := map[string]any{"content": m.Text}
	if n := nonce(m.Key); n != "" {
		body["nonce"], body["enforce_nonce"] = n, true
	}
	if snowflake(m.ReplyTo) {
		body["message_reference"] = map[string]any{"message_id": m.ReplyTo, "fail_if_not_exists": false}
	}
	return a.createMessage(ctx, m.ReplyTarget, body)
}

// WasSent implements channel.SentChecker. Discord cannot be asked whether a nonce was used, but it answers a
// resend carrying the same nonce with enforce_nonce by returning the message it already created (within its
// nonce window, a few minutes), so resending is the check: the message exists exactly once afterwards. A
// transient failure reports not sent, which puts the row back in the outbox; its send carries the same nonce.
func (a *Adapter) WasSent(ctx context.Context, m channel.Outbound) (bool, channel.Sent, error) {
	if m.Key == "" {
		return false, channel.Sent{}, errors.New("discord: no key to carry as a nonce")
	}
	s, err := a.Send(ctx, m)
	switch {
	case err == nil:
		return true, s, nil
	case errors.Is(err, channel.ErrPermanent):
		return false, channel.Sent{}, err
	}
	return false, channel.Sent{}, nil
}

// Typing implements channel.Typer.
func (a *Adapter) Typing(ctx context.Context, target, _ string) error {
	if !snowflake(target) {
		return fmt.Errorf("discord: %q is not a channel id", clip(target, 40))
	}
	return a.call(ctx, http.MethodPost, "typing:"+target, "/channels/"+target+"/typing", true, nil, nil)
}

// Prompt implements channel.Prompter: the question, its markdown escaped, with Approve / Deny buttons whose
// custom_id carries the token.
func (a *Adapter) Prompt(ctx context.Context, p channel.ApprovalPrompt) (channel.Sent, error) {
	row := map[string]any{"type": 1, "components": []map[string]any{
		{"type": componentButton, "style": 3, "label": "Approve", "custom_id": customPrefix + p.Token + ":a"},
		{"type": componentButton, "style": 4, "label": "Deny", "custom_id": customPrefix + p.Token + ":d"},
	}}
	return a.createMessage(ctx, p.ReplyTarget, map[string]any{"content": promptText(p.Text),
		"components": []any{row}})
}

// promptText escapes t and cuts it (whole escapes only) to fit one message.
func promptText(t string) string {
	var b strings.Builder
	n := 0
	for _, r := range t {
		e := escapeMarkdown(string(r))
		if n+len([]rune(e)) > maxPromptRunes {
			b.WriteString("…")
			break
		}
		b.WriteString(e)
		n += len([]rune(e))
	}
	return b.String()
}

// AckApproval implements channel.Prompter: an ephemeral reply to the press (only the presser sees it), which
// is also the interaction's required answer.
func (a *Adapter) AckApproval(ctx context.Context, ans channel.ApprovalAnswer, notice string) error {
	id, tok, ok := strings.Cut(ans.AckID, ":")
	if !ok || !snowflake(id) || tok == "" {
		return errors.New("discord: not an interaction handle")
	}
	body := map[string]any{"type": 4, "data": map[string]any{"content": notice, "flags": 64,
		"allowed_mentions": map[string]any{"parse": []string{}}}}
	return a.call(ctx, http.MethodPost, "callback", "/interactions/"+id+"/"+url.PathEscape(tok)+"/callback", false, body, nil)
}

// gatewayURL asks REST where the gateway is (GET /gateway/bot).
func (a *Adapter) gatewayURL(ctx context.Context) (string, error) {
	var out struct {
		URL string `json:"url"`
	}
	if err := a.call(ctx, http.MethodGet, "gateway/bot", "/gateway/bot", true, nil, &out); err != nil {
		return "", err
	}
	if err := checkWS(out.URL); err != nil {
		return "", fmt.Errorf("discord gateway/bot: %w", err)
	}
	return out.URL, nil
}

// checkWS accepts a ws:// or wss:// URL of reasonable length.
func checkWS(s string) error {
	u, err := url.Parse(s)
	if err != nil || len(s) > 512 || (u.Scheme != "wss" && u.Scheme != "ws") || u.Host == "" {
		return fmt.Errorf("%q is not a gateway URL", clip(s, 80))
	}
	return nil
}

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/coder/websocket"

	"github.com/zeroclaw-go/zeroclaw/internal/channel/matrix/matrixfake"
	"github.com/zeroclaw-go/zeroclaw/internal/channel/slack/slackfake"
)

// Slack and Matrix, the two adapters whose fakes speak the rest of the table's platforms: each through the
// real daemon beside a bare client of the same protocol on a second fake.

const (
	slackBot   = "xoxb-zcbench-bot-token"
	slackApp   = "xapp-1-zcbench-app-token"
	slackOwner = "U0OWNER1"
	slackDM    = "D0DM0001"
)

func slackTOML(url string) string {
	return fmt.Sprintf("[channels.slack.default]\nenabled = true\nbot_token = %q\napp_token = %q\napi_base_url = %q\n\n"+
		"[peer_groups.sl]\nchannel = \"slack\"\nagents = [\"default\"]\nexternal_peers = [%q]\n\n", slackBot, slackApp, url, slackOwner)
}

// matrixWorld is a fake homeserver with the bot, its owner and a room of the two.
type matrixWorld struct {
	fake                    *matrixfake.Server
	bot, owner, room, token string
}

func newMatrixWorld() *matrixWorld {
	w := &matrixWorld{fake: matrixfake.Start("zcbench.local")}
	w.bot, w.owner = w.fake.AddUser("bot", "pw"), w.fake.AddUser("owner", "o")
	w.room = w.fake.CreateRoom("room", w.bot, w.owner)
	w.token = w.fake.Token(w.bot, "ZCBENCH")
	return w
}

func (w *matrixWorld) toml() string {
	return fmt.Sprintf("[channels.matrix.default]\nenabled = true\nhomeserver = %q\naccess_token = %q\n\n"+
		"[peer_groups.mx]\nchannel = \"matrix\"\nagents = [\"default\"]\nexternal_peers = [%q]\n\n", w.fake.URL(), w.token, w.owner)
}

// slack: a message event pushed on the Socket Mode WebSocket → the daemon's chat.postMessage accepted by the
// fake. Floor: a bare Socket Mode client (apps.connections.open, hello, an ack per envelope) that answers each
// message with one chat.postMessage, on a second fake.
func (r *chanBench) slack() error {
	measure := func(fake *slackfake.Server, prefix string) ([]time.Duration, error) {
		var out []time.Duration
		for i := range r.n {
			before := len(fake.Sent())
			start := time.Now()
			fake.SendText(slackDM, slackOwner, fmt.Sprintf("%s %d", prefix, i), "")
			if err := waitFor("the Slack reply", 30*time.Second, func() bool { return len(fake.Sent()) > before }); err != nil {
				return nil, err
			}
			out = append(out, time.Since(start))
		}
		return out, nil
	}
	through, err := measure(r.sl, "bench ping")
	if err != nil {
		return err
	}
	fake := slackfake.Start(slackBot, slackApp)
	defer fake.Close()
	ctx, cancel := context.WithCancel(r.b.ctx)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- bareSlack(ctx, fake.URL()) }()
	if err := waitFor("the bare client's socket", 20*time.Second, fake.Connected); err != nil {
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
	r.row("slack: message event on the Socket Mode WebSocket → chat.postMessage", through, floor)
	return nil
}

func slackCall(ctx context.Context, hc *http.Client, base, token, method string, body any, out any) error {
	raw, _ := json.Marshal(body)
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, base+"/"+method, bytes.NewReader(raw))
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	var ok struct {
		OK    bool   `json:"ok"`
		Error string `json:"error"`
	}
	var buf bytes.Buffer
	if _, err := buf.ReadFrom(resp.Body); err != nil {
		return err
	}
	if err := json.Unmarshal(buf.Bytes(), &ok); err != nil || !ok.OK {
		return fmt.Errorf("%s: %v %s", method, err, ok.Error)
	}
	if out != nil {
		return json.Unmarshal(buf.Bytes(), out)
	}
	return nil
}

func bareSlack(ctx context.Context, base string) error {
	hc := &http.Client{Timeout: 30 * time.Second}
	var open struct {
		URL string `json:"url"`
	}
	if err := slackCall(ctx, hc, base, slackApp, "apps.connections.open", map[string]any{}, &open); err != nil {
		return err
	}
	ws, _, err := websocket.Dial(ctx, open.URL, nil)
	if err != nil {
		return err
	}
	defer ws.CloseNow()
	for {
		_, raw, err := ws.Read(ctx)
		if err != nil {
			return err
		}
		var env struct {
			EnvelopeID string `json:"envelope_id"`
			Type       string `json:"type"`
			Payload    struct {
				Event struct {
					Type, Channel, Text, TS string
				} `json:"event"`
			} `json:"payload"`
		}
		if json.Unmarshal(raw, &env) != nil || env.EnvelopeID == "" {
			continue
		}
		ack, _ := json.Marshal(map[string]string{"envelope_id": env.EnvelopeID})
		if err := ws.Write(ctx, websocket.MessageText, ack); err != nil {
			return err
		}
		if ev := env.Payload.Event; env.Type == "events_api" && ev.Type == "message" {
			if err := slackCall(ctx, hc, base, slackBot, "chat.postMessage", map[string]any{"channel": ev.Channel, "text": "echo: " + ev.Text}, nil); err != nil {
				return err
			}
		}
	}
}

// matrix: an m.room.message from the owner → the daemon's PUT send (a reply to it) accepted by the fake; the
// daemon is in a /sync long poll the message wakes. Floor: a bare client in the same /sync long poll that
// answers each message of the owner with one PUT send, on a second fake.
func (r *chanBench) matrix() error {
	measure := func(w *matrixWorld, prefix string) ([]time.Duration, error) {
		var out []time.Duration
		for i := range r.n {
			before := len(w.fake.Sent())
			start := time.Now()
			id := w.fake.Say(w.room, w.owner, fmt.Sprintf("%s %d", prefix, i))
			if err := waitFor("the Matrix reply to "+id, 30*time.Second, func() bool { return len(w.fake.Sent()) > before }); err != nil {
				return nil, err
			}
			out = append(out, time.Since(start))
			if got := w.fake.Sent()[before]; got.InReplyTo != id {
				return nil, fmt.Errorf("the reply %+v does not answer %s", got, id)
			}
		}
		return out, nil
	}
	through, err := measure(r.mx, "bench ping")
	if err != nil {
		return err
	}
	w := newMatrixWorld()
	defer w.fake.Close()
	ctx, cancel := context.WithCancel(r.b.ctx)
	defer cancel()
	done := make(chan error, 1)
	synced := make(chan struct{})
	go func() { done <- bareMatrix(ctx, w, synced) }()
	select {
	case <-synced:
	case err := <-done:
		return fmt.Errorf("bare matrix client: %w", err)
	case <-time.After(20 * time.Second):
		return fmt.Errorf("the bare matrix client did not sync within 20 s")
	}
	floor, err := measure(w, "floor ping")
	if err != nil {
		return err
	}
	cancel()
	if err := <-done; err != nil && ctx.Err() == nil {
		return err
	}
	r.row("matrix: m.room.message → PUT send of the reply (client-server /sync)", through, floor)
	return nil
}

func bareMatrix(ctx context.Context, w *matrixWorld, synced chan<- struct{}) error {
	hc := &http.Client{Timeout: 60 * time.Second}
	base := w.fake.URL() + "/_matrix/client/v3/"
	do := func(method, path string, body any, out any) error {
		var rd *bytes.Reader
		if body != nil {
			raw, _ := json.Marshal(body)
			rd = bytes.NewReader(raw)
		} else {
			rd = bytes.NewReader(nil)
		}
		req, _ := http.NewRequestWithContext(ctx, method, base+path, rd)
		req.Header.Set("Authorization", "Bearer "+w.token)
		req.Header.Set("Content-Type", "application/json")
		resp, err := hc.Do(req)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("%s %s: HTTP %d", method, path, resp.StatusCode)
		}
		return json.NewDecoder(resp.Body).Decode(out)
	}
	since, txn := "", 0
	for {
		path := "sync?timeout=30000"
		if since != "" {
			path += "&since=" + url.QueryEscape(since)
		}
		var page struct {
			NextBatch string `json:"next_batch"`
			Rooms     struct {
				Join map[string]struct {
					Timeline struct {
						Events []struct {
							Type, Sender string
							EventID      string `json:"event_id"`
							Content      struct {
								Body string `json:"body"`
							} `json:"content"`
						} `json:"events"`
					} `json:"timeline"`
				} `json:"join"`
			} `json:"rooms"`
		}
		if err := do(http.MethodGet, path, nil, &page); err != nil {
			return err
		}
		first := since == ""
		since = page.NextBatch
		if first {
			close(synced) // the initial sync's history is not answered
			continue
		}
		for room, j := range page.Rooms.Join {
			for _, ev := range j.Timeline.Events {
				if ev.Type != "m.room.message" || ev.Sender != w.owner {
					continue
				}
				txn++
				var sent map[string]any
				if err := do(http.MethodPut, "rooms/"+url.PathEscape(room)+"/send/m.room.message/floor"+fmt.Sprint(txn),
					map[string]any{"msgtype": "m.text", "body": "echo: " + strings.TrimSpace(ev.Content.Body),
						"m.relates_to": map[string]any{"m.in_reply_to": map[string]any{"event_id": ev.EventID}}}, &sent); err != nil {
					return err
				}
			}
		}
	}
}

package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/zeroclaw-go/zeroclaw/internal/api"
	"github.com/zeroclaw-go/zeroclaw/internal/cli/hint"
	"github.com/zeroclaw-go/zeroclaw/internal/install"
	"github.com/zeroclaw-go/zeroclaw/internal/jsonrpc"
	"github.com/zeroclaw-go/zeroclaw/internal/visible"
)

// logLine is the part of a runtime event the logs command prints.
type logLine struct {
	ID             string `json:"id"`
	Timestamp      string `json:"@timestamp"`
	SeverityNumber int    `json:"severity_number"`
	SeverityText   string `json:"severity_text"`
	Event          struct {
		Category string `json:"category"`
		Action   string `json:"action"`
		Outcome  string `json:"outcome"`
	} `json:"event"`
	Zeroclaw   map[string]any `json:"zeroclaw"`
	Message    string         `json:"message"`
	Attributes map[string]any `json:"attributes"`
}

var severityNumbers = map[string]int{"trace": 1, "debug": 5, "info": 9, "warn": 13, "warning": 13, "error": 17}

func runLogs(ctx context.Context, env Env, args []string) error {
	fs := newFlagSet(env, "logs", "[--config-dir DIR] [-f] [--severity LEVEL] [--category CAT] [--since DURATION|TIME] [--limit N] [--json]")
	configDir := configDirFlag(fs)
	follow := fs.Bool("f", false, "keep printing new events as they happen")
	severity := fs.String("severity", "", "lowest severity shown: trace, debug, info, warn or error")
	category := fs.String("category", "", "only events of this category (agent, tool, provider, session, system, ...)")
	since := fs.String("since", "", "only events after this: a duration back from now (10m, 2h) or an RFC 3339 time")
	limit := fs.Int("limit", 50, "how many past events to print (newest ones)")
	fs.IntVar(limit, "n", 50, "short for --limit")
	asJSON := fs.Bool("json", false, "print each event as its JSON line")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	q := api.LogsQueryParams{Category: *category, Limit: limit}
	if *severity != "" {
		n, ok := severityNumbers[strings.ToLower(*severity)]
		if !ok {
			return hint.With(say("cli-logs-unknown-severity", "severity", fmt.Sprintf("%q", *severity)), "zeroclaw logs --severity warn (trace, debug, info, warn, error)")
		}
		q.SeverityMin = &n
	}
	if *since != "" {
		if d, err := time.ParseDuration(*since); err == nil {
			q.SinceTS = time.Now().Add(-d).UTC().Format("2006-01-02T15:04:05.000Z")
		} else if t, err := time.Parse(time.RFC3339Nano, *since); err == nil {
			q.SinceTS = t.UTC().Format("2006-01-02T15:04:05.000Z")
		} else {
			return hint.With(say("cli-logs-bad-since", "value", fmt.Sprintf("%q", *since)), "zeroclaw logs --since 15m")
		}
	}
	if *limit < 1 {
		return hint.With(say("cli-logs-bad-limit"), "zeroclaw logs --limit 100")
	}
	layout, err := install.Resolve(*configDir, env.Getenv, env.Home)
	if err != nil {
		return err
	}
	endpoint := layout.Endpoint(env.Getenv)
	p := &logPrinter{out: env.Stdout, json: *asJSON, seen: map[string]bool{}, q: q}
	c, err := connect(ctx, endpoint, func(_ context.Context, req *jsonrpc.Request) (any, error) {
		switch req.Method {
		case api.NotifyLogsEvent:
			p.live(req.Params)
		case api.NotifySubscriptionLagged:
			var l api.SubscriptionLagged
			if json.Unmarshal(req.Params, &l) == nil {
				fmt.Fprintln(env.Stderr, env.Locale().T("cli-logs-missed", "from", l.FromSeq, "to", l.ResumeSeq-1))
			}
		}
		return nil, nil
	})
	if errors.Is(err, errNoDaemon) && !*follow {
		events, err := offlineLogs(layout, env, q)
		if err != nil {
			return err
		}
		fmt.Fprintln(env.Stderr, env.Locale().T("cli-offline-note"))
		p.history(events)
		return nil
	}
	if errors.Is(err, errNoDaemon) {
		return hinted(say("cli-logs-follow-no-daemon", "error", err), "cli-logs-follow-no-daemon-hint")
	}
	if err != nil {
		return err
	}
	defer c.Close()
	if *follow { // subscribe first, so nothing falls between the history and the live feed
		p.mu.Lock()
		p.holding = true
		p.mu.Unlock()
		if err := c.Call(ctx, api.MethodLogsSubscribe, map[string]any{}, nil); err != nil {
			return err
		}
	}
	var page api.LogsQueryResult
	err = c.Call(ctx, api.MethodLogsQuery, q, &page)
	var we *jsonrpc.Error
	switch {
	case errors.As(err, &we) && strings.Contains(we.Message, "not enabled") && *follow:
		fmt.Fprintln(env.Stderr, env.Locale().T("cli-logs-follow-only"))
	case err != nil:
		return err
	}
	p.history(page.Events)
	if !*follow {
		return nil
	}
	select {
	case <-ctx.Done():
		return nil
	case <-c.Served():
		return say("cli-daemon-closed")
	}
}

// logPrinter prints the history page (oldest first), then live events that pass the same filters, each once.
type logPrinter struct {
	out  io.Writer
	json bool
	q    api.LogsQueryParams

	mu      sync.Mutex // guards the fields below
	seen    map[string]bool
	holding bool              // history not printed yet: live events wait in held
	held    []json.RawMessage // live events that arrived before the history
}

func (p *logPrinter) history(newestFirst []json.RawMessage) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, raw := range slices.Backward(newestFirst) {
		p.printLocked(raw)
	}
	for _, raw := range p.held {
		p.printLocked(raw)
	}
	p.holding, p.held = false, nil
}

func (p *logPrinter) live(params json.RawMessage) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.holding {
		p.held = append(p.held, slices.Clone(params))
		return
	}
	p.printLocked(params)
}

func (p *logPrinter) printLocked(raw json.RawMessage) {
	var e logLine
	if json.Unmarshal(raw, &e) != nil || e.ID == "" || p.seen[e.ID] {
		return
	}
	p.seen[e.ID] = true
	if p.q.SeverityMin != nil && e.SeverityNumber < *p.q.SeverityMin || p.q.Category != "" && !strings.EqualFold(e.Event.Category, p.q.Category) ||
		p.q.SinceTS != "" && e.Timestamp < p.q.SinceTS {
		return
	}
	if p.json {
		// The stored line as it is; a live event loses the subscription_id and seq put in front of it.
		if bytes.HasPrefix(raw, []byte(`{"subscription_id":`)) {
			if i := bytes.Index(raw, []byte(`"id":`)); i > 0 {
				raw = append([]byte{'{'}, raw[i:]...)
			}
		}
		fmt.Fprintln(p.out, string(raw))
		return
	}
	kind := e.Event.Category + "/" + e.Event.Action
	if e.Event.Outcome != "" {
		kind += "/" + e.Event.Outcome
	}
	extra := fields(e.Zeroclaw, 0)
	// The attributes say why (error) and how much; a long one is cut, a nested one left to --json.
	if v, ok := e.Attributes["error"]; ok {
		extra = append(extra, fields(map[string]any{"error": v}, maxErrorAttr)...)
	}
	delete(e.Attributes, "error")
	extra = append(extra, fields(e.Attributes, maxShortAttr)...)
	fmt.Fprintf(p.out, "%s %-5s %-24s %s %s\n", e.Timestamp, e.SeverityText, kind, visible.Escape(e.Message), visible.Escape(strings.Join(extra, " ")))
}

// Longest attribute values the text view shows: the error in full up to maxErrorAttr, others up to
// maxShortAttr (cut with "…").
const (
	maxErrorAttr = 500
	maxShortAttr = 80
)

// fields renders m as sorted key=value pairs: strings quoted, other values as JSON. With limit > 0 a value
// longer than limit is cut and an object or array skipped (see --json).
func fields(m map[string]any, limit int) []string {
	var out []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		var v string
		switch x := m[k].(type) {
		case string:
			if r := []rune(x); limit > 0 && len(r) > limit {
				x = string(r[:limit-1]) + "…"
			}
			v = strconv.Quote(x)
		case map[string]any, []any:
			if limit > 0 {
				continue
			}
			b, _ := json.Marshal(x)
			v = string(b)
		default:
			b, _ := json.Marshal(x)
			v = string(b)
		}
		out = append(out, k+"="+v)
	}
	return out
}

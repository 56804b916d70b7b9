package rpc

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"sync"

	"github.com/zeroclaw-go/zeroclaw/internal/api"
	"github.com/zeroclaw-go/zeroclaw/internal/jsonrpc"
	"github.com/zeroclaw-go/zeroclaw/internal/logs"
	"github.com/zeroclaw-go/zeroclaw/internal/router"
)

// maxSubscriptionsPerConn bounds the live feeds one connection may hold.
const maxSubscriptionsPerConn = 8

// feeds are the live log subscriptions of every connection; each runs one goroutine that the connection's
// ServeConn waits for.
type feeds struct {
	mu   sync.Mutex // mu guards subs and next
	subs map[*Peer]map[string]feedHandle
	next uint64
}

// feedHandle stops one feed (cancel) and tells when its goroutine is gone (done closed).
type feedHandle struct {
	cancel context.CancelFunc
	done   chan struct{}
}

func (s *Server) registerLogs(h *logs.Hub) {
	s.register(api.MethodLogsQuery, handle(api.GrantLogsRead, func(_ context.Context, peer *Peer, p *api.LogsQueryParams) (api.LogsQueryResult, error) {
		f := logs.Filter{SinceTS: p.SinceTS, UntilTS: p.UntilTS, UntilID: p.UntilID, Q: p.Q, Category: p.Category,
			Action: p.Action, Outcome: p.Outcome, TraceID: p.TraceID, HideInternal: p.HideInternal,
			Scope: peer.Principal().AgentScope()}
		if p.UntilLineOffset != nil {
			if *p.UntilLineOffset < 0 {
				return api.LogsQueryResult{}, router.InvalidParams("until_line_offset must not be negative")
			}
			off := uint64(*p.UntilLineOffset)
			f.UntilLineOffset = &off
		}
		if p.SeverityMin != nil {
			if *p.SeverityMin < 0 || *p.SeverityMin > 255 {
				return api.LogsQueryResult{}, router.InvalidParams("severity_min must be between 0 and 255")
			}
			f.SeverityMin = *p.SeverityMin
		}
		limit := 0
		if p.Limit != nil {
			if *p.Limit < 0 {
				return api.LogsQueryResult{}, router.InvalidParams("limit must not be negative")
			}
			limit = max(*p.Limit, 1) // upstream clamps to 1..10000
		}
		if p.AgentAlias != "" || p.SessionKey != "" {
			f.Field = map[string]string{}
			if p.AgentAlias != "" {
				f.Field["agent_alias"] = p.AgentAlias
			}
			if p.SessionKey != "" {
				f.Field["session_key"] = p.SessionKey
			}
		}
		page, err := h.Query(f, limit)
		if err != nil {
			return api.LogsQueryResult{}, logsError(err, "")
		}
		return api.LogsQueryResult{Events: page.Events, NextCursor: page.NextCursor,
			NextCursorLineOffset: page.NextLineOffset, AtEnd: page.AtEnd}, nil
	}))
	s.register(api.MethodLogsGet, handle(api.GrantLogsRead, func(_ context.Context, peer *Peer, p *api.LogsGetParams) (api.LogsGetResult, error) {
		if p.ID == "" {
			return api.LogsGetResult{}, router.InvalidParams("id is required")
		}
		ev, err := h.Get(p.ID)
		if err == nil && !logs.Scope(peer.Principal().AgentScope()).AllowsLine(ev) {
			err = logs.ErrNotFound // another agent's event is not there for this reader (not "forbidden": that would confirm it)
		}
		if err != nil {
			return api.LogsGetResult{}, logsError(err, p.ID)
		}
		return api.LogsGetResult{Event: ev}, nil
	}))
	s.register(api.MethodLogsSubscribe, router.HandleRequest(api.GrantLogsRead, func(ctx context.Context, p *Peer, params *api.LogsSubscribeParams, req *jsonrpc.Request) (api.LogsSubscribeResult, error) {
		return s.subscribe(ctx, p, h, params, req)
	}))
	s.register(api.MethodLogsUnsubscribe, handle(api.GrantLogsRead, func(_ context.Context, p *Peer, params *api.LogsUnsubscribeParams) (api.LogsUnsubscribeResult, error) {
		s.feeds.mu.Lock()
		fh, ok := s.feeds.subs[p][params.SubscriptionID]
		delete(s.feeds.subs[p], params.SubscriptionID)
		s.feeds.mu.Unlock()
		if ok {
			fh.cancel()
		}
		return api.LogsUnsubscribeResult{Unsubscribed: ok}, nil
	}))
}

// logsError maps the log domain's errors to upstream's wire errors; id is the event logs/get asked for.
func logsError(err error, id string) error {
	switch {
	case errors.Is(err, logs.ErrNotPersisted):
		return jsonrpc.NewError(jsonrpc.CodeInternalError, "Log persistence is not enabled", nil)
	case errors.Is(err, logs.ErrNotFound):
		return jsonrpc.NewError(jsonrpc.CodeInternalError, fmt.Sprintf("Log id `%s` not found", id), nil).WithCause(err)
	}
	return err
}

// subscribe starts a feed for p. Its goroutine reads the hub's ring at its own pace: when the connection's
// outbound queue is full only this goroutine waits, and what leaves the ring meanwhile is reported as lagged.
func (s *Server) subscribe(ctx context.Context, p *Peer, h *logs.Hub, params *api.LogsSubscribeParams, req *jsonrpc.Request) (api.LogsSubscribeResult, error) {
	f := &s.feeds
	f.mu.Lock()
	if len(f.subs[p]) >= maxSubscriptionsPerConn {
		f.mu.Unlock()
		return api.LogsSubscribeResult{}, router.InvalidParams(fmt.Sprintf("this connection already holds %d log subscriptions", maxSubscriptionsPerConn))
	}
	if f.subs == nil {
		f.subs = map[*Peer]map[string]feedHandle{}
	}
	if f.subs[p] == nil {
		f.subs[p] = map[string]feedHandle{}
	}
	f.next++
	id := "sub-" + strconv.FormatUint(f.next, 10)
	// The feed outlives this request; it ends on logs/unsubscribe, when the connection ends, or with the hub.
	subCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	done := make(chan struct{})
	f.subs[p][id] = feedHandle{cancel: cancel, done: done}
	sub := h.Subscribe(params.SinceSeq, params.Epoch)
	seq := h.Seq()
	f.mu.Unlock()
	// The feed starts once the response is on its way: the client sees the subscription id before any event or
	// lag notice carrying it.
	req.AfterReply(func() {
		go func() {
			defer close(done)
			defer cancel()
			feed(subCtx, p.conn, id, sub, p.Principal().AgentScope())
		}()
	})
	return api.LogsSubscribeResult{Subscribed: true, SubscriptionID: id, Epoch: h.Epoch(), Seq: seq}, nil
}

// feed sends a subscription's deliveries as notifications until ctx ends, the hub closes or the connection does.
// Only the events scope allows are sent (a restricted principal's feed skips other agents' events).
func feed(ctx context.Context, c *jsonrpc.Conn, id string, sub *logs.Subscription, scope logs.Scope) {
	prefix := []byte(`{"subscription_id":` + strconv.Quote(id) + `,"seq":`)
	for {
		d, err := sub.Next(ctx)
		if err != nil {
			return
		}
		if d.Lag != nil {
			if c.Notify(api.NotifySubscriptionLagged, api.SubscriptionLagged{SubscriptionID: id, FromSeq: d.Lag.FromSeq,
				ResumeSeq: d.Lag.ResumeSeq, EpochChanged: d.Lag.EpochChanged}) != nil {
				return
			}
		}
		for _, fr := range d.Frames {
			if !scope.AllowsLine(fr.Line) {
				continue
			}
			// The event's own fields, with subscription_id and seq in front (upstream sends the bare event).
			b := make([]byte, 0, len(prefix)+24+len(fr.Line))
			b = strconv.AppendUint(append(b, prefix...), fr.Seq, 10)
			b = append(append(b, ','), fr.Line[1:]...)
			if ctx.Err() != nil || c.Notify(api.NotifyLogsEvent, json.RawMessage(b)) != nil {
				return
			}
		}
	}
}

// endFeeds stops p's subscriptions and waits for their goroutines. Called once p's connection is closed, so a
// feed waiting to queue a notification returns at once.
func (s *Server) endFeeds(p *Peer) {
	s.feeds.mu.Lock()
	subs := s.feeds.subs[p]
	delete(s.feeds.subs, p)
	s.feeds.mu.Unlock()
	for _, fh := range subs {
		fh.cancel()
		<-fh.done
	}
}

package rpc

import (
	"context"
	"errors"

	"github.com/zeroclaw-go/zeroclaw/internal/api"
	"github.com/zeroclaw-go/zeroclaw/internal/router"
	"github.com/zeroclaw-go/zeroclaw/internal/session"
)

func (s *Server) registerSessions(m *session.Manager) {
	s.register(api.MethodSessionNew, handle(api.GrantSessionsCreate, func(ctx context.Context, p *Peer, params *api.SessionNewParams) (api.SessionNewResult, error) {
		return m.New(ctx, p.owner(), *params)
	}))
	// session/prompt may come as a notification (zerocode sends it so): the turn runs and streams the same way.
	prompt := handle(api.GrantSessionsExecute, func(ctx context.Context, p *Peer, params *api.SessionPromptParams) (api.SessionPromptResult, error) {
		err := s.promptFiles(ctx, m, p, params)
		var res api.SessionPromptResult
		if err == nil {
			res, err = m.Prompt(ctx, p.owner(), *params, peerSink{p})
		}
		if errors.Is(err, session.ErrNotFound) || errors.Is(err, session.ErrClosed) {
			// A client that waits for events, not for this answer, must still see the turn end.
			content := "session not found: " + params.SessionID
			peerSink{p}.Update(api.SessionUpdate{SessionID: params.SessionID, Type: api.UpdateTurnComplete,
				Outcome: api.OutcomeFailed, Content: &content, Error: err.Error(), ClientTurnGeneration: params.ClientTurnGeneration})
		}
		return res, err
	})
	prompt.Concurrent = true
	s.register(api.MethodSessionPrompt, prompt)
	// cancel and approve run beside a long turn, never queued behind it.
	cancel := handle(api.GrantSessionsExecute, func(_ context.Context, p *Peer, params *api.SessionIDParams) (api.SessionCancelResult, error) {
		return m.Cancel(p.owner(), params.SessionID)
	})
	cancel.Concurrent = true
	s.register(api.MethodSessionCancel, cancel)
	approve := handle(api.GrantSessionsExecute, func(_ context.Context, p *Peer, params *api.SessionApproveParams) (api.SessionApproveResult, error) {
		return m.Approve(p.owner(), *params)
	})
	approve.Concurrent = true
	s.register(api.MethodSessionApprove, approve)
	s.register(api.MethodSessionClose, handle(api.GrantSessionsExecute, func(_ context.Context, p *Peer, params *api.SessionIDParams) (api.SessionCloseResult, error) {
		return m.Close(p.owner(), params.SessionID)
	}))
	s.register(api.MethodSessionDelete, handle(api.GrantSessionsDelete, func(ctx context.Context, p *Peer, params *api.SessionIDParams) (api.SessionDeleteResult, error) {
		return m.Delete(ctx, p.owner(), params.SessionID)
	}))
	s.register(api.MethodSessionKill, handle(api.GrantSessionsDelete, func(ctx context.Context, p *Peer, params *api.SessionIDParams) (api.SessionKillResult, error) {
		return m.Kill(ctx, p.owner(), params.SessionID)
	}))
	s.register(api.MethodSessionListACP, handle(api.GrantSessionsRead, func(ctx context.Context, p *Peer, params *api.SessionListParams) (api.SessionListResult, error) {
		if err := router.NonNegative("limit", params.Limit); err != nil {
			return api.SessionListResult{}, err
		}
		return m.ListACP(ctx, p.owner(), params.Limit)
	}))
	s.register(api.MethodSessionList, handle(api.GrantSessionsRead, func(ctx context.Context, p *Peer, params *api.SessionListParams) (api.SessionListResult, error) {
		if err := router.NonNegative("limit", params.Limit); err != nil {
			return api.SessionListResult{}, err
		}
		if err := router.NonNegative("offset", params.Offset); err != nil {
			return api.SessionListResult{}, err
		}
		return m.List(ctx, p.owner(), *params)
	}))
	s.register(api.MethodSessionMsgs, handle(api.GrantSessionsRead, func(ctx context.Context, p *Peer, params *api.SessionMessagesParams) (api.SessionMessagesResult, error) {
		if err := router.NonNegative("limit", params.Limit); err != nil {
			return api.SessionMessagesResult{}, err
		}
		if params.BeforeIndex != nil {
			if err := router.NonNegative("before_index", *params.BeforeIndex); err != nil {
				return api.SessionMessagesResult{}, err
			}
		}
		return m.Messages(ctx, p.owner(), *params)
	}))
	s.register(api.MethodSessionState, handle(api.GrantSessionsRead, func(ctx context.Context, p *Peer, params *api.SessionIDParams) (api.SessionStateResult, error) {
		return m.State(ctx, p.owner(), params.SessionID)
	}))
}

// owner is the session-layer identity of this connection.
func (p *Peer) owner() session.Owner {
	o := session.OwnerOf(p.Principal(), p.ID)
	o.Env = p.Env()
	return o
}

// peerSink delivers a turn's events to the connection that sent the prompt, through its single writer.
type peerSink struct{ p *Peer }

func (s peerSink) Update(ev api.SessionUpdate) {
	// A closed connection drops the event; the turn is being cancelled by the disconnect anyway.
	_ = s.p.conn.Notify(api.NotifySessionUpdate, (*updateParams)(&ev))
}

func (s peerSink) Elicit(ctx context.Context, params api.ElicitationParams) (api.ElicitationResult, error) {
	if !s.p.CanElicit() {
		return api.ElicitationResult{}, session.ErrNoElicitation
	}
	raw, err := s.p.conn.Call(ctx, api.MethodElicitationCreate, params)
	if err != nil {
		return api.ElicitationResult{}, err
	}
	var res api.ElicitationResult
	if err := router.DecodeParams(raw, &res); err != nil {
		return api.ElicitationResult{}, errors.New("rpc: the client's elicitation answer is not an object")
	}
	return res, nil
}

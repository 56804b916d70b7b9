package daemon

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/zeroclaw-go/zeroclaw/internal/api"
	"github.com/zeroclaw-go/zeroclaw/internal/errmap"
	"github.com/zeroclaw-go/zeroclaw/internal/gateway"
	"github.com/zeroclaw-go/zeroclaw/internal/router"
	"github.com/zeroclaw-go/zeroclaw/internal/session"
)

// wsChat is /ws/chat's view of the session manager: the same calls session/new, session/prompt and
// session/approve make, for the device principal.
type wsChat struct {
	m *session.Manager
}

// Open binds the chat to a connection id from the ids every protocol draws from (router.NewConnID), so its turns
// and approvals never mix with a native or ACP connection's: the session layer keys them by connection id.
func (c *wsChat) Open(ctx context.Context, id gateway.Identity, p gateway.ChatOpen) (gateway.ChatSession, gateway.ChatStarted, error) {
	o := session.OwnerOf(id.Principal, router.NewConnID())
	res, err := c.m.New(ctx, o, api.SessionNewParams{AgentAlias: p.Agent, SessionID: p.SessionID, Cwd: p.Cwd})
	if err != nil {
		return nil, gateway.ChatStarted{}, err
	}
	return &wsChatSession{m: c.m, o: o, id: res.SessionID},
		gateway.ChatStarted{SessionID: res.SessionID, Resumed: p.SessionID != "" && res.MessageCount > 0, MessageCount: res.MessageCount}, nil
}

type wsChatSession struct {
	m  *session.Manager
	o  session.Owner
	id string
}

// Prompt runs the turn; a turn that could not start for a reason the error table gives a chat code (a full
// queue, a timed-out wait) becomes that error frame.
func (s *wsChatSession) Prompt(ctx context.Context, content string, events gateway.ChatEvents) (api.SessionPromptResult, error) {
	res, err := s.m.Prompt(ctx, s.o, api.SessionPromptParams{SessionID: s.id, Prompt: content}, chatSink{events})
	if code := errmap.ChatCode(err); code != "" {
		return res, &gateway.ChatError{Code: code, Message: err.Error()}
	}
	return res, err
}

func (s *wsChatSession) Approve(requestID, decision string, replacement json.RawMessage) bool {
	res, err := s.m.Approve(s.o, api.SessionApproveParams{SessionID: s.id, RequestID: requestID, Decision: decision,
		Replacement: replacement})
	return err == nil && res.Acknowledged
}

func (s *wsChatSession) Close() { s.m.Disconnected(s.o.ConnID) }

// chatSink delivers a turn's events to the socket and puts its questions there (question frames); a form the
// chat cannot show is one the client cannot answer (session.ErrNoElicitation).
type chatSink struct{ e gateway.ChatEvents }

func (s chatSink) Update(ev api.SessionUpdate) { s.e.Update(ev) }

func (s chatSink) Elicit(ctx context.Context, p api.ElicitationParams) (api.ElicitationResult, error) {
	res, err := s.e.Ask(ctx, p)
	if errors.Is(err, gateway.ErrNoQuestion) {
		return res, fmt.Errorf("%w: %w", session.ErrNoElicitation, err)
	}
	return res, err
}

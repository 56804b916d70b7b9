package session

import (
	"context"
	"fmt"

	"github.com/zeroclaw-go/zeroclaw/internal/agent"
	"github.com/zeroclaw-go/zeroclaw/internal/api"
)

// ChannelPrincipal owns the sessions chat channels (internal/channel) create.
const ChannelPrincipal = "channel"

// ChannelTurn is one turn a chat channel's message starts: in the channel session SessionID (created on the
// first message, continued after), its approvals put to the chat by Approve.
type ChannelTurn struct {
	Agent, SessionID, Prompt string
	ExcludedTools            []string
	// Approve decides what the agent's profile would ask about. It must honour ctx.
	Approve func(ctx context.Context, req agent.ApprovalRequest) (agent.ApprovalDecision, error)
}

// RunChannel runs one channel turn as ChannelPrincipal (admin reach, as a scheduled job has) and returns its
// answer; a turn that did not complete is an error carrying what it said. The session is closed afterwards
// (kept in the store: session/list shows it with its channel_id).
func (m *Manager) RunChannel(ctx context.Context, c ChannelTurn) (string, error) {
	o := Owner{Principal: ChannelPrincipal, Admin: true}
	m.enterChannel(c.SessionID)
	defer func() {
		if m.leaveChannel(c.SessionID) {
			_, _ = m.Close(o, c.SessionID)
		}
	}()
	if _, err := m.New(ctx, o, api.SessionNewParams{SessionID: c.SessionID, AgentAlias: c.Agent}); err != nil {
		return "", err
	}
	var ap agent.Approver = refuseAll{}
	if c.Approve != nil {
		ap = channelApprover(c.Approve)
	}
	sink := &endSink{}
	res, err := m.prompt(ctx, o, api.SessionPromptParams{SessionID: c.SessionID, Prompt: c.Prompt}, sink,
		turnOptions{approver: ap, excluded: c.ExcludedTools})
	if err != nil {
		return "", err
	}
	if res.Outcome != api.OutcomeCompleted {
		return res.Content, fmt.Errorf("session: channel turn %s: %s", res.Outcome, sink.err)
	}
	return res.Content, nil
}

// channelUse is the channel turns in flight on one session id: while any is, the session stays live (a
// later message of the chat queues behind the running turn instead of finding its session closed under it),
// and the last one out closes it if the first one found it not live (a session the owner has open stays open).
type channelUse struct {
	n     int
	close bool
}

// enterChannel counts one more channel turn on id; the first decides whether the last closes the session.
func (m *Manager) enterChannel(id string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.channelUses == nil {
		m.channelUses = map[string]*channelUse{}
	}
	u := m.channelUses[id]
	if u == nil {
		_, live := m.sessions[id]
		u = &channelUse{close: !live}
		m.channelUses[id] = u
	}
	u.n++
}

// leaveChannel counts one channel turn on id done and reports whether it was the last and should close it.
func (m *Manager) leaveChannel(id string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	u := m.channelUses[id]
	if u.n--; u.n > 0 {
		return false
	}
	delete(m.channelUses, id)
	return u.close
}

// channelApprover announces the request (nobody watches the event; the chat gets the prompt) and asks.
type channelApprover func(ctx context.Context, req agent.ApprovalRequest) (agent.ApprovalDecision, error)

func (f channelApprover) RequestApproval(ctx context.Context, req agent.ApprovalRequest) (agent.ApprovalDecision, error) {
	if req.Announce != nil {
		req.Announce("")
	}
	return f(ctx, req)
}

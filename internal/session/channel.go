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
	_, liveErr := m.live(c.SessionID)
	if _, err := m.New(ctx, o, api.SessionNewParams{SessionID: c.SessionID, AgentAlias: c.Agent}); err != nil {
		return "", err
	}
	if liveErr != nil {
		defer func() { _, _ = m.Close(o, c.SessionID) }()
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

// channelApprover announces the request (nobody watches the event; the chat gets the prompt) and asks.
type channelApprover func(ctx context.Context, req agent.ApprovalRequest) (agent.ApprovalDecision, error)

func (f channelApprover) RequestApproval(ctx context.Context, req agent.ApprovalRequest) (agent.ApprovalDecision, error) {
	if req.Announce != nil {
		req.Announce("")
	}
	return f(ctx, req)
}

package session

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/zeroclaw-go/zeroclaw/internal/agent"
	"github.com/zeroclaw-go/zeroclaw/internal/api"
	"github.com/zeroclaw-go/zeroclaw/internal/tools"
)

// UnattendedPrincipal owns the sessions that unattended turns (scheduled jobs) create.
const UnattendedPrincipal = "cron"

// turnOptions narrow one turn beyond the agent's risk profile. An unattended turn is an ordinary turn built with
// other seams: an Approver that refuses (nobody can answer), tool lists, and a Sink that keeps only the end.
type turnOptions struct {
	// approver, when set, decides the turn's approvals instead of the client that sent the prompt (refuseAll:
	// what the profile would ask about is refused).
	approver agent.Approver
	allowed  []string // when non-empty, the only tools offered
	excluded []string // never offered
	extra    MCPTools // tools of this turn only (the heartbeat's heartbeat_complete), ahead of the MCP tools
}

func (t turnOptions) restrict(p *tools.Policy) {
	if len(t.excluded) > 0 {
		p.ExcludedTools = append(slices.Clone(p.ExcludedTools), t.excluded...)
	}
	if len(t.allowed) > 0 {
		if len(p.AllowedTools) == 0 {
			p.AllowedTools = slices.Clone(t.allowed)
		} else { // both lists apply: keep what both allow
			p.AllowedTools = slices.DeleteFunc(slices.Clone(p.AllowedTools), func(n string) bool { return !slices.Contains(t.allowed, n) })
			if len(p.AllowedTools) == 0 {
				p.ExcludedTools = append(p.ExcludedTools, t.allowed...)
			}
		}
	}
}

// approverOr is the turn's approver: t's, else a (the client's).
func (t turnOptions) approverOr(a agent.Approver) agent.Approver {
	if t.approver != nil {
		return t.approver
	}
	return a
}

// refuseAll answers every approval request of an unattended turn: nobody is there.
type refuseAll struct{}

func (refuseAll) RequestApproval(context.Context, agent.ApprovalRequest) (agent.ApprovalDecision, error) {
	return agent.ApprovalDecision{}, fmt.Errorf("session: unattended turn, nobody can approve: %w", agent.ErrApprovalAbandoned)
}

// Unattended is one turn that no client watches.
type Unattended struct {
	Agent     string
	SessionID string // a new id makes a fresh session; an existing one continues it
	Prompt    string
	// AllowedTools, when non-empty, are the only tools offered (within the agent's profile); ExcludedTools are
	// never offered.
	AllowedTools, ExcludedTools []string
	// Owner is the principal the session belongs to; "" means UnattendedPrincipal (a webhook names its device).
	Owner string
	// Restricted: Owner is not an admin, so the session must be its own, checked as session/prompt checks it
	// (ErrNotOwned otherwise). A scheduled job or a delegation leaves it false.
	Restricted bool
	// Grants are a Restricted owner's grants: its turn's memory tools and recall act with them.
	Grants []string
	// Agents and Tools are a Restricted owner's allowed_agents and allowed_tools (Owner's).
	Agents, Tools []string
	// Extra are tools offered to this turn only, besides the agent's (the heartbeat's completion tool); nil:
	// none. They go through the agent's risk policy like an MCP server's tools.
	Extra MCPTools
}

// RunUnattended runs one turn as UnattendedPrincipal, or Owner, with admin reach unless Restricted (so a job
// continues a named session of another owner) and returns its answer. The turn runs under the agent's risk profile; a call the profile
// would ask about is refused. A session it opened is closed (kept in the store) afterwards. A turn that did
// not complete is an error carrying what it said.
func (m *Manager) RunUnattended(ctx context.Context, u Unattended) (string, error) {
	o := Owner{Principal: UnattendedPrincipal, Admin: !u.Restricted, Grants: u.Grants, Agents: u.Agents, Tools: u.Tools}
	if u.Owner != "" {
		o.Principal = u.Owner
	}
	_, liveErr := m.live(u.SessionID)
	if _, err := m.New(ctx, o, api.SessionNewParams{SessionID: u.SessionID, AgentAlias: u.Agent}); err != nil {
		return "", err
	}
	if liveErr != nil {
		defer func() { _, _ = m.Close(o, u.SessionID) }()
	}
	sink := &endSink{}
	res, err := m.prompt(ctx, o, api.SessionPromptParams{SessionID: u.SessionID, Prompt: u.Prompt}, sink,
		turnOptions{approver: refuseAll{}, allowed: u.AllowedTools, excluded: u.ExcludedTools, extra: u.Extra})
	if err != nil {
		return "", err
	}
	if res.Outcome != api.OutcomeCompleted {
		return res.Content, &TurnError{Outcome: res.Outcome, Detail: sink.err}
	}
	return res.Content, nil
}

// ErrTurnFailed and ErrTurnCancelled are what a *TurnError of an unattended turn matches with errors.Is: the
// turn ran and failed (its provider, or its store), or it was cancelled (the caller left, the daemon stopped).
var (
	ErrTurnFailed    = errors.New("session: the turn failed")
	ErrTurnCancelled = errors.New("session: the turn was cancelled")
)

// TurnError is an unattended turn that started and did not complete: its outcome and what its turn_complete
// said (the error shown to clients, never a secret).
type TurnError struct {
	Outcome string // api.OutcomeFailed or api.OutcomeCancelled
	Detail  string
}

func (e *TurnError) Error() string {
	return fmt.Sprintf("session: unattended turn %s: %s", e.Outcome, e.Detail)
}

// Is matches ErrTurnCancelled for a cancelled turn and ErrTurnFailed for any other.
func (e *TurnError) Is(target error) bool {
	if e.Outcome == api.OutcomeCancelled {
		return target == ErrTurnCancelled
	}
	return target == ErrTurnFailed
}

// endSink keeps only the error of an unattended turn's turn_complete; its answer is the prompt's result.
type endSink struct{ err string }

// Update is called from the turn's goroutine only, and read after the turn.
func (s *endSink) Update(ev api.SessionUpdate) {
	if ev.Type == api.UpdateTurnComplete {
		s.err = ev.Error
	}
}

func (*endSink) Elicit(context.Context, api.ElicitationParams) (api.ElicitationResult, error) {
	return api.ElicitationResult{}, ErrNoElicitation
}

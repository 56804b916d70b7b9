package session

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/zeroclaw-go/zeroclaw/internal/agent"
	"github.com/zeroclaw-go/zeroclaw/internal/api"
	"github.com/zeroclaw-go/zeroclaw/internal/auth"
	"github.com/zeroclaw-go/zeroclaw/internal/clock"
	"github.com/zeroclaw-go/zeroclaw/internal/journal"
)

// Turn states stored in session_metadata.state (the journal's).
const (
	stateIdle    = journal.StateIdle
	stateRunning = journal.StateRunning
	stateError   = journal.StateError
)

// session is one live session: its actor queue, the turns in it and their pending approvals.
type session struct {
	id, alias, workspace string
	key                  string        // its key in sessions.db (store.Resolve, or rpc_<id> for a new one)
	owner                string        // the principal that owns it
	lock                 *turnLock     // shared by every incarnation of the key; set by Manager.register
	gen                  uint64        // this incarnation's number, unique per Manager; set by Manager.register
	done                 chan struct{} // closed by close
	acp                  *acpState     // set for an ACP session (see acp.go); nil for a chat session
	editorMCP            EditorMCP     // an ACP session's editor-named MCP servers (guarded by mu); nil: none
	configMu             sync.Mutex    // serializes session/configure calls: merge, provider build, commit
	files                sync.Mutex    // the files lock: held while a file is checked, stored and indexed
	index                FileIndex     // the files stored for this incarnation; guarded by files

	mu       sync.Mutex // guards the fields below
	closed   bool
	lastUsed time.Time          // when a prompt last entered or left the queue (or the session opened)
	queued   int                // Prompt calls inside the queue: waiting plus running
	storing  int                // files being stored (WithFiles)
	pins     int                // callers between looking the session up and done with it (Manager.use)
	bound    bool               // a FileTarget was handed out: files are (or will be) indexed for it
	turns    map[*turn]struct{} // running and waiting turns
	active   *turn
	pending  map[string]*pending
	// approvals is the manager's signal of pending changes (set by Manager.register; nil: none).
	approvals *Signal
	always    map[string]bool // tools allowed with allow_always for the rest of the session
	holder    uint64          // ACP: the connection that holds the session live (0: none); see Manager.HoldACP
	// overrides are the session's own model settings (session/configure), applied from the next turn on.
	overrides api.SessionOverrides
}

// turn is one prompt in the queue; cancel ends its context.
type turn struct {
	connID uint64
	cancel context.CancelFunc
}

// pending is an approval_request waiting for session/approve.
type pending struct {
	connID uint64
	tool   string
	risk   string      // the call's risk: a principal capped below it cannot allow it
	ch     chan answer // capacity 1; receives exactly one answer
	// What approvals/list shows of it: the arguments as shown to the person (escaped), who may allow it
	// (agent.ApproverOwner or ""), when it was asked and when it is denied unanswered.
	summary, approver string
	asked, expires    time.Time
	// args are the call's arguments as the model sent them (a JSON object), which a person may edit into a
	// reject_with_edit's replacement.
	args json.RawMessage
}

type answer struct {
	dec agent.ApprovalDecision
	err error
}

func newSession(id, key, alias, workspace, owner string, now time.Time) *session {
	return &session{
		id: id, key: key, alias: alias, workspace: workspace, owner: owner,
		lastUsed: now,
		done:     make(chan struct{}),
		turns:    make(map[*turn]struct{}),
		pending:  make(map[string]*pending),
		always:   make(map[string]bool),
	}
}

// check returns ErrNotOwned unless o is an admin or opened the session.
func (s *session) check(o Owner) error {
	if o.Admin {
		return nil
	}
	if o.Principal != s.owner {
		return fmt.Errorf("%w: %s", ErrNotOwned, s.id)
	}
	return o.mayUse(s.alias)
}

// enqueue admits t into the queue, or returns ErrQueueFull when QueueDepth prompts already wait behind a running
// one.
func (s *session) enqueue(t *turn, now time.Time) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return fmt.Errorf("%w: %s", ErrNotFound, s.id)
	}
	if s.queued >= 1+QueueDepth {
		return fmt.Errorf("%w: %s: %d prompts already queued", ErrQueueFull, s.id, QueueDepth)
	}
	s.queued++
	s.turns[t] = struct{}{}
	s.lastUsed = now
	return nil
}

// idleSince reports when the session was last used, whether it is idle now (nothing running, queued or
// waiting for an approval or storing a file, no caller using it and no ACP connection holding it, so dropping
// it from memory loses no work: its history is in the store) and whether it holds state that lives only in
// memory (session/configure overrides, allow_always answers, a file target and index), which dropping it would
// lose, so that only the idle TTL drops it, never the room a new session needs.
func (s *session) idleSince() (at time.Time, idle, sticky bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	sticky = s.overrides != (api.SessionOverrides{}) || len(s.always) > 0 || s.bound
	return s.lastUsed, s.idleLocked(), sticky
}

func (s *session) idleLocked() bool {
	return s.queued == 0 && len(s.pending) == 0 && s.storing == 0 && s.holder == 0 && s.pins == 0
}

// unpin ends one use (Manager.use) of the session.
func (s *session) unpin(now time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.pins--
	s.lastUsed = now
}

func (s *session) dequeue(t *turn, now time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.queued--
	s.lastUsed = now
	delete(s.turns, t)
	if s.active == t {
		s.active = nil
	}
}

// acquire waits for the session's turn lock, giving up when timer (of the given duration) fires; on success t
// is the active turn and release must follow.
func (s *session) acquire(ctx context.Context, t *turn, timer *clock.Timer, timeout time.Duration) error {
	defer timer.Stop()
	select {
	case s.lock.ch <- struct{}{}:
	case <-ctx.Done():
		return fmt.Errorf("session: %s: waiting for the turn: %w", s.id, context.Cause(ctx))
	case <-s.done:
		return fmt.Errorf("%w: %s", ErrNotFound, s.id)
	case <-timer.C:
		return fmt.Errorf("%w: %s: waited %s for the running turn", ErrQueueTimeout, s.id, timeout)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		<-s.lock.ch
		return fmt.Errorf("%w: %s", ErrNotFound, s.id)
	}
	s.active = t
	return nil
}

func (s *session) release() { <-s.lock.ch }

func (s *session) running() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.active != nil
}

// finishActive makes the running turn no longer the active one: called as it ends, before its turn_complete goes
// out, so a session/cancel sent by a client that saw turn_complete finds no active turn (-32000), never a late
// {cancelled: true}. The turn still holds the lock until it returns.
func (s *session) finishActive() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.active = nil
}

// cancelActive cancels the running turn and reports whether there was one.
func (s *session) cancelActive() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.active == nil {
		return false
	}
	s.active.cancel()
	return true
}

// disconnected cancels connID's turns and denies its pending approvals.
func (s *session) disconnected(connID uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for t := range s.turns {
		if t.connID == connID {
			t.cancel()
		}
	}
	for id, p := range s.pending {
		if p.connID == connID {
			delete(s.pending, id)
			s.approvals.Fire()
			p.ch <- answer{err: fmt.Errorf("session: approval %s: client disconnected: %w", id, agent.ErrApprovalAbandoned)}
		}
	}
}

// retireIfIdle closes the session only if it is idle at this instant (see idleSince), and reports whether it
// did. Checking and closing under one lock means a prompt either entered the queue first (the session is not
// idle and stays) or finds the session closed (ErrNotFound); it never runs on a session being dropped.
func (s *session) retireIfIdle() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed || !s.idleLocked() {
		return false
	}
	s.closeLocked()
	return true
}

// close ends the session's life: every turn is cancelled, every approval denied, queued prompts leave.
func (s *session) close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closeLocked()
}

func (s *session) closeLocked() {
	if s.closed {
		return
	}
	s.closed = true
	close(s.done)
	if e := s.editorMCP; e != nil {
		s.editorMCP = nil
		editorClosers.Add(1)
		go func() {
			defer editorClosers.Done()
			e.Close()
		}()
	}
	for t := range s.turns {
		t.cancel()
	}
	for id, p := range s.pending {
		delete(s.pending, id)
		s.approvals.Fire()
		p.ch <- answer{err: fmt.Errorf("session: approval %s: session closed: %w", id, agent.ErrApprovalAbandoned)}
	}
}

// decide delivers o's decision to pending request id and reports whether it was pending. A decision that lets
// the call run (allow, or reject_with_edit, which runs the edited call) from a principal whose approvals are
// capped below the call's risk is refused with a *CapError and leaves the request pending for the owner.
func (s *session) decide(o Owner, id string, dec agent.ApprovalDecision) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.pending[id]
	if p == nil {
		return false, nil
	}
	if dec.Decision != api.DecisionReject && dec.Decision != api.DecisionRejectOnce && !o.Admin && auth.RiskAbove(p.risk, o.MaxApproveRisk) {
		return false, &CapError{Tool: p.tool, Risk: p.risk, MaxRisk: o.MaxApproveRisk}
	}
	delete(s.pending, id)
	s.approvals.Fire()
	if dec.Decision == api.DecisionAllowAlways {
		s.always[p.tool] = true
	}
	p.ch <- answer{dec: dec}
	return true, nil
}

// forget removes request id and reports whether it was still pending (false: an answer is already in its
// channel).
func (s *session) forget(id string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.pending[id]; !ok {
		return false
	}
	delete(s.pending, id)
	s.approvals.Fire()
	return true
}

// approver is the agent.Approver of one turn: requests are tagged with the connection that started it.
type approver struct {
	s      *session
	connID uint64
	clock  clock.Clock
	// maxRisk caps what the principal whose turn asks may approve ("" : no cap, as for the owner).
	maxRisk string
}

// RequestApproval implements agent.Approver. A tool allowed with allow_always earlier in the session is
// allowed again without asking, unless the request is marked AskEveryTime.
func (a approver) RequestApproval(ctx context.Context, req agent.ApprovalRequest) (agent.ApprovalDecision, error) {
	s := a.s
	s.mu.Lock()
	if s.always[req.ToolName] && !req.AskEveryTime {
		s.mu.Unlock()
		return agent.ApprovalDecision{Decision: api.DecisionAllowAlways}, nil
	}
	if s.closed {
		s.mu.Unlock()
		return agent.ApprovalDecision{}, fmt.Errorf("session: approval %s: %w", req.RequestID, agent.ErrApprovalAbandoned)
	}
	ch := make(chan answer, 1)
	who := ""
	if auth.RiskAbove(req.Risk, a.maxRisk) {
		who = agent.ApproverOwner
	}
	now := a.clock.Now()
	s.pending[req.RequestID] = &pending{connID: a.connID, tool: req.ToolName, risk: req.Risk, ch: ch,
		summary: req.Summary, approver: who, asked: now, expires: now.Add(req.Timeout), args: argsObject(req.Arguments)}
	s.mu.Unlock()
	s.approvals.Fire()

	req.Announce(who)
	timer := a.clock.NewTimer(req.Timeout)
	defer timer.Stop()
	var err error
	select {
	case ans := <-ch:
		return ans.dec, ans.err
	case <-ctx.Done():
		err = fmt.Errorf("session: approval %s: %w", req.RequestID, ctx.Err())
	case <-timer.C:
		err = fmt.Errorf("session: approval %s: %w", req.RequestID, agent.ErrApprovalTimeout)
	}
	if !s.forget(req.RequestID) {
		ans := <-ch // answered while we gave up: the answer wins
		return ans.dec, ans.err
	}
	return agent.ApprovalDecision{}, err
}

// ErrApprovalCapped (-32012): a principal tried to approve a call riskier than its permission profile's
// max_risk allows; only the owner may.
var ErrApprovalCapped = errors.New("session: approval above the principal's max_risk")

// CapError is ErrApprovalCapped with the call's risk and the principal's cap.
type CapError struct{ Tool, Risk, MaxRisk string }

func (e *CapError) Error() string {
	return fmt.Sprintf("Forbidden: this %s call is %s risk and your permission profile lets you approve up to %s risk (max_risk); only the owner may approve it",
		e.Tool, e.Risk, e.MaxRisk)
}

// Is makes a *CapError match ErrApprovalCapped.
func (e *CapError) Is(target error) bool { return target == ErrApprovalCapped }

// WireData is the error's data member: {reason:"max_risk", tool, risk, max_risk}.
func (e *CapError) WireData() any {
	return map[string]any{"reason": "max_risk", "tool": e.Tool, "risk": e.Risk, "max_risk": e.MaxRisk}
}

func isObject(raw json.RawMessage) bool {
	t := bytes.TrimSpace(raw)
	return len(t) > 0 && t[0] == '{' && json.Valid(t)
}

// argsObject is raw when it is a JSON object, else nil (nothing to edit).
func argsObject(raw json.RawMessage) json.RawMessage {
	if !isObject(raw) {
		return nil
	}
	return raw
}

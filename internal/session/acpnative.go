package session

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/zeroclaw-go/zeroclaw/internal/agent"
	"github.com/zeroclaw-go/zeroclaw/internal/api"
	"github.com/zeroclaw-go/zeroclaw/internal/store"
)

// The durable ACP lifecycle on the native socket (protocol.md §6.3): session/new with chat_mode "acp", kill,
// delete, list-acp, and session/messages and session/state on ACP ids.
//
// An id names at most one live session. When an id is not live, it resolves to its ACP row if acp-sessions.db
// holds one, else to the chat session of sessions.db: a chat session and an ACP session may share an id, and
// the ACP lifecycle never touches the chat one.

// SurfaceRPC is the interaction_surface of ACP sessions created on the native socket without one.
const SurfaceRPC = "rpc"

// InterruptionMarker is the content of the visible message appended, once, to an ACP session whose last turn
// was still running when the daemon stopped. Its role is store.RoleInterruption: it is never sent to a model.
const InterruptionMarker = "[interrupted] The previous turn did not finish: the daemon stopped while it ran, and its answer was not saved."

// errACPUnavailable: acp-sessions.db could not be opened, so no durable ACP session can be served (-32603).
var errACPUnavailable = errors.New("session: the ACP session store (acp-sessions.db) is unavailable")

// promptRecoverable reports whether a session/prompt on the native socket may make a stored ACP row of this
// interaction_surface live again by itself: rows created there (or by upstream, which records none). Rows of
// other surfaces (an editor's, through the ACP server) are left untouched for a direct recovery.
func promptRecoverable(surface string) bool { return surface == "" || surface == SurfaceRPC }

// validSurface accepts an interaction_surface a client may name: 1..64 bytes of lowercase letters, digits, '-',
// '_' and '.'.
func validSurface(s string) error {
	if s == "" || len(s) > 64 {
		return fmt.Errorf("%w: interaction_surface must be 1 to 64 bytes", ErrInvalid)
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.') {
			return fmt.Errorf("%w: interaction_surface %q may only hold lowercase letters, digits, '-', '_' and '.'", ErrInvalid, s)
		}
	}
	return nil
}

// newACPNative is session/new with chat_mode "acp": a new durable session, or the resumption of a stored one
// named by session_id (its stored agent and workspace are reused; a different agent_alias is -32602, a killed
// row -32000). Native ACP sessions are not held by a connection: like chat sessions they outlive it.
func (m *Manager) newACPNative(ctx context.Context, o Owner, p api.SessionNewParams) (api.SessionNewResult, error) {
	surface := p.InteractionSurface
	if surface == "" {
		surface = SurfaceRPC
	} else if err := validSurface(surface); err != nil {
		return api.SessionNewResult{}, err
	}
	if m.o.ACP == nil {
		return api.SessionNewResult{}, errACPUnavailable
	}
	if p.SessionID != "" {
		if err := validID(p.SessionID); err != nil {
			return api.SessionNewResult{}, err
		}
		if s, err := m.live(p.SessionID); err == nil {
			return m.acpNewResult(ctx, o, s, p.AgentAlias)
		} else if errors.Is(err, ErrClosed) {
			return api.SessionNewResult{}, err
		}
		row, err := m.o.ACP.Session(ctx, p.SessionID)
		switch {
		case err == nil:
			if row.KilledAt != nil {
				return api.SessionNewResult{}, fmt.Errorf("%w: %s", ErrKilled, p.SessionID)
			}
			if p.AgentAlias != "" && p.AgentAlias != row.AgentAlias {
				return api.SessionNewResult{}, fmt.Errorf("%w: ACP session belongs to a different agent (%q, not %q)", ErrInvalid, row.AgentAlias, p.AgentAlias)
			}
			s, err := m.reviveACP(ctx, o, p.SessionID, 0)
			if err != nil {
				return api.SessionNewResult{}, err
			}
			return m.acpNewResult(ctx, o, s, p.AgentAlias)
		case !errors.Is(err, store.ErrNotFound):
			return api.SessionNewResult{}, fmt.Errorf("session: new acp: %w", err)
		}
	}
	id := p.SessionID
	if id == "" {
		id = m.o.NewID()
	}
	s, err := m.createACP(ctx, o, id, ACPNewParams{AgentAlias: p.AgentAlias, Cwd: p.Cwd, Surface: surface}, 0)
	if err != nil {
		return api.SessionNewResult{}, err
	}
	return m.acpNewResult(ctx, o, s, p.AgentAlias)
}

// acpNewResult answers session/new for live session s, which must be an ACP session of agent alias (when given)
// that o may use.
func (m *Manager) acpNewResult(ctx context.Context, o Owner, s *session, alias string) (api.SessionNewResult, error) {
	if s.acp == nil {
		return api.SessionNewResult{}, fmt.Errorf("%w: session %s is a chat session, not an ACP one (leave chat_mode out)", ErrInvalid, s.id)
	}
	if err := s.check(o); err != nil {
		return api.SessionNewResult{}, err
	}
	if alias != "" && alias != s.alias {
		return api.SessionNewResult{}, fmt.Errorf("%w: ACP session belongs to a different agent (%q, not %q)", ErrInvalid, s.alias, alias)
	}
	out := api.SessionNewResult{SessionID: s.id, AgentAlias: s.alias, WorkspaceDir: s.workspace}
	row, err := m.o.ACP.Session(ctx, s.id)
	if err != nil {
		return api.SessionNewResult{}, fmt.Errorf("session: new acp: %w", err)
	}
	out.MessageCount = row.MessageCount
	return out, nil
}

// reviveACP makes stored ACP session id live again for o, held by connection holder (0: none). Under the
// session's turn lock, so that no turn of an earlier incarnation is still running, it re-reads the row (a kill or
// delete may have won meanwhile) and closes a turn the previous process left unfinished with one visible
// interruption marker. If another call made the id live first, that session is returned.
func (m *Manager) reviveACP(ctx context.Context, o Owner, id string, holder uint64) (*session, error) {
	release, err := m.lockTurns(ctx, id)
	if err != nil {
		return nil, err
	}
	defer release()
	row, err := m.o.ACP.Session(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return nil, fmt.Errorf("%w: %s", ErrNotFound, id)
	}
	if err != nil {
		return nil, fmt.Errorf("session: open acp %s: %w", id, err)
	}
	if row.KilledAt != nil {
		return nil, fmt.Errorf("%w: %s", ErrKilled, id)
	}
	// acp-sessions.db records no owner (upstream's schema): a stored ACP session is the admins' to reopen.
	if !mayRevive(o, store.SessionMeta{}) {
		return nil, fmt.Errorf("%w: %s", ErrNotOwned, id)
	}
	alias, err := restoreAlias(m.o.Config(), row.AgentAlias)
	if err != nil {
		return nil, err
	}
	if s, err := m.live(id); err == nil {
		return s, nil
	}
	turnID, err := m.o.ACP.RecoverTurn(ctx, id, InterruptionMarker, m.now())
	if err != nil {
		return nil, fmt.Errorf("session: open acp %s: %w", id, err)
	}
	if turnID != "" {
		m.log.Info("acp: the last turn was interrupted by a daemon stop; marked in the transcript", "session", id, "turn", turnID)
	}
	s := newSession(id, id, alias, row.WorkspaceDir, o.Principal, m.now())
	s.acp = &acpState{surface: row.Surface}
	s.holder = holder
	registered, err := m.register(ctx, o, s, false)
	if err != nil {
		return nil, err
	}
	m.log.Debug("acp session restored", "session", id, "agent", alias)
	return registered, nil
}

// recoverForPrompt makes stored ACP session id live for a session/prompt that found it not live (evicted when
// idle, or after a restart), when its row is of a surface the native socket serves. Anything else stays
// ErrNotFound and the row is not touched.
func (m *Manager) recoverForPrompt(ctx context.Context, o Owner, id string) (*session, error) {
	notFound := fmt.Errorf("%w: %s", ErrNotFound, id)
	if m.o.ACP == nil || validID(id) != nil || id == "" {
		return nil, notFound
	}
	row, err := m.o.ACP.Session(ctx, id)
	if err != nil || row.KilledAt != nil || !promptRecoverable(row.Surface) {
		if err != nil && !errors.Is(err, store.ErrNotFound) {
			m.log.Warn("acp: prompt recovery: reading the stored session", "session", id, "err", err)
		}
		return nil, notFound
	}
	s, err := m.reviveACP(ctx, o, id, 0)
	if err != nil {
		return nil, err
	}
	if s.acp == nil {
		return nil, notFound
	}
	return s, s.check(o)
}

// cancelTurns cancels every turn of s, running or queued, and denies its pending approvals, leaving s live.
func (s *session) cancelTurns() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for t := range s.turns {
		t.cancel()
	}
	for id, p := range s.pending {
		delete(s.pending, id)
		s.approvals.Fire()
		p.ch <- answer{err: fmt.Errorf("session: approval %s: session killed or deleted: %w", id, agent.ErrApprovalAbandoned)}
	}
}

// acpTarget resolves id for the ACP lifecycle: the live session (nil when not live) and whether id names an ACP
// session, live or stored. A store failure is returned as is.
func (m *Manager) acpTarget(ctx context.Context, id string) (*session, bool, error) {
	if s, err := m.live(id); err == nil {
		return s, s.acp != nil, nil
	} else if errors.Is(err, ErrClosed) {
		return nil, false, err
	}
	if m.o.ACP == nil || id == "" || validID(id) != nil {
		return nil, false, nil
	}
	if _, err := m.o.ACP.Session(ctx, id); err != nil {
		if errors.Is(err, store.ErrNotFound) {
			return nil, false, nil
		}
		return nil, false, fmt.Errorf("session: %w", err)
	}
	return nil, true, nil
}

// acpAccess checks that o may act on ACP session id (live s, or stored when s is nil).
func acpAccess(o Owner, s *session, id string) error {
	if s != nil {
		return s.check(o)
	}
	if !mayRevive(o, store.SessionMeta{}) {
		return fmt.Errorf("%w: %s", ErrNotOwned, id)
	}
	return nil
}

// Kill ends session id for good (protocol.md §6.3 session/kill). An ACP session, live or stored, is tombstoned:
// its history stays but it is never made live again (first killed_at kept). A live chat session is closed.
// The running turn is cancelled before the tombstone is written; if that write fails the caller gets the error
// and the live session stays registered.
func (m *Manager) Kill(ctx context.Context, o Owner, id string) (api.SessionKillResult, error) {
	if id == "" {
		return api.SessionKillResult{}, fmt.Errorf("%w: session_id is required", ErrInvalid)
	}
	s, isACP, err := m.acpTarget(ctx, id)
	if err != nil {
		return api.SessionKillResult{}, err
	}
	if s == nil && !isACP {
		return api.SessionKillResult{}, fmt.Errorf("%w: %s", ErrNotFound, id)
	}
	if err := acpAccess(o, s, id); err != nil {
		return api.SessionKillResult{}, err
	}
	if s != nil {
		s.cancelTurns() // signalled before the fallible write
	}
	if isACP && m.o.ACP != nil {
		if s == nil {
			// A revival of the stored row waits on the turn lock and then sees the tombstone.
			release, err := m.lockTurns(ctx, id)
			if err != nil {
				return api.SessionKillResult{}, err
			}
			defer release()
		}
		if _, err := m.o.ACP.Kill(ctx, id, m.now()); err != nil {
			return api.SessionKillResult{}, fmt.Errorf("session: kill %s: %w", id, err)
		}
	}
	if s != nil {
		m.drop(s)
	}
	m.log.Info("session killed", "session", id, "acp", isACP)
	return api.SessionKillResult{SessionID: id, Killed: true}, nil
}

// deleteACP is session/delete for an id that names an ACP session (handled reports whether it does): it cancels
// the live session's turns, deletes the row with its messages, events and checkpoints, then unregisters the live
// session. If the delete fails the live session stays registered. A chat session with the same id is untouched.
func (m *Manager) deleteACP(ctx context.Context, o Owner, id string) (res api.SessionDeleteResult, handled bool, err error) {
	s, isACP, err := m.acpTarget(ctx, id)
	if err != nil {
		return api.SessionDeleteResult{}, true, err
	}
	if s != nil && !isACP {
		// The live session is a chat one: an ACP row stored under the same id is deleted without touching it.
		if m.o.ACP == nil || id == "" || validID(id) != nil {
			return api.SessionDeleteResult{}, false, nil
		}
		if _, err := m.o.ACP.Session(ctx, id); errors.Is(err, store.ErrNotFound) {
			return api.SessionDeleteResult{}, false, nil
		} else if err != nil {
			return api.SessionDeleteResult{}, true, fmt.Errorf("session: %w", err)
		}
		s = nil
	} else if !isACP {
		return api.SessionDeleteResult{}, false, nil
	}
	if err := acpAccess(o, s, id); err != nil {
		return api.SessionDeleteResult{}, true, err
	}
	if s != nil {
		s.cancelTurns() // signalled before the fallible delete
	}
	if m.o.ACP != nil {
		if s == nil {
			release, err := m.lockTurns(ctx, id)
			if err != nil {
				return api.SessionDeleteResult{}, true, err
			}
			defer release()
		}
		if _, err := m.o.ACP.Delete(ctx, id); err != nil {
			return api.SessionDeleteResult{}, true, fmt.Errorf("session: delete %s: %w", id, err)
		}
	}
	if s != nil {
		m.drop(s)
	}
	return api.SessionDeleteResult{SessionID: id, Deleted: true}, true, nil
}

// ListACP returns the durable ACP sessions that are not killed, most recent first (session/list-acp), in
// session/list's shape. acp-sessions.db records no owner: a non-admin sees only the live ones it owns.
func (m *Manager) ListACP(ctx context.Context, o Owner, limit int) (api.SessionListResult, error) {
	out := api.SessionListResult{Sessions: []api.SessionSummary{}}
	if m.o.ACP == nil {
		return api.SessionListResult{}, errACPUnavailable
	}
	rows, err := m.o.ACP.List(ctx, limit)
	if err != nil {
		return api.SessionListResult{}, fmt.Errorf("session: list acp: %w", err)
	}
	for _, r := range rows {
		state := stateIdle
		s, err := m.live(r.UUID)
		if err == nil && s.acp != nil {
			if s.running() {
				state = stateRunning
			}
		} else {
			s = nil
		}
		if !o.Admin && (s == nil || s.check(o) != nil) {
			continue
		}
		out.Sessions = append(out.Sessions, api.SessionSummary{
			SessionID:    r.UUID,
			SessionKey:   r.UUID,
			CreatedAt:    r.CreatedAt.UTC().Format(time.RFC3339),
			LastActivity: r.LastActivity.UTC().Format(time.RFC3339),
			MessageCount: r.MessageCount,
			AgentAlias:   r.AgentAlias,
			State:        state,
		})
	}
	return out, nil
}

// acpStateOf is session/state for ACP session id (live s, or stored when s is nil): running while a turn runs,
// else idle; a turn still noted in the checkpoint while none runs is reported as interrupted.
func (m *Manager) acpStateOf(ctx context.Context, s *session, id string) (api.SessionStateResult, error) {
	out := api.SessionStateResult{SessionID: id, State: stateIdle}
	if m.o.ACP == nil {
		if s != nil && s.running() {
			out.State = stateRunning
		}
		return out, nil
	}
	cp, ok, err := m.o.ACP.Checkpoint(ctx, id)
	if err != nil {
		return api.SessionStateResult{}, fmt.Errorf("session: state: %w", err)
	}
	switch {
	case s != nil && s.running():
		out.State = stateRunning
		if ok && cp.TurnID != "" {
			out.TurnID = cp.TurnID
			if cp.TurnStartedAt != nil {
				out.TurnStartedAt = cp.TurnStartedAt.UTC().Format(time.RFC3339Nano)
			}
		}
	case ok && cp.TurnID != "":
		out.LastTurnInterrupted, out.InterruptedTurnID = true, cp.TurnID
	}
	return out, nil
}

// pager reads a session's visible transcript by index (session/messages): the chat store, or acpPages.
type pager interface {
	Page(ctx context.Context, key string, limit, beforeIndex, maxBytes int) (msgs []store.Message, total, start int, err error)
	Message(ctx context.Context, key string, index int) (msg store.Message, total int, err error)
}

// messagesSource checks that o may read session id and returns where its transcript is: the ACP transcript for
// an ACP id, the chat store otherwise. ErrNotFound means neither store knows the id.
func (m *Manager) messagesSource(ctx context.Context, o Owner, id string) (pager, string, error) {
	s, isACP, err := m.acpTarget(ctx, id)
	if err != nil {
		return nil, "", err
	}
	if !isACP {
		key, err := m.access(ctx, o, id)
		if err != nil {
			return nil, "", err
		}
		return m.o.Chat, key, nil
	}
	if err := acpAccess(o, s, id); err != nil {
		return nil, "", err
	}
	var msgs []store.ACPMessage
	if m.o.ACP == nil {
		msgs = s.acp.mem.Messages()
	} else if msgs, err = m.o.ACP.Messages(ctx, id); err != nil {
		return nil, "", fmt.Errorf("session: messages: %w", err)
	}
	pages := make(acpPages, len(msgs))
	for i, msg := range msgs {
		pages[i] = store.Message{Index: i, Role: msg.Role, Content: msg.Content, CreatedAt: msg.CreatedAt}
	}
	return pages, id, nil
}

// acpPages is an ACP transcript read whole, paged like the chat store pages sessions.db: the index of a message
// is its position among the session's acp_messages rows, which compaction never changes.
type acpPages []store.Message

func (p acpPages) Page(_ context.Context, _ string, limit, beforeIndex, maxBytes int) ([]store.Message, int, int, error) {
	total := len(p)
	end := total
	if beforeIndex >= 0 && beforeIndex < total {
		end = beforeIndex
	}
	n := end
	if limit > 0 && limit < n {
		n = limit
	}
	start, size := end, 0
	for i := end - 1; i >= end-n; i-- {
		if maxBytes > 0 && start < end && size+len(p[i].Content) > maxBytes {
			break
		}
		size += len(p[i].Content)
		start = i
	}
	return slices.Clone(p[start:end]), total, start, nil
}

func (p acpPages) Message(_ context.Context, key string, index int) (store.Message, int, error) {
	if index < 0 || index >= len(p) {
		return store.Message{}, len(p), fmt.Errorf("store: message %s %d: %w", key, index, store.ErrNotFound)
	}
	return p[index], len(p), nil
}

// chatMode validates session/new's chat_mode and reports whether it asks for an ACP session.
func chatMode(mode string) (acp bool, err error) {
	switch strings.TrimSpace(mode) {
	case "", api.ChatModeChat:
		return false, nil
	case api.ChatModeACP:
		return true, nil
	}
	return false, fmt.Errorf("%w: chat_mode must be %q or %q, got %q", ErrInvalid, api.ChatModeChat, api.ChatModeACP, mode)
}

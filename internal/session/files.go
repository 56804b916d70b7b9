package session

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/zeroclaw-go/zeroclaw/internal/api"
	"github.com/zeroclaw-go/zeroclaw/internal/config"
)

// ErrAgentDenied (-32012): the session's agent is gone from the config or disabled, so nothing may be stored
// for it.
var ErrAgentDenied = errors.New("session: agent not available")

// MaxIndexedFiles bounds a session's file index: past it the oldest entries are forgotten (a re-send of one is
// then stored again, not deduplicated), so a peer cannot grow the index without bound.
const MaxIndexedFiles = 1024

// FileTarget names the exact session incarnation a file is stored for: a session closed, evicted or recreated
// under the same id has another Generation, so a file bound to the old one is never written into the new one.
type FileTarget struct {
	SessionID  string
	Owner      string
	Agent      string
	Generation uint64
}

// FileIndex is the files stored for one session incarnation, by ref id, oldest first. It is used only under the
// session's files lock (Manager.WithFiles).
type FileIndex struct {
	byRef map[string]api.FileAttachment
	order []string
}

// Lookup returns the entry stored under ref.
func (x *FileIndex) Lookup(ref string) (api.FileAttachment, bool) {
	a, ok := x.byRef[ref]
	return a, ok
}

// Add records a (by a.RefID), forgetting the oldest entry when the index is full.
func (x *FileIndex) Add(a api.FileAttachment) {
	if x.byRef == nil {
		x.byRef = map[string]api.FileAttachment{}
	}
	if _, ok := x.byRef[a.RefID]; !ok {
		if len(x.order) >= MaxIndexedFiles {
			delete(x.byRef, x.order[0])
			x.order = x.order[1:]
		}
		x.order = append(x.order, a.RefID)
	}
	x.byRef[a.RefID] = a
}

// FileTarget returns the live session id's target, after checking that o may act on it and that its agent is
// available in the config in force.
func (m *Manager) FileTarget(o Owner, id string) (FileTarget, error) {
	s, done, err := m.use(context.Background(), o, id) // a session not live comes back (a local store read)
	if err != nil {
		return FileTarget{}, err
	}
	defer done()
	if err := agentAvailable(m.o.Config(), s.alias); err != nil {
		return FileTarget{}, err
	}
	s.mu.Lock()
	s.bound = true // files will be stored for this incarnation: room for new sessions is not made with it
	s.mu.Unlock()
	return FileTarget{SessionID: s.id, Owner: s.owner, Agent: s.alias, Generation: s.gen}, nil
}

// WithFiles runs store under session t's files lock, with the session's workspace and file index, after
// checking, in this order, that t is still the live incarnation (else ErrNotFound), that o may act on it (else
// ErrNotOwned) and that cfg, the config the caller holds in force, still has its agent enabled (else
// ErrAgentDenied). Closing the session waits for a store in progress, so a file is either stored before the
// session closes or refused after. store must not call back into the Manager.
func (m *Manager) WithFiles(cfg *config.Config, o Owner, t FileTarget, store func(workspace string, idx *FileIndex) error) error {
	s, err := m.live(t.SessionID)
	if err != nil {
		return err
	}
	s.files.Lock()
	defer s.files.Unlock()
	if !m.isLive(s) || s.gen != t.Generation || s.owner != t.Owner || s.alias != t.Agent {
		return fmt.Errorf("%w: %s (closed or recreated since the file was bound to it)", ErrNotFound, t.SessionID)
	}
	if err := s.check(o); err != nil {
		return err
	}
	if err := agentAvailable(cfg, s.alias); err != nil {
		return err
	}
	if !s.beginStore(m.now()) {
		return fmt.Errorf("%w: %s", ErrNotFound, t.SessionID)
	}
	defer s.endStore()
	return store(s.workspace, &s.index)
}

// isLive reports whether s is the session registered under its id and the manager runs.
func (m *Manager) isLive(s *session) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return !m.closed && m.sessions[s.id] == s
}

// agentAvailable checks that alias names an enabled agent of cfg.
func agentAvailable(cfg *config.Config, alias string) error {
	if cfg == nil {
		return nil
	}
	if a, ok := cfg.Agents[alias]; !ok || !a.IsEnabled() {
		return fmt.Errorf("%w: agent %q is disabled or no longer configured", ErrAgentDenied, alias)
	}
	return nil
}

// beginStore marks a store in progress, so the session is not dropped as idle under it; false if it closed.
// Storing a file is a use of the session.
func (s *session) beginStore(now time.Time) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return false
	}
	s.storing++
	s.lastUsed = now
	return true
}

func (s *session) endStore() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.storing--
}

// waitStores returns once no store of s is in progress (one that began before s closed finishes first).
func (s *session) waitStores() {
	s.files.Lock()
	s.files.Unlock() // an empty critical section: waiting is the point
}

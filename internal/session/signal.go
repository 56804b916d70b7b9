package session

import "sync"

// Signal broadcasts that something changed: the channel Wait returns is closed at the next Fire. It holds
// no events, so a slow watcher costs nothing: it looks again at what changed.
type Signal struct {
	mu sync.Mutex
	ch chan struct{}
}

// Wait is a channel closed at the next Fire.
func (g *Signal) Wait() <-chan struct{} {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.ch == nil {
		g.ch = make(chan struct{})
	}
	return g.ch
}

// Fire wakes every waiter.
func (g *Signal) Fire() {
	if g == nil {
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.ch != nil {
		close(g.ch)
		g.ch = nil
	}
}

// ApprovalsChanged is a channel closed when the next tool-call approval of any live session is asked,
// answered, expires or is dropped (PendingApprovals changed): GET /api/approvals/events waits on it.
func (m *Manager) ApprovalsChanged() <-chan struct{} { return m.approvals.Wait() }

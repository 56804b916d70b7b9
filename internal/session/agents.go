package session

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// LiveByAgent counts the live sessions of each agent alias.
func (m *Manager) LiveByAgent() map[string]int {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := map[string]int{}
	for _, s := range m.sessions {
		out[s.alias]++
	}
	return out
}

// StoredByAgent counts the stored sessions attributed to each agent alias.
func (m *Manager) StoredByAgent(ctx context.Context) (map[string]int, error) {
	n, err := m.o.Chat.CountByAgent(ctx)
	if err != nil {
		return nil, fmt.Errorf("session: %w", err)
	}
	return n, nil
}

// HoldAgent keeps sessions from being opened (or revived) on agent alias until release is called, so that the
// agent can be renamed without a session holding on to the old alias. It refuses (ErrInvalid) while the agent
// has live sessions: they would keep running, and storing, under the old alias.
func (m *Manager) HoldAgent(alias string) (release func(), err error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return nil, ErrClosed
	}
	n := 0
	for _, s := range m.sessions {
		if s.alias == alias {
			n++
		}
	}
	if n > 0 {
		return nil, fmt.Errorf("%w: agents.%s: cannot rename an agent with %d live session(s); close them first", ErrInvalid, alias, n)
	}
	if m.held == nil {
		m.held = map[string]int{}
	}
	m.held[alias]++
	return func() {
		m.mu.Lock()
		defer m.mu.Unlock()
		if m.held[alias]--; m.held[alias] <= 0 {
			delete(m.held, alias)
		}
	}, nil
}

// AgentRenamed moves what belongs to agent from over to its new alias to, once the config rename is committed:
// the stored sessions' attribution and, when the agent uses the default workspace location, its directory
// <install>/agents/<from>. Failures do not undo the rename; each becomes a warning for the caller.
func (m *Manager) AgentRenamed(ctx context.Context, from, to string) []string {
	var warnings []string
	if _, err := m.o.Chat.RenameAgent(ctx, from, to); err != nil {
		warnings = append(warnings, fmt.Sprintf("session attribution: %v", err))
	}
	if a, ok := m.o.Config().Agents[to]; ok && a.Workspace.Path == "" {
		oldDir := filepath.Join(m.o.InstallRoot, "agents", from)
		newDir := filepath.Join(m.o.InstallRoot, "agents", to)
		switch _, err := os.Lstat(newDir); {
		case err == nil:
			warnings = append(warnings, fmt.Sprintf("workspace: %s already exists; %s was left in place", newDir, oldDir))
		case !errors.Is(err, fs.ErrNotExist):
			warnings = append(warnings, fmt.Sprintf("workspace: %v", err))
		default:
			if err := os.Rename(oldDir, newDir); err != nil && !errors.Is(err, fs.ErrNotExist) {
				warnings = append(warnings, fmt.Sprintf("workspace: %v", err))
			}
		}
	}
	return warnings
}

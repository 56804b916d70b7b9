package session

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/zeroclaw-go/zeroclaw/internal/agent"
	"github.com/zeroclaw-go/zeroclaw/internal/config"
	"github.com/zeroclaw-go/zeroclaw/internal/store"
)

// ErrKilled (-32000): the ACP session was killed; its history stays but it is never made live again.
var ErrKilled = errors.New("session: killed")

// SurfaceACP is the interaction_surface of sessions opened by the ACP server.
const SurfaceACP = "acp"

// ACPNewParams open a new durable ACP session.
type ACPNewParams struct {
	// AgentAlias names the agent; "" falls back to [acp].default_agent, then to the only enabled agent.
	AgentAlias string
	// Cwd is the session's workspace: canonicalized, relative to the agent's workspace when relative (where it
	// must stay), "" for the agent's workspace.
	Cwd     string
	Surface string // interaction_surface stored with the row
	// EditorServers are the MCP servers the editor named (ACP session/new mcpServers): started for this
	// session only, stopped when it closes. Only an admin may name them (they run commands on this machine).
	EditorServers []config.MCPServerConfig
}

// ACPSession describes a live ACP session.
type ACPSession struct {
	SessionID    string
	AgentAlias   string
	WorkspaceDir string
	// History is the stored transcript, filled by OpenACP when asked for (session/load replays it).
	History []store.ACPMessage
}

// ACPDurable reports whether ACP sessions are stored (an ACP store is open): they can then be loaded after the
// connection, or the daemon, that created them is gone.
func (m *Manager) ACPDurable() bool { return m.o.ACP != nil }

// NewACP creates an ACP session held live by o's connection until it closes the session or disconnects
// (ReleaseACP); its row is stored before the session is returned.
func (m *Manager) NewACP(ctx context.Context, o Owner, p ACPNewParams) (ACPSession, error) {
	s, err := m.createACP(ctx, o, m.o.NewID(), p, o.ConnID)
	if err != nil {
		return ACPSession{}, err
	}
	return ACPSession{SessionID: s.id, AgentAlias: s.alias, WorkspaceDir: s.workspace}, nil
}

// createACP registers a new ACP session id held by connection holder (0: none) and stores its row. An id that is
// live already is returned as that session when it is an ACP one (a concurrent session/new naming the same id).
func (m *Manager) createACP(ctx context.Context, o Owner, id string, p ACPNewParams, holder uint64) (*session, error) {
	cfg := m.o.Config()
	alias := strings.TrimSpace(p.AgentAlias)
	if alias == "" {
		alias = cfg.ACP.DefaultAgent
	}
	if alias == "" {
		var err error
		if alias, err = agent.DefaultAgent(cfg); err != nil {
			return nil, fmt.Errorf("%w: %w", ErrInvalid, err)
		}
	}
	if err := o.mayUse(alias); err != nil {
		return nil, err
	}
	prof, err := agent.Resolve(cfg, alias, m.o.InstallRoot)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	if err := os.MkdirAll(prof.Workspace, 0o700); err != nil {
		return nil, fmt.Errorf("session: new acp: workspace: %w", err)
	}
	m.seedWorkspace(cfg, alias, prof.Workspace)
	ws, err := resolveCwd(o, p.Cwd, prof.Workspace, m.o.InstallRoot, cfg.ACP.AllowedRoots)
	if err != nil {
		return nil, err
	}
	if len(p.EditorServers) > 0 && !o.Admin {
		return nil, fmt.Errorf("%w: mcpServers: only the owner may start MCP servers (they run commands on the daemon's machine)", ErrInvalid)
	}
	s := newSession(id, id, alias, ws, o.Principal, m.now())
	s.acp = &acpState{surface: p.Surface}
	s.holder = holder
	registered, err := m.register(ctx, o, s, false)
	if err != nil {
		return nil, err
	}
	if registered != s {
		if registered.acp == nil {
			return nil, fmt.Errorf("%w: session %s is a chat session, not an ACP one", ErrInvalid, id)
		}
		return registered, nil
	}
	if len(p.EditorServers) > 0 && m.o.EditorMCP != nil {
		s.setEditorMCP(m.o.EditorMCP(p.EditorServers))
	}
	if m.o.ACP != nil {
		row := store.ACPSession{UUID: id, AgentAlias: alias, WorkspaceDir: ws, Surface: p.Surface}
		if err := m.o.ACP.Create(ctx, row, m.now()); err != nil {
			m.drop(s)
			return nil, fmt.Errorf("session: new acp: %w", err)
		}
	}
	m.log.Debug("acp session open", "session", id, "agent", alias)
	m.logSession(s, "create", "acp session created")
	return s, nil
}

// OpenACP makes stored ACP session id live again for o's connection (session/load and session/resume), or takes
// it over if it is live already (another connection held it: an editor that restarted). The stored cwd and agent
// are reused; the model context is rebuilt from the stored history at the next turn. withHistory fills History.
// Unknown: ErrNotFound; killed: ErrKilled.
func (m *Manager) OpenACP(ctx context.Context, o Owner, id string, withHistory bool) (ACPSession, error) {
	if err := validID(id); err != nil || id == "" {
		return ACPSession{}, fmt.Errorf("%w: a sessionId is required (printable ASCII without spaces, at most 128 bytes)", ErrInvalid)
	}
	if s, err := m.live(id); err == nil {
		if s.acp == nil {
			return ACPSession{}, fmt.Errorf("%w: %s is not an ACP session", ErrNotFound, id)
		}
		if err := s.check(o); err != nil {
			return ACPSession{}, err
		}
		s.hold(o.ConnID)
		return m.acpResult(ctx, s, withHistory)
	} else if errors.Is(err, ErrClosed) {
		return ACPSession{}, err
	}
	if m.o.ACP == nil {
		return ACPSession{}, fmt.Errorf("%w: %s (ACP sessions are not stored: the ACP store is unavailable)", ErrNotFound, id)
	}
	registered, err := m.reviveACP(ctx, o, id, o.ConnID)
	if err != nil {
		return ACPSession{}, err
	}
	if registered.acp == nil { // a chat session was opened under this id meanwhile
		return ACPSession{}, fmt.Errorf("%w: %s is not an ACP session", ErrNotFound, id)
	}
	if err := registered.check(o); err != nil {
		return ACPSession{}, err
	}
	registered.hold(o.ConnID)
	return m.acpResult(ctx, registered, withHistory)
}

func (m *Manager) acpResult(ctx context.Context, s *session, withHistory bool) (ACPSession, error) {
	out := ACPSession{SessionID: s.id, AgentAlias: s.alias, WorkspaceDir: s.workspace}
	if !withHistory {
		return out, nil
	}
	if m.o.ACP == nil {
		out.History = s.acp.mem.Messages()
		return out, nil
	}
	h, err := m.o.ACP.Messages(ctx, s.id)
	if err != nil {
		return ACPSession{}, fmt.Errorf("session: open acp %s: %w", s.id, err)
	}
	out.History = h
	return out, nil
}

// ReleaseACP closes every ACP session connection connID holds (at its disconnect): their turns are cancelled and
// their approvals denied, their stored rows stay loadable. A session another connection took over is left alone.
func (m *Manager) ReleaseACP(connID uint64) {
	for _, s := range m.snapshot() {
		if s.acp != nil && s.heldBy(connID) {
			m.drop(s)
		}
	}
}

// hold makes connID the connection holding s live.
func (s *session) hold(connID uint64) {
	s.mu.Lock()
	s.holder = connID
	s.mu.Unlock()
}

func (s *session) heldBy(connID uint64) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.holder == connID
}

// restoreAlias is the agent a stored session runs with: its own while it is still enabled, else [acp].default_agent,
// else the only enabled agent (upstream's restore order).
func restoreAlias(cfg *config.Config, stored string) (string, error) {
	if a, ok := cfg.Agents[stored]; ok && a.IsEnabled() {
		return stored, nil
	}
	if d := cfg.ACP.DefaultAgent; d != "" {
		if a, ok := cfg.Agents[d]; ok && a.IsEnabled() {
			return d, nil
		}
	}
	alias, err := agent.DefaultAgent(cfg)
	if err != nil {
		return "", fmt.Errorf("%w: the session's agent %q is gone or disabled and no other can take it: %w", ErrInvalid, stored, err)
	}
	return alias, nil
}

// resolveCwd turns o's cwd into the session's workspace: "" (or the install root itself, which clients send as a
// placeholder) is the agent's workspace; a relative cwd is taken inside the agent's workspace and may not leave
// it; an absolute one is canonicalized (symlinks resolved) and must be an existing directory. A directory outside
// the agent's workspace is the owner's alone to choose (o.Admin), and then only below one of roots ([acp]
// allowed_roots) and never inside the install root: anything else is ErrInvalid saying why.
func resolveCwd(o Owner, cwd, agentWorkspace, installRoot string, roots []string) (string, error) {
	if strings.TrimSpace(cwd) == "" {
		return agentWorkspace, nil
	}
	if strings.ContainsRune(cwd, 0) {
		return "", fmt.Errorf("%w: cwd contains a NUL byte", ErrInvalid)
	}
	base, err := filepath.EvalSymlinks(agentWorkspace)
	if err != nil {
		return "", fmt.Errorf("session: agent workspace: %w", err)
	}
	p := cwd
	if !filepath.IsAbs(p) {
		p = filepath.Join(base, p)
	}
	canon, err := filepath.EvalSymlinks(p)
	if err != nil {
		return "", fmt.Errorf("%w: cwd %q is not a usable directory: %w", ErrInvalid, cwd, err)
	}
	fi, err := os.Stat(canon)
	if err != nil || !fi.IsDir() {
		return "", fmt.Errorf("%w: cwd %q is not a directory", ErrInvalid, cwd)
	}
	if below(base, canon) {
		return canon, nil
	}
	if !filepath.IsAbs(cwd) {
		return "", fmt.Errorf("%w: cwd %q leaves the agent's workspace", ErrInvalid, cwd)
	}
	root, rootErr := filepath.EvalSymlinks(installRoot)
	if rootErr == nil && root == canon {
		return agentWorkspace, nil
	}
	if !o.Admin {
		return "", fmt.Errorf("%w: cwd %q is outside the agent's workspace (%s): only the owner may open a session in another directory (and only below [acp] allowed_roots); leave cwd out to work in the agent's workspace",
			ErrInvalid, cwd, agentWorkspace)
	}
	if rootErr == nil && below(root, canon) {
		return "", fmt.Errorf("%w: cwd %q is inside the daemon's install root %s (config, secrets and data), where no session may work", ErrInvalid, cwd, installRoot)
	}
	for _, r := range roots {
		if rc, err := canonicalRoot(r); err == nil && below(rc, canon) {
			return canon, nil
		}
	}
	if len(roots) == 0 {
		return "", fmt.Errorf("%w: cwd %q is outside the agent's workspace (%s) and [acp] allowed_roots is empty: list a directory that contains it (zeroclaw config set acp.allowed_roots '[\"/path\"]') or leave cwd out",
			ErrInvalid, cwd, agentWorkspace)
	}
	return "", fmt.Errorf("%w: cwd %q is outside the agent's workspace (%s) and below none of [acp] allowed_roots (%s)",
		ErrInvalid, cwd, agentWorkspace, strings.Join(roots, ", "))
}

// below reports whether the clean absolute path p is base or lies below it.
func below(base, p string) bool {
	rel, err := filepath.Rel(base, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}

// canonicalRoot canonicalizes an [acp] allowed_roots entry (~ is the home directory).
func canonicalRoot(r string) (string, error) {
	r = strings.TrimSpace(r)
	if r == "~" || strings.HasPrefix(r, "~/") {
		home, err := os.UserHomeDir()
		if err != nil {
			return "", err
		}
		r = filepath.Join(home, r[1:])
	}
	if !filepath.IsAbs(r) {
		return "", fmt.Errorf("session: allowed root %q is not absolute", r)
	}
	return filepath.EvalSymlinks(r)
}

// ACPWorkspace returns the workspace of live ACP session id after checking that o may act on it; a chat session,
// or a session not live, is ErrNotFound.
func (m *Manager) ACPWorkspace(o Owner, id string) (string, error) {
	s, err := m.owned(o, id)
	if err != nil {
		return "", err
	}
	if s.acp == nil {
		return "", fmt.Errorf("%w: %s is not an ACP session", ErrNotFound, id)
	}
	return s.workspace, nil
}

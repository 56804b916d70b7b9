package session

import (
	"context"
	"fmt"

	"github.com/zeroclaw-go/zeroclaw/internal/agent"
	"github.com/zeroclaw-go/zeroclaw/internal/api"
	"github.com/zeroclaw-go/zeroclaw/internal/workspace"
)

// Errors of ListDir (the workspace package's); the rpc layer maps them to upstream's filesystem codes.
var (
	ErrFsNotFound    = workspace.ErrFsNotFound
	ErrFsDenied      = workspace.ErrFsDenied
	ErrFsInvalidPath = workspace.ErrFsInvalidPath
)

// ListDir lists a directory of a workspace (upstream's fs/list_dir, confined; see workspace.ListDir): the
// workspace of the live session p.SessionID (which o must own), or, for an admin without a session, of agent
// p.Agent (default: the only enabled agent).
func (m *Manager) ListDir(ctx context.Context, o Owner, p api.FsListDirParams) (api.FsListDirResult, error) {
	ws, err := m.workspaceOf(ctx, o, p.SessionID, p.Agent)
	if err != nil {
		return api.FsListDirResult{}, err
	}
	return workspace.ListDir(ws, p.Path, p.ShowHidden)
}

// workspaceOf picks the workspace fs/list_dir lists.
func (m *Manager) workspaceOf(ctx context.Context, o Owner, sessionID, alias string) (string, error) {
	if sessionID != "" {
		s, done, err := m.use(ctx, o, sessionID)
		if err != nil {
			return "", err
		}
		done()
		return s.workspace, nil
	}
	if !o.Admin {
		return "", fmt.Errorf("%w: session_id is required (only an admin lists an agent's workspace without a session)", ErrInvalid)
	}
	cfg := m.o.Config()
	if alias == "" {
		var err error
		if alias, err = agent.DefaultAgent(cfg); err != nil {
			return "", fmt.Errorf("%w: %w", ErrInvalid, err)
		}
	}
	prof, err := agent.Resolve(cfg, alias, m.o.InstallRoot)
	if err != nil {
		return "", fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	return prof.Workspace, nil
}

// GitBranch reports the git branch and short HEAD hash of the live session's workspace (upstream's
// session/git_branch, see workspace.GitHead). Outside a repository both are empty.
func (m *Manager) GitBranch(ctx context.Context, o Owner, id string) (api.SessionGitBranchResult, error) {
	s, done, err := m.use(ctx, o, id)
	if err != nil {
		return api.SessionGitBranchResult{}, err
	}
	done() // only its workspace is read
	branch, hash := workspace.GitHead(s.workspace)
	return api.SessionGitBranchResult{SessionID: id, Branch: branch, Hash: hash}, nil
}

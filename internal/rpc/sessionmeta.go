package rpc

import (
	"bytes"
	"context"
	"errors"

	"github.com/zeroclaw-go/zeroclaw/internal/api"
	"github.com/zeroclaw-go/zeroclaw/internal/jsonrpc"
	"github.com/zeroclaw-go/zeroclaw/internal/router"
	"github.com/zeroclaw-go/zeroclaw/internal/session"
)

// registerSessionMeta adds session/configure (sessions:execute: it changes how the session's next turns run),
// session/git_branch (sessions:read) and fs/list_dir (files:read), all limited to the caller's own sessions.
func (s *Server) registerSessionMeta(m *session.Manager) {
	if m == nil {
		return
	}
	s.register(api.MethodSessionConfigure, handle(api.GrantSessionsExecute, func(ctx context.Context, p *Peer, params *api.SessionConfigureParams) (api.SessionConfigureResult, error) {
		if params.SessionID == "" {
			return api.SessionConfigureResult{}, router.InvalidParams("session/configure needs session_id")
		}
		var ov api.SessionOverrides
		if raw := bytes.TrimSpace(params.Overrides); len(raw) > 0 && raw[0] != '{' {
			return api.SessionConfigureResult{}, router.InvalidParams("invalid params: overrides must be an object")
		}
		if err := router.DecodeParams(params.Overrides, &ov); err != nil {
			return api.SessionConfigureResult{}, err
		}
		return m.Configure(ctx, p.owner(), params.SessionID, ov)
	}))
	s.register(api.MethodSessionGitBranch, handle(api.GrantSessionsRead, func(ctx context.Context, p *Peer, params *api.SessionIDParams) (api.SessionGitBranchResult, error) {
		if params.SessionID == "" {
			return api.SessionGitBranchResult{}, router.InvalidParams("session/git_branch needs session_id")
		}
		return m.GitBranch(ctx, p.owner(), params.SessionID)
	}))
	s.register(api.MethodFsListDir, handle(api.GrantFilesRead, func(ctx context.Context, p *Peer, params *api.FsListDirParams) (api.FsListDirResult, error) {
		res, err := m.ListDir(ctx, p.owner(), *params)
		return res, fsWireError(err)
	}))
}

// fsWireError gives the filesystem errors of fs/list_dir upstream's codes; other errors pass unchanged.
func fsWireError(err error) error {
	for _, c := range []struct {
		sentinel error
		code     int
	}{
		{session.ErrFsNotFound, api.CodeFsNotFound},
		{session.ErrFsDenied, api.CodeFsPermissionDenied},
		{session.ErrFsInvalidPath, api.CodeFsInvalidPath},
	} {
		if errors.Is(err, c.sentinel) {
			return jsonrpc.NewError(c.code, err.Error(), nil)
		}
	}
	return err
}

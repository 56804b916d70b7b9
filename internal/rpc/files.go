package rpc

import (
	"context"
	"strings"

	"github.com/zeroclaw-go/zeroclaw/internal/api"
	"github.com/zeroclaw-go/zeroclaw/internal/config"
	"github.com/zeroclaw-go/zeroclaw/internal/jsonrpc"
	"github.com/zeroclaw-go/zeroclaw/internal/router"
	"github.com/zeroclaw-go/zeroclaw/internal/session"
	"github.com/zeroclaw-go/zeroclaw/internal/upload"
)

// registerFiles serves file/attach and the chunked uploads of protocol.md §7.
func (s *Server) registerFiles(m *session.Manager, b *upload.Budget) {
	s.register(api.MethodFileAttach, handle(api.GrantFilesCreate, func(ctx context.Context, p *Peer, params *api.FileAttachParams) (api.FileAttachResult, error) {
		if len(params.Files) == 0 {
			return api.FileAttachResult{}, router.InvalidParams("file/attach needs at least one entry in files")
		}
		files, err := s.attach(ctx, m, p, params.SessionID, params.Files)
		return api.FileAttachResult{Files: files}, err
	}))
	s.register(api.MethodFileUploadBegin, handle(api.GrantFilesCreate, func(_ context.Context, p *Peer, params *api.UploadBeginParams) (api.UploadBeginResult, error) {
		if err := localOnly(p, api.MethodFileUploadBegin); err != nil {
			return api.UploadBeginResult{}, err
		}
		if params.SizeBytes == nil {
			return api.UploadBeginResult{}, router.InvalidParams("file/upload/begin needs size_bytes")
		}
		req := upload.BeginRequest{SizeBytes: *params.SizeBytes, Filename: params.Filename, MimeType: params.MimeType, SHA256: params.SHA256}
		id, err := p.staging(b).Begin(req, func() (upload.Binding, error) {
			t, err := m.FileTarget(p.owner(), params.SessionID)
			return upload.Binding(t), err
		})
		return api.UploadBeginResult{UploadID: id, ChunkBytes: api.UploadChunkBytes, MaxBytes: api.MaxFileBytes}, err
	}))
	s.register(api.MethodFileUploadChunk, router.HandleRaw(api.GrantFilesCreate, func(_ context.Context, p *Peer, req *jsonrpc.Request) (api.UploadChunkResult, error) {
		allowed := func() error { return localOnly(p, api.MethodFileUploadChunk) }
		if data := req.Payload(); data != nil {
			return serveBinaryChunk(p.staging(b), req.Params, req.ParamsValidated(), data, allowed)
		}
		return serveChunk(func() *upload.Staging { return p.staging(b) }, req.Params, req.ParamsValidated(), false, allowed)
	}))
	s.register(api.MethodFileUploadCommit, handle(api.GrantFilesCreate, func(ctx context.Context, p *Peer, params *api.UploadCommitParams) (api.FileAttachment, error) {
		if err := localOnly(p, api.MethodFileUploadCommit); err != nil {
			return api.FileAttachment{}, err
		}
		done, err := p.staging(b).Take(params.UploadID)
		if err != nil {
			return api.FileAttachment{}, err
		}
		defer done.Release()
		return s.store(ctx, m, p, session.FileTarget(done.Binding), done.File())
	}))
}

// attach stores files (file/attach entries, or a prompt's attachments) for session id, in order, one at a time.
func (s *Server) attach(ctx context.Context, m *session.Manager, p *Peer, id string, files []api.FileEntry) ([]api.FileAttachment, error) {
	t, err := m.FileTarget(p.owner(), id)
	if err != nil {
		return nil, err
	}
	mayReadPath := s.mayReadPaths(p)
	out := make([]api.FileAttachment, 0, len(files))
	var total int64
	for _, e := range files {
		f, err := upload.ReadEntry(e, mayReadPath)
		if err != nil {
			return nil, err
		}
		if total += int64(len(f.Data)); total > api.MaxAttachRequestBytes {
			return nil, router.InvalidParams("the files of one request exceed the 20 MiB limit together; send the rest in another call or upload them")
		}
		a, err := s.store(ctx, m, p, t, f)
		if err != nil {
			return nil, err
		}
		out = append(out, a)
	}
	return out, nil
}

// store is the one storage step of file/attach, commits and prompt attachments (protocol.md §7). Under the config
// held in force, it resolves the caller's credentials again and checks files:create, then, under the session's
// files lock, that the session is still the incarnation t names, that the caller may act on it and that its agent
// is available; only then is the file written and indexed. A policy change that arrives meanwhile waits until
// the file is stored.
func (s *Server) store(ctx context.Context, m *session.Manager, p *Peer, t session.FileTarget, f upload.File) (api.FileAttachment, error) {
	var out api.FileAttachment
	err := s.holdConfig(ctx, func(cfg *config.Config) error {
		pr, err := s.principalOf(cfg, p)
		if err != nil {
			return err
		}
		if !pr.Allows(api.GrantFilesCreate) {
			return forbidden(api.GrantFilesCreate)
		}
		o := session.OwnerOf(pr, p.ID)
		return m.WithFiles(cfg, o, t, func(workspace string, idx *session.FileIndex) error {
			out, err = upload.Save(workspace, f, idx)
			return err
		})
	})
	return out, err
}

// holdConfig runs fn with the config in force held fixed (config.Manager.Hold); without a config manager (tests
// of other domains) the current snapshot is all there is.
func (s *Server) holdConfig(ctx context.Context, fn func(cfg *config.Config) error) error {
	if s.opts.ConfigManager != nil {
		return s.opts.ConfigManager.Hold(ctx, fn)
	}
	return fn(s.config())
}

// promptFiles stores a prompt's attachments like file/attach and appends their markers to the prompt, one per
// line, so the model sees where each file lies. The caller needs files:create too.
func (s *Server) promptFiles(ctx context.Context, m *session.Manager, p *Peer, params *api.SessionPromptParams) error {
	if len(params.Attachments) == 0 {
		return nil
	}
	if err := s.authorize(ctx, p, api.GrantFilesCreate); err != nil {
		return err
	}
	files, err := s.attach(ctx, m, p, params.SessionID, params.Attachments)
	if err != nil {
		return err
	}
	lines := make([]string, 0, len(files)+1)
	if strings.TrimSpace(params.Prompt) != "" {
		lines = append(lines, params.Prompt)
	}
	for _, f := range files {
		lines = append(lines, f.Marker)
	}
	params.Prompt, params.Attachments = strings.Join(lines, "\n"), nil
	return nil
}

// mayReadPaths reports whether p may name files by path for the daemon to read: a local peer running as the
// daemon's own user (it could read them anyway) or an admin principal.
func (s *Server) mayReadPaths(p *Peer) bool {
	if !p.Info.Transport.Local() {
		return false
	}
	if p.Info.UID >= 0 && p.Info.UID == s.opts.Info.UID {
		return true
	}
	pr := p.Principal()
	return pr != nil && pr.Admin
}

// localOnly refuses the upload methods on a remote transport (-32012).
func localOnly(p *Peer, method string) error {
	if p.Info.Transport.Local() {
		return nil
	}
	return jsonrpc.NewError(api.CodeForbidden, "Forbidden: "+method+" is served only on local connections",
		map[string]any{"reason": "transport", "transport": string(p.Info.Transport)})
}

// staging is the connection's upload staging area, made on first use; it is dropped when the connection ends.
func (p *Peer) staging(b *upload.Budget) *upload.Staging {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.uploads == nil {
		p.uploads = b.NewStaging()
		if p.closed {
			p.uploads.Close()
		}
	}
	return p.uploads
}

// dropUploads discards the connection's staged uploads; the connection has ended.
func (p *Peer) dropUploads() {
	p.mu.Lock()
	st := p.uploads
	p.closed = true
	p.mu.Unlock()
	if st != nil {
		st.Close()
	}
}

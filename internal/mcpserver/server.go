// Package mcpserver is the daemon as a Model Context Protocol server: a few of its native methods (memory,
// sessions, cron, SOPs) offered as MCP tools, each with a JSON schema and the grant its native method needs, over
// stdio (`zeroclaw mcp serve`) and streamable HTTP (the gateway's /mcp). A tool call goes through the server's
// own router.Table (the grant check, the error mapping) and then to the native method table through the
// caller's Peer.Call, so grants and errors are those of the socket. The MCP wire itself is the official Go SDK.
package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/zeroclaw-go/zeroclaw/internal/api"
	"github.com/zeroclaw-go/zeroclaw/internal/auth"
	"github.com/zeroclaw-go/zeroclaw/internal/errmap"
	"github.com/zeroclaw-go/zeroclaw/internal/jsonrpc"
	"github.com/zeroclaw-go/zeroclaw/internal/router"
)

// Defaults of Options.
const (
	// DefaultMaxSessions caps the streamable HTTP sessions open at once; one more initialize is refused (503).
	DefaultMaxSessions = 64
	// DefaultMaxSessionsPerOwner caps those of one client (one paired token), so that one device cannot take
	// every place.
	DefaultMaxSessionsPerOwner = 16
	// DefaultMaxFrameBytes bounds one stdio frame; a longer line ends the session.
	DefaultMaxFrameBytes = 1 << 20
)

// CallFunc calls one native method as the MCP client's principal: the same table, grant check and error
// mapping as the local socket. Errors are *jsonrpc.Error for what the daemon answered.
type CallFunc func(ctx context.Context, method string, params json.RawMessage) (any, error)

// Peer is one MCP client: who it is and how it reaches the daemon's methods.
type Peer struct {
	// Label names the client in logs ("http:203.0.113.7", "stdio").
	Label string
	// Owner keys the streamable HTTP sessions: a session is served only to requests with the Owner that opened
	// it (the paired token's hash). Unused on stdio.
	Owner string
	// Principal, when set, is the client's principal under the config in force (nil from it: no longer
	// allowed, -32010), which refuses a tool whose grant it lacks before its arguments are checked or the
	// daemon is asked. Unset leaves every check to the native table (stdio: the daemon resolves the socket peer
	// itself). The native call checks again either way.
	Principal func() *auth.Principal
	// Call reaches the native methods.
	Call CallFunc
}

// Options configure a Server.
type Options struct {
	Version       string // the implementation version the server announces
	MaxSessions   int    // 0: DefaultMaxSessions
	MaxPerOwner   int    // 0: DefaultMaxSessionsPerOwner
	MaxFrameBytes int    // 0: DefaultMaxFrameBytes
	Logger        *slog.Logger
}

// ErrDaemonGone is a tool call whose daemon connection ended (stdio: the daemon stopped).
var ErrDaemonGone = errors.New("mcpserver: the daemon closed the connection")

// Server serves MCP sessions. peers registers every live session (Drain waits for their tool calls, CloseAll
// ends them); the HTTP sessions' owners are in sessions, guarded by mu. wg owns the goroutines that wait for an
// HTTP session's end.
type Server struct {
	opts   Options
	log    *slog.Logger
	sdkLog *slog.Logger // the SDK's: warnings and errors only (it logs every session's steps at Info)
	table  *router.Table[*Peer]
	tools  []tool
	peers  router.Peers[*Peer]
	probe  *mcp.Server // answers what the HTTP handler asks outside a session (the protocol versions)
	http   *mcp.StreamableHTTPHandler
	wg     sync.WaitGroup

	mu       sync.Mutex
	sessions map[string]*httpSession
	closed   bool
}

// New builds the server and its tool table.
func New(opts Options) *Server {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.MaxSessions <= 0 {
		opts.MaxSessions = DefaultMaxSessions
	}
	if opts.MaxPerOwner <= 0 {
		opts.MaxPerOwner = DefaultMaxSessionsPerOwner
	}
	if opts.MaxFrameBytes <= 0 {
		opts.MaxFrameBytes = DefaultMaxFrameBytes
	}
	s := &Server{opts: opts, log: opts.Logger, sessions: map[string]*httpSession{},
		sdkLog: slog.New(minLevel{Handler: opts.Logger.Handler(), min: slog.LevelWarn})}
	s.table = router.New(router.Options[*Peer]{Authorize: authorize, MapError: mapError, Logger: opts.Logger})
	s.tools = tools()
	for i := range s.tools {
		s.tools[i].resolve()
		s.table.Register(s.tools[i].name, s.tools[i].method)
	}
	s.probe = s.newSDKServer(nil, "")
	s.http = s.newHTTPHandler()
	return s
}

// ToolNames lists the tools every session offers, sorted.
func (s *Server) ToolNames() []string { return s.table.Names() }

// authorize refuses a tool whose grant a known principal lacks, with the native table's errors.
func authorize(_ context.Context, p *Peer, grant string) error {
	if p.Principal == nil {
		return nil
	}
	pr := p.Principal()
	switch {
	case pr == nil:
		return jsonrpc.NewError(api.CodeAuthRequired, "peer not allowed: its token is no longer paired", nil)
	case grant != "" && !pr.Allows(grant):
		return jsonrpc.NewError(api.CodeForbidden, "Forbidden: missing grant "+grant, map[string]any{"grant": grant})
	}
	return nil
}

// mapError maps the errors a forward can meet besides the daemon's own answers (already *jsonrpc.Error).
func mapError(err error) *jsonrpc.Error {
	if errors.Is(err, ErrDaemonGone) {
		return jsonrpc.NewError(jsonrpc.CodeInternalError, "the daemon closed the connection; restart the MCP server", nil)
	}
	return errmap.RPC(err)
}

// newSDKServer is one MCP server over the tool table for peer (nil: the probe, which serves no tool call).
// sessionID, when set, is the id its one streamable HTTP session gets.
func (s *Server) newSDKServer(peer *Peer, sessionID string) *mcp.Server {
	opts := &mcp.ServerOptions{Logger: s.sdkLog, HasTools: true}
	if sessionID != "" {
		opts.GetSessionID = func() string { return sessionID }
	}
	srv := mcp.NewServer(&mcp.Implementation{Name: "zeroclaw", Title: "ZeroClaw daemon", Version: s.opts.Version}, opts)
	for i := range s.tools {
		srv.AddTool(s.tools[i].spec(), s.toolHandler(peer, &s.tools[i]))
	}
	return srv
}

// toolHandler runs tool t for peer: counted in flight, arguments checked against its schema, then through the
// table (grant, params, the native call),
// its result or refusal shaped as an MCP tool result.
func (s *Server) toolHandler(peer *Peer, t *tool) mcp.ToolHandler {
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		if peer == nil {
			return nil, errors.New("mcpserver: no session")
		}
		s.peers.Begin()
		defer s.peers.End()
		args := req.Params.Arguments
		if len(args) == 0 || string(args) == "null" {
			args = json.RawMessage(`{}`)
		}
		if err := authorize(ctx, peer, t.grant); err != nil { // the grant first, as the native table checks it
			return errorResult(err), nil
		}
		if err := t.validate(args); err != nil {
			return errorResult(err), nil
		}
		res, err := s.table.Dispatch(ctx, peer, &jsonrpc.Request{ID: json.RawMessage(`1`), Method: t.name, Params: args})
		if err != nil {
			return errorResult(err), nil
		}
		return successResult(res)
	}
}

// successResult is a native result as an MCP tool result: its JSON as the text, and as structuredContent.
func successResult(res any) (*mcp.CallToolResult, error) {
	raw, err := json.Marshal(res)
	if err != nil {
		return nil, err
	}
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(raw)}},
		StructuredContent: json.RawMessage(raw)}, nil
}

// errorResult is a refused or failed call as a tool error (isError), so the model reading it sees why: the
// native message as the text, and {"error": {code, message, data}} as structuredContent, so a program can tell
// a missing grant (-32012) from a bad argument (-32602) by code.
func errorResult(err error) *mcp.CallToolResult {
	var we *jsonrpc.Error
	if !errors.As(err, &we) {
		we = jsonrpc.NewError(jsonrpc.CodeInternalError, "Internal error", nil)
	}
	body := map[string]any{"code": we.Code, "message": we.Message}
	if we.Data != nil {
		body["data"] = we.Data
	}
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: we.Message}},
		StructuredContent: map[string]any{"error": body}}
}

// Drain waits until no tool call is in flight, or ctx ends. It ends no session: Close does.
func (s *Server) Drain(ctx context.Context) error { return s.peers.Drain(ctx) }

// CloseAll ends every open session (their streams end with them).
func (s *Server) CloseAll() { s.peers.CloseAll() }

// Close refuses new sessions, ends every open one and waits for their watchers.
func (s *Server) Close() {
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
	s.peers.Close()
	s.wg.Wait()
}

// Sessions is the number of open sessions (both transports).
func (s *Server) Sessions() int { return s.peers.Len() }

// minLevel passes on the records of min and above only.
type minLevel struct {
	slog.Handler
	min slog.Level
}

func (h minLevel) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= h.min && h.Handler.Enabled(ctx, l)
}

func (h minLevel) WithAttrs(as []slog.Attr) slog.Handler {
	return minLevel{Handler: h.Handler.WithAttrs(as), min: h.min}
}

func (h minLevel) WithGroup(name string) slog.Handler {
	return minLevel{Handler: h.Handler.WithGroup(name), min: h.min}
}

package acp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/zeroclaw-go/zeroclaw/internal/api"
	"github.com/zeroclaw-go/zeroclaw/internal/jsonrpc"
	"github.com/zeroclaw-go/zeroclaw/internal/router"
	"github.com/zeroclaw-go/zeroclaw/internal/session"
)

// Params are declared with their snake_case names: the router also matches the camelCase spelling ACP uses.
type (
	initializeParams struct {
		ProtocolVersion    json.RawMessage `json:"protocol_version"`
		ClientCapabilities json.RawMessage `json:"client_capabilities"`
	}
	newParams struct {
		Cwd          string          `json:"cwd"`
		WorkspaceDir string          `json:"workspace_dir"` // upstream's alias of cwd
		McpServers   json.RawMessage `json:"mcp_servers"`   // the editor's MCP servers, for this session only
		AgentAlias   string          `json:"agent_alias"`
		Agent        string          `json:"agent"`
	}
	sessionParams struct {
		SessionID  string          `json:"session_id"`
		Cwd        string          `json:"cwd"`
		McpServers json.RawMessage `json:"mcp_servers"`
	}
	promptParams struct {
		SessionID string          `json:"session_id"`
		Prompt    json.RawMessage `json:"prompt"`
	}
)

type (
	initializeResult struct {
		ProtocolVersion   int               `json:"protocolVersion"`
		AgentCapabilities agentCapabilities `json:"agentCapabilities"`
		AgentInfo         implementation    `json:"agentInfo"`
		AuthMethods       []any             `json:"authMethods"`
	}
	agentCapabilities struct {
		LoadSession         bool                `json:"loadSession"`
		PromptCapabilities  promptCapabilities  `json:"promptCapabilities"`
		McpCapabilities     mcpCapabilities     `json:"mcpCapabilities"`
		SessionCapabilities sessionCapabilities `json:"sessionCapabilities"`
	}
	promptCapabilities struct {
		Image           bool `json:"image"`
		Audio           bool `json:"audio"`
		EmbeddedContext bool `json:"embeddedContext"`
	}
	mcpCapabilities struct {
		HTTP bool `json:"http"`
		SSE  bool `json:"sse"`
	}
	sessionCapabilities struct {
		Resume *struct{} `json:"resume,omitempty"`
		Close  *struct{} `json:"close,omitempty"`
	}
	implementation struct {
		Name    string `json:"name"`
		Title   string `json:"title"`
		Version string `json:"version"`
	}
	newResult struct {
		SessionID    string `json:"sessionId"`
		WorkspaceDir string `json:"workspaceDir"`
	}
	promptResult struct {
		StopReason string `json:"stopReason"`
		Content    string `json:"content,omitempty"`
	}
	empty struct{}
)

// Stop reasons of session/prompt.
const (
	stopEndTurn   = "end_turn"
	stopCancelled = "cancelled"
)

func (s *Server) register() {
	s.table.Register(MethodInitialize, router.Handle("", s.initialize))
	s.table.Register(MethodSessionNew, router.Handle(api.GrantSessionsCreate, s.newSession))
	s.table.Register(MethodSessionLoad, router.Handle(api.GrantSessionsCreate, s.load))
	s.table.Register(MethodSessionResume, router.Handle(api.GrantSessionsCreate, s.resume))
	s.table.Register(MethodSessionClose, router.Handle(api.GrantSessionsExecute, s.closeSession))
	// A prompt runs beside everything else on its connection, and cancel is never queued behind it.
	prompt := router.Handle(api.GrantSessionsExecute, s.prompt)
	prompt.Concurrent = true
	s.table.Register(MethodSessionPrompt, prompt)
	cancel := router.Handle(api.GrantSessionsExecute, s.cancel)
	cancel.Concurrent = true
	s.table.Register(MethodSessionCancel, cancel)
}

func (s *Server) initialize(_ context.Context, p *peer, params *initializeParams) (initializeResult, error) {
	var caps struct {
		Elicitation json.RawMessage `json:"elicitation"`
	}
	if len(params.ClientCapabilities) > 0 && string(params.ClientCapabilities) != "null" {
		if err := json.Unmarshal(params.ClientCapabilities, &caps); err != nil {
			return initializeResult{}, router.InvalidParams("invalid params: clientCapabilities must be an object")
		}
	}
	p.mu.Lock()
	p.elicitation = len(caps.Elicitation) > 0 && string(caps.Elicitation) != "null"
	p.mu.Unlock()
	admin := s.owner(p).Admin
	res := initializeResult{
		ProtocolVersion: ProtocolVersion,
		AgentCapabilities: agentCapabilities{
			PromptCapabilities: promptCapabilities{EmbeddedContext: true},
			// The editor's http and sse servers are honoured too, for the owner only (upstream advertises false
			// and reads none); another peer is told false, as its session/new would refuse them.
			McpCapabilities: mcpCapabilities{HTTP: admin, SSE: admin},
		},
		AgentInfo:   implementation{Name: "zeroclaw-acp", Title: "ZeroClaw", Version: api.ServerVersion},
		AuthMethods: []any{},
	}
	if s.opts.Sessions.ACPDurable() {
		res.AgentCapabilities.LoadSession = true
		res.AgentCapabilities.SessionCapabilities = sessionCapabilities{Resume: &struct{}{}, Close: &struct{}{}}
	}
	return res, nil
}

func (s *Server) newSession(ctx context.Context, p *peer, params *newParams) (newResult, error) {
	alias := params.AgentAlias
	if alias == "" {
		alias = params.Agent
	}
	if alias == "" {
		alias = p.info.DefaultAgent
	}
	cwd := params.Cwd
	if cwd == "" {
		cwd = params.WorkspaceDir
	}
	servers, err := editorServers(params.McpServers)
	if err != nil {
		return newResult{}, err
	}
	out, err := s.opts.Sessions.NewACP(ctx, s.owner(p), session.ACPNewParams{AgentAlias: alias, Cwd: cwd, Surface: session.SurfaceACP,
		EditorServers: servers})
	if err != nil {
		return newResult{}, err
	}
	return newResult{SessionID: out.SessionID, WorkspaceDir: out.WorkspaceDir}, nil
}

// load makes a stored session live for this connection, replays its visible history as session/update
// notifications, then answers {} (the notifications go out first: one writer, in order).
func (s *Server) load(ctx context.Context, p *peer, params *sessionParams) (empty, error) {
	if err := needSession(params.SessionID); err != nil {
		return empty{}, err
	}
	out, err := s.opts.Sessions.OpenACP(ctx, s.owner(p), params.SessionID, true)
	if err != nil {
		return empty{}, err
	}
	for _, u := range replay(out.History) {
		if err := p.conn.Notify(MethodSessionUpdate, updateParams{SessionID: out.SessionID, Update: u}); err != nil {
			return empty{}, err
		}
	}
	return empty{}, nil
}

func (s *Server) resume(ctx context.Context, p *peer, params *sessionParams) (empty, error) {
	if err := needSession(params.SessionID); err != nil {
		return empty{}, err
	}
	_, err := s.opts.Sessions.OpenACP(ctx, s.owner(p), params.SessionID, false)
	return empty{}, err
}

// closeSession drops the live session; its stored row stays loadable.
func (s *Server) closeSession(_ context.Context, p *peer, params *sessionParams) (empty, error) {
	if err := needSession(params.SessionID); err != nil {
		return empty{}, err
	}
	if _, err := s.opts.Sessions.ACPWorkspace(s.owner(p), params.SessionID); err != nil {
		return empty{}, err
	}
	_, err := s.opts.Sessions.Close(s.owner(p), params.SessionID)
	return empty{}, err
}

// cancel cancels the session's running turn; an idle session makes it a no-op (acp.md).
func (s *Server) cancel(_ context.Context, p *peer, params *sessionParams) (empty, error) {
	if err := needSession(params.SessionID); err != nil {
		return empty{}, err
	}
	o := s.owner(p)
	if _, err := s.opts.Sessions.ACPWorkspace(o, params.SessionID); err != nil {
		return empty{}, err
	}
	if _, err := s.opts.Sessions.Cancel(o, params.SessionID); err != nil && !errors.Is(err, session.ErrNoActiveTurn) {
		return empty{}, err
	}
	return empty{}, nil
}

// prompt runs one turn, streaming its events as session/update notifications, and answers with its stop reason
// once they are all written. A turn that failed is -32603 with the reason.
func (s *Server) prompt(ctx context.Context, p *peer, params *promptParams) (promptResult, error) {
	if err := needSession(params.SessionID); err != nil {
		return promptResult{}, err
	}
	o := s.owner(p)
	ws, err := s.opts.Sessions.ACPWorkspace(o, params.SessionID)
	if err != nil {
		return promptResult{}, err
	}
	text, err := materializePrompt(params.Prompt, ws)
	if err != nil {
		return promptResult{}, err
	}
	callCtx, stopCalls := context.WithCancel(ctx)
	k := &sink{s: s, p: p, owner: o, sessionID: params.SessionID, ctx: callCtx}
	res, err := s.opts.Sessions.Prompt(ctx, o, api.SessionPromptParams{SessionID: params.SessionID, Prompt: text}, k)
	stopCalls() // a permission request still waiting for the client is abandoned: the turn is over
	k.wait()
	if err != nil {
		return promptResult{}, err
	}
	switch res.Outcome {
	case api.OutcomeCompleted:
		return promptResult{StopReason: stopEndTurn, Content: res.Content}, nil
	case api.OutcomeCancelled:
		return promptResult{StopReason: stopCancelled, Content: res.Content}, nil
	}
	msg := "the turn failed"
	if e := k.failure(); e != "" {
		msg += ": " + e
	}
	return promptResult{}, jsonrpc.NewError(jsonrpc.CodeInternalError, msg, nil)
}

func needSession(id string) error {
	if strings.TrimSpace(id) == "" {
		return router.InvalidParams("invalid params: sessionId is required")
	}
	return nil
}

// sink receives one prompt's events from the session layer and writes them in ACP's shape. Update is called
// from the turn's goroutine, in order.
type sink struct {
	s         *Server
	p         *peer
	owner     session.Owner
	sessionID string
	ctx       context.Context // ends when the prompt has returned: outbound requests stop waiting

	mu       sync.Mutex // guards the fields below
	lastCall toolCallInfo
	errText  string
	calls    sync.WaitGroup
}

// toolCallInfo is the last tool_call seen: the one an approval_request that follows is about.
type toolCallInfo struct {
	id, name string
	rawInput json.RawMessage
}

func (k *sink) Update(ev api.SessionUpdate) {
	var u any
	switch ev.Type {
	case api.UpdateAgentMessageChunk, api.UpdateAgentThoughtChunk:
		u = textChunk{SessionUpdate: ev.Type, Content: textBlock(ev.Text)}
	case api.UpdateToolCall:
		k.mu.Lock()
		k.lastCall = toolCallInfo{id: ev.ToolCallID, name: ev.Name, rawInput: ev.RawInput}
		k.mu.Unlock()
		u = toolCallStart(ev.ToolCallID, ev.Name, ev.RawInput)
	case api.UpdateToolResult:
		out := ""
		if ev.RawOutput != nil {
			out = *ev.RawOutput
		}
		u = toolCallDone(ev.ToolCallID, out, ev.IsError)
	case api.UpdateApprovalRequest:
		k.requestPermission(ev)
		return
	case api.UpdateHistoryTrimmed:
		_ = k.p.conn.Notify(NotifyHistoryTrimmed, map[string]any{"sessionId": k.sessionID,
			"droppedMessages": ev.DroppedMessages, "keptTurns": ev.KeptTurns, "reason": ev.Reason})
		return
	case api.UpdateTurnComplete:
		k.mu.Lock()
		k.errText = ev.Error
		k.mu.Unlock()
		return
	default: // context_usage: ACP has no update for it
		return
	}
	// A closed connection drops the event; its turn is being cancelled by the disconnect anyway.
	_ = k.p.conn.Notify(MethodSessionUpdate, updateParams{SessionID: k.sessionID, Update: u})
}

func (k *sink) failure() string {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.errText
}

func (k *sink) wait() { k.calls.Wait() }

// Elicit asks the client a question with elicitation/create when it declared the capability.
func (k *sink) Elicit(ctx context.Context, params api.ElicitationParams) (api.ElicitationResult, error) {
	k.p.mu.Lock()
	can := k.p.elicitation
	k.p.mu.Unlock()
	if !can {
		return api.ElicitationResult{}, session.ErrNoElicitation
	}
	raw, err := k.p.conn.Call(ctx, MethodElicitationCreate, params)
	if err != nil {
		return api.ElicitationResult{}, err
	}
	var res api.ElicitationResult
	if err := json.Unmarshal(raw, &res); err != nil {
		return api.ElicitationResult{}, fmt.Errorf("acp: the client's elicitation answer is not an object: %w", err)
	}
	return res, nil
}

package session

import (
	"context"
	"sync"

	"github.com/zeroclaw-go/zeroclaw/internal/config"
	"github.com/zeroclaw-go/zeroclaw/internal/tools"
)

// MCPTools is the MCP tools of one turn (an *mcp.Set): the tools, and the deferred-loading prompt section.
type MCPTools interface {
	tools.External
	// PromptSection is what the servers add to the system prompt: their pinned resources (untrusted, bounded)
	// and the list of deferred tools; "" when there is none. It may read from the servers, bounded by ctx.
	PromptSection(ctx context.Context) string
}

// EditorMCP is an ACP session's own MCP servers, the ones the editor named in session/new: they start under
// the daemon's lifecycle and stop when the session closes.
type EditorMCP interface {
	Tools(ctx context.Context, conv string) MCPTools
	Close()
}

// messageFilter is a tool set that narrows itself to a turn's user message (the agent's tool_filter_groups
// of mode dynamic match keywords in it); *mcp.Set is one.
type messageFilter interface{ ForMessage(msg string) }

// turnMCP returns the MCP tools of a turn of s for the user's prompt: its agent's granted servers (for an ACP
// session only with agents.<alias>.acp_enable_mcp, as upstream), and an ACP session's editor servers. nil: none.
func (m *Manager) turnMCP(ctx context.Context, cfg *config.Config, s *session, prompt string) MCPTools {
	var sets externals
	if m.o.MCP != nil && (s.acp == nil || cfg.Agents[s.alias].ACPEnableMCP) {
		if t := m.o.MCP(ctx, cfg, s.alias, s.id); t != nil {
			sets = append(sets, t)
		}
	}
	s.mu.Lock()
	ed := s.editorMCP
	s.mu.Unlock()
	if ed != nil {
		if t := ed.Tools(ctx, s.id); t != nil {
			sets = append(sets, t)
		}
	}
	for _, t := range sets {
		if f, ok := t.(messageFilter); ok {
			f.ForMessage(prompt)
		}
	}
	switch len(sets) {
	case 0:
		return nil
	case 1:
		return sets[0]
	}
	return sets
}

// setEditorMCP gives s the editor's servers (replacing, and closing, those of an earlier session/load).
func (s *session) setEditorMCP(e EditorMCP) {
	s.mu.Lock()
	old := s.editorMCP
	s.editorMCP = e
	closed := s.closed
	s.mu.Unlock()
	if old != nil {
		old.Close()
	}
	if closed && e != nil { // the session ended meanwhile
		s.closeEditorMCP()
	}
}

// closeEditorMCP stops the editor's servers of s (their children are reaped) in the background: a session
// closes under locks that must not wait for a child's exit.
func (s *session) closeEditorMCP() {
	s.mu.Lock()
	e := s.editorMCP
	s.editorMCP = nil
	s.mu.Unlock()
	if e == nil {
		return
	}
	editorClosers.Add(1)
	go func() {
		defer editorClosers.Done()
		e.Close()
	}()
}

// editorClosers counts the editor server sets still stopping; WaitEditorMCP waits for them.
var editorClosers sync.WaitGroup

// externals joins several tool sets; the first that knows a name answers for it.
type externals []MCPTools

func (x externals) Specs() []tools.Spec {
	var out []tools.Spec
	seen := map[string]bool{}
	for _, e := range x {
		for _, s := range e.Specs() {
			if !seen[s.Name] {
				seen[s.Name] = true
				out = append(out, s)
			}
		}
	}
	return out
}

func (x externals) Risk(name string) (tools.Risk, bool) {
	for _, e := range x {
		if r, ok := e.Risk(name); ok {
			return r, true
		}
	}
	return "", false
}

func (x externals) Call(ctx context.Context, call tools.Call, outputCap int) tools.Result {
	for _, e := range x {
		if _, ok := e.Risk(call.Name); ok {
			return e.Call(ctx, call, outputCap)
		}
	}
	return tools.Result{Output: call.Name + ": unknown tool", IsError: true}
}

func (x externals) PromptSection(ctx context.Context) string {
	var out string
	for _, e := range x {
		if p := e.PromptSection(ctx); p != "" {
			out += p + "\n\n"
		}
	}
	return out
}

// WaitEditorMCP waits until the editor servers of closed sessions are stopped and their children reaped (the
// daemon calls it at shutdown).
func WaitEditorMCP() { editorClosers.Wait() }

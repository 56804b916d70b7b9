package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/zeroclaw-go/zeroclaw/internal/api"
	"github.com/zeroclaw-go/zeroclaw/internal/router"
)

// Tool names: what an MCP client lists and calls. Each is one native method.
const (
	ToolMemorySearch    = "memory_search"
	ToolMemoryStore     = "memory_store"
	ToolSessionSearch   = "session_search"
	ToolSessionMessages = "session_messages"
	ToolCronList        = "cron_list"
	ToolCronAdd         = "cron_add"
	ToolSopList         = "sop_list"
	ToolSopRun          = "sop_run"
	ToolSopRuns         = "sop_runs"
)

// tool is one MCP tool: its table entry (grant and forward) and what tools/list shows.
type tool struct {
	name, title, description string
	grant, native            string
	readOnly                 bool
	schema                   map[string]any
	resolved                 *jsonschema.Resolved // schema, resolved once by New: every call's arguments are checked against it
	method                   router.Method[*Peer]
}

// resolve parses and resolves the tool's schema (a schema that does not is a programming error).
func (t *tool) resolve() {
	raw, err := json.Marshal(t.schema)
	if err != nil {
		panic(fmt.Sprintf("mcpserver: tool %s: schema: %v", t.name, err))
	}
	var js jsonschema.Schema
	if err := json.Unmarshal(raw, &js); err != nil {
		panic(fmt.Sprintf("mcpserver: tool %s: schema: %v", t.name, err))
	}
	if t.resolved, err = js.Resolve(nil); err != nil {
		panic(fmt.Sprintf("mcpserver: tool %s: schema: %v", t.name, err))
	}
}

// validate checks a call's arguments against the schema: -32602 naming what is wrong.
func (t *tool) validate(args json.RawMessage) error {
	var v any
	if err := json.Unmarshal(args, &v); err != nil {
		return router.InvalidParams("invalid arguments: not JSON")
	}
	if err := t.resolved.Validate(v); err != nil {
		return router.InvalidParams("invalid arguments for " + t.name + ": " + err.Error())
	}
	return nil
}

// spec is the tool as tools/list shows it.
func (t tool) spec() *mcp.Tool {
	ann := &mcp.ToolAnnotations{Title: t.title, ReadOnlyHint: t.readOnly, OpenWorldHint: new(bool)}
	if !t.readOnly {
		ann.DestructiveHint = new(bool) // they add, never overwrite or delete what exists... except memory_store
		if t.name == ToolMemoryStore {
			yes := true
			ann.DestructiveHint = &yes // a key stored again replaces its content
		}
	}
	return &mcp.Tool{Name: t.name, Title: t.title, Description: t.description + " Needs the grant " + t.grant + ".",
		InputSchema: t.schema, Annotations: ann}
}

// forward is a tool whose arguments are P, the native method's own params: decoded (the native adapter's
// rules: snake_case or camelCase, a wrong type is -32602), encoded again and sent to method as the peer.
func forward[P any](grant, method string) router.Method[*Peer] {
	return router.Handle(grant, func(ctx context.Context, p *Peer, params *P) (any, error) {
		raw, err := json.Marshal(params)
		if err != nil {
			return nil, err
		}
		return p.Call(ctx, method, raw)
	})
}

// Schema helpers: every schema is an object that refuses properties it does not name.
func object(required []string, props map[string]any) map[string]any {
	s := map[string]any{"type": "object", "properties": props, "additionalProperties": false}
	if len(required) > 0 {
		s["required"] = required
	}
	return s
}

func str(desc string) map[string]any { return map[string]any{"type": "string", "description": desc} }

func integer(desc string, min, max int) map[string]any {
	return map[string]any{"type": "integer", "description": desc, "minimum": min, "maximum": max}
}

// tools are the server's tools, each gated by its native method's grant.
func tools() []tool {
	agent := str("The agent whose data this is (an alias under [agents]); empty: the default agent.")
	ts := []tool{
		{
			name: ToolMemorySearch, title: "Search memories", readOnly: true,
			description: "Search what the agents remember (keyword and semantic recall), best matches first; contents are previews.",
			grant:       api.GrantMemoryRead, native: api.MethodMemorySearch,
			schema: object([]string{"query"}, map[string]any{
				"query":      str("What to look for."),
				"limit":      integer("How many entries at most (default 10).", 1, 100),
				"session_id": str("Only memories of this session."),
				"since":      str("Only memories created at or after this time (RFC 3339)."),
				"until":      str("Only memories created before this time (RFC 3339)."),
				"agent":      agent,
			}),
			method: forward[api.MemorySearchParams](api.GrantMemoryRead, api.MethodMemorySearch),
		},
		{
			name: ToolMemoryStore, title: "Store a memory",
			description: "Remember content under a key (a key stored again replaces its content).",
			grant:       api.GrantMemoryWrite, native: api.MethodMemoryStore,
			schema: object([]string{"key", "content"}, map[string]any{
				"key":        str("The memory's key."),
				"content":    str("What to remember."),
				"category":   str(`"core", "daily", "conversation" or "user" (default), or a custom category.`),
				"session_id": str("The session this memory belongs to."),
				"agent":      agent,
			}),
			method: forward[api.MemoryStoreParams](api.GrantMemoryWrite, api.MethodMemoryStore),
		},
		{
			name: ToolSessionSearch, title: "Search chat sessions", readOnly: true,
			description: "List the stored chat sessions, newest activity first, optionally only those whose name or messages contain a query.",
			grant:       api.GrantSessionsRead, native: api.MethodSessionList,
			schema: object(nil, map[string]any{
				"query": str("Only sessions whose name or messages contain this text."),
				"limit": integer("How many sessions at most.", 1, 1000),
			}),
			method: forward[api.SessionListParams](api.GrantSessionsRead, api.MethodSessionList),
		},
		{
			name: ToolSessionMessages, title: "Read a session's messages", readOnly: true,
			description: "The messages of one stored chat session, a page at a time (the newest page by default).",
			grant:       api.GrantSessionsRead, native: api.MethodSessionMsgs,
			schema: object([]string{"session_id"}, map[string]any{
				"session_id":   str("The session's id (session_search lists them)."),
				"limit":        integer("How many messages at most.", 1, 1000),
				"before_index": integer("Only messages before this index (the page before the one read).", 0, 1<<31-1),
			}),
			method: forward[api.SessionMessagesParams](api.GrantSessionsRead, api.MethodSessionMsgs),
		},
		{
			name: ToolCronList, title: "List scheduled jobs", readOnly: true,
			description: "The scheduled jobs, with their schedules, next run and last outcome.",
			grant:       api.GrantCronRead, native: api.MethodCronList,
			schema: object(nil, map[string]any{}),
			method: forward[struct{}](api.GrantCronRead, api.MethodCronList),
		},
		{
			name: ToolCronAdd, title: "Schedule a job",
			description: "Add a scheduled job: an agent turn (prompt) or a shell command, on a cron expression or a schedule object.",
			grant:       api.GrantCronCreate, native: api.MethodCronAdd,
			schema: object([]string{"schedule"}, map[string]any{
				"schedule": map[string]any{
					"description": `A cron expression ("0 9 * * 1-5"), or a schedule object: {"kind":"cron","expr":"...","tz":"..."}, {"kind":"at","at":"RFC 3339 time"} or {"kind":"every","every_ms":60000}.`,
					"oneOf":       []any{map[string]any{"type": "string"}, map[string]any{"type": "object"}},
				},
				"tz":               str("The time zone of a cron expression (IANA name, e.g. Europe/Berlin)."),
				"prompt":           str("The prompt of an agent job."),
				"command":          str("The shell command of a shell job."),
				"name":             str("The job's name."),
				"job_type":         map[string]any{"type": "string", "enum": []string{"agent", "shell"}, "description": "agent (a prompt) or shell (a command); default: from which of the two is given."},
				"agent":            agent,
				"session_target":   str(`Where an agent job's turns go: "isolated" (a new session each run, default) or "main".`),
				"model":            str("The model an agent job uses instead of the agent's."),
				"allowed_tools":    map[string]any{"type": "array", "items": map[string]any{"type": "string"}, "description": "Only these tools in an agent job's turns."},
				"delete_after_run": map[string]any{"type": "boolean", "description": "Delete the job after its first run."},
			}),
			method: forward[api.CronAddParams](api.GrantCronCreate, api.MethodCronAdd),
		},
		{
			name: ToolSopList, title: "List SOPs", readOnly: true,
			description: "The standard operating procedures defined (name, description, triggers, steps), as {\"sops\": [...]}.",
			grant:       api.GrantSopsRead, native: api.MethodSopsList,
			schema: object(nil, map[string]any{}),
			method: wrapped(api.GrantSopsRead, api.MethodSopsList, "sops"),
		},
		{
			name: ToolSopRun, title: "Run a SOP",
			description: "Start a run of a SOP by name (a manual trigger); answers its run_id. Its steps then run as the SOP's agent; sop_runs shows how far it got.",
			grant:       api.GrantSopsExecute, native: api.MethodSopsRun,
			schema: object([]string{"name"}, map[string]any{
				"name":    str("The SOP's name (sop_list lists them)."),
				"payload": str("The first step's input, as JSON text (e.g. \"{\\\"ticket\\\": 42}\"); absent: none."),
			}),
			method: forward[api.SopRunParams](api.GrantSopsExecute, api.MethodSopsRun),
		},
		{
			name: ToolSopRuns, title: "List SOP runs", readOnly: true,
			description: "The SOP runs, newest first: the active ones and the kept finished ones, with their status and current step.",
			grant:       api.GrantSopsRead, native: api.MethodSopsRuns,
			schema: object(nil, map[string]any{
				"sop": str("Only the runs of this SOP."),
			}),
			method: forward[api.SopRunsParams](api.GrantSopsRead, api.MethodSopsRuns),
		},
	}
	return ts
}

// wrapped is forward for a method without params whose result is a bare array: MCP's structuredContent is an
// object, so the array goes under key.
func wrapped(grant, method, key string) router.Method[*Peer] {
	return router.Handle(grant, func(ctx context.Context, p *Peer, _ *struct{}) (any, error) {
		res, err := p.Call(ctx, method, json.RawMessage(`{}`))
		if err != nil {
			return nil, err
		}
		return map[string]any{key: res}, nil
	})
}

package api

// Memory methods (upstream/rpc-methods.md, Memory).
const (
	MethodMemoryList   = "memory/list"
	MethodMemorySearch = "memory/search"
	MethodMemoryGet    = "memory/get"
	MethodMemoryStore  = "memory/store"
	MethodMemoryDelete = "memory/delete"
)

// MemoryEntry is one stored memory as upstream puts it on the wire. Timestamp is the creation time (RFC 3339,
// the writer's offset); Score is null for list and get.
type MemoryEntry struct {
	ID           string   `json:"id"`
	Key          string   `json:"key"`
	Content      string   `json:"content"`
	Category     string   `json:"category"`
	Timestamp    string   `json:"timestamp"`
	SessionID    *string  `json:"session_id"`
	Score        *float64 `json:"score"`
	Namespace    string   `json:"namespace"`
	Importance   *float64 `json:"importance"`
	SupersededBy *string  `json:"superseded_by"`
	Kind         any      `json:"kind"`
	Pinned       bool     `json:"pinned"`
	TenantID     *string  `json:"tenant_id"`
	AgentAlias   *string  `json:"agent_alias"`
	AgentID      *string  `json:"agent_id"`
}

// MemoryListParams is memory/list. Agent names the agent whose memories are listed (ours: upstream accepts it
// and lists every agent's); empty lists every agent's.
type MemoryListParams struct {
	Category  string `json:"category,omitempty"`
	SessionID string `json:"session_id,omitempty"`
	Agent     string `json:"agent,omitempty"`
}

// MemorySearchParams is memory/search; Limit 0 means 10.
type MemorySearchParams struct {
	Query     string `json:"query"`
	Limit     int    `json:"limit,omitempty"`
	SessionID string `json:"session_id,omitempty"`
	Since     string `json:"since,omitempty"`
	Until     string `json:"until,omitempty"`
	Agent     string `json:"agent,omitempty"`
}

// MemoryEntriesResult answers memory/list and memory/search; contents are previews (200 bytes then "…").
type MemoryEntriesResult struct {
	Entries []MemoryEntry `json:"entries"`
	Count   int           `json:"count"`
}

// MemoryGetParams is memory/get.
type MemoryGetParams struct {
	Key   string `json:"key"`
	Agent string `json:"agent,omitempty"`
}

// MemoryGetResult answers memory/get with the whole entry.
type MemoryGetResult struct {
	Entry MemoryEntry `json:"entry"`
}

// MemoryStoreParams is memory/store; Category defaults to "user", Agent to the only enabled agent.
type MemoryStoreParams struct {
	Key       string `json:"key"`
	Content   string `json:"content"`
	Category  string `json:"category,omitempty"`
	SessionID string `json:"session_id,omitempty"`
	Agent     string `json:"agent,omitempty"`
}

// MemoryStoreResult answers memory/store.
type MemoryStoreResult struct {
	Key    string `json:"key"`
	Stored bool   `json:"stored"`
}

// MemoryDeleteParams is memory/delete.
type MemoryDeleteParams struct {
	Key   string `json:"key"`
	Agent string `json:"agent,omitempty"`
}

// MemoryDeleteResult answers memory/delete; Deleted is always true, as upstream.
type MemoryDeleteResult struct {
	Key     string `json:"key"`
	Deleted bool   `json:"deleted"`
}

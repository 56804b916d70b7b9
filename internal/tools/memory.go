package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/zeroclaw-go/zeroclaw/internal/api"
	"github.com/zeroclaw-go/zeroclaw/internal/memory"
)

// Memory tool names (upstream's).
const (
	NameMemoryStore  = "memory_store"
	NameMemoryRecall = "memory_recall"
	NameMemoryForget = "memory_forget"
	NameMemoryExport = "memory_export"
	NameMemoryPurge  = "memory_purge"
)

// memorySpecs are the memory tools, offered only when the turn has a memory (Env.Memory).
func buildMemorySpecs() []Spec {
	return []Spec{
		{
			Name:        NameMemoryStore,
			Description: "Save a fact, preference or note to long-term memory under a key. Category: 'core' (permanent, the default), 'daily' (session notes), 'conversation' (chat context) or any custom name.",
			Parameters:  json.RawMessage(`{"type":"object","properties":{"key":{"type":"string","description":"Unique key for this memory (e.g. 'user_lang', 'project_stack')"},"content":{"type":"string","description":"The information to remember"},"category":{"type":"string","description":"Memory category: 'core' (permanent), 'daily' (session), 'conversation' (chat), or a custom category name. Defaults to 'core'."}},"required":["key","content"]}`),
		},
		{
			Name:        NameMemoryRecall,
			Description: "Search long-term memory for facts, preferences or context, best matches first with their relevance. Omit the query (or pass '*') for the most recent memories; since/until bound the creation time.",
			Parameters:  json.RawMessage(`{"type":"object","properties":{"query":{"type":"string","description":"Keywords or phrase to search for. Omit or pass '*' for recent memories."},"limit":{"type":"integer","description":"Max results to return (default: 5)"},"since":{"type":"string","description":"Only memories created at or after this time (RFC 3339, e.g. 2025-03-01T00:00:00Z)"},"until":{"type":"string","description":"Only memories created at or before this time (RFC 3339)"},"search_mode":{"type":"string","enum":["bm25","embedding","hybrid"],"description":"Search strategy: bm25 (keyword), embedding (semantic) or hybrid. Only keyword search is available here: embedding is refused, hybrid is keyword search."}}}`),
		},
		{
			Name:        NameMemoryForget,
			Description: "Delete one of your memories by key, such as an outdated fact or sensitive data. Says whether it was found.",
			Parameters:  json.RawMessage(`{"type":"object","properties":{"key":{"type":"string","description":"The key of the memory to forget"}},"required":["key"]}`),
		},
		{
			Name:        NameMemoryExport,
			Description: "Export the memories you can see as a JSON array (data portability), optionally filtered by namespace, session, category and creation time.",
			Parameters:  json.RawMessage(`{"type":"object","properties":{"namespace":{"type":"string","description":"Filter by namespace."},"session_id":{"type":"string","description":"Filter by session ID."},"category":{"type":"string","description":"Filter by category: core, daily, conversation, or a custom name."},"since":{"type":"string","description":"RFC 3339 lower bound (inclusive) on created_at."},"until":{"type":"string","description":"RFC 3339 upper bound (inclusive) on created_at."}}}`),
		},
		{
			Name:        NameMemoryPurge,
			Description: "Delete all of your memories in a namespace or a session and say how many were deleted. This cannot be undone.",
			Parameters:  json.RawMessage(`{"type":"object","properties":{"namespace":{"type":"string","description":"The namespace to purge."},"session_id":{"type":"string","description":"The session ID to purge."}},"minProperties":1}`),
		},
	}
}

func isMemoryTool(name string) bool {
	switch name {
	case NameMemoryStore, NameMemoryRecall, NameMemoryForget, NameMemoryExport, NameMemoryPurge:
		return true
	}
	return false
}

// memoryWrite reports whether a memory tool changes stored memories (refused under readonly).
func memoryWrite(name string) bool {
	return name == NameMemoryStore || name == NameMemoryForget || name == NameMemoryPurge
}

type memoryArgs struct {
	Key        *string `json:"key"`
	Content    *string `json:"content"`
	Category   string  `json:"category"`
	Query      string  `json:"query"`
	Limit      *int    `json:"limit"`
	Since      string  `json:"since"`
	Until      string  `json:"until"`
	SearchMode string  `json:"search_mode"`
	Namespace  string  `json:"namespace"`
	SessionID  string  `json:"session_id"`
}

// parseMemory checks a memory call's arguments (also used to classify it).
func parseMemory(call Call) (memoryArgs, error) {
	var a memoryArgs
	if err := decodeArgs(call.Arguments, &a); err != nil {
		return a, fmt.Errorf("%s: %w", call.Name, err)
	}
	switch call.Name {
	case NameMemoryStore:
		if _, err := required(a.Key, "key"); err != nil {
			return a, fmt.Errorf("%s: %w", call.Name, err)
		}
		if _, err := required(a.Content, "content"); err != nil {
			return a, fmt.Errorf("%s: %w", call.Name, err)
		}
		if strings.TrimSpace(*a.Key) == "" {
			return a, fmt.Errorf("%s: %w: empty key", call.Name, errBadArguments)
		}
	case NameMemoryForget:
		if _, err := required(a.Key, "key"); err != nil {
			return a, fmt.Errorf("%s: %w", call.Name, err)
		}
	case NameMemoryPurge:
		if a.Namespace == "" && a.SessionID == "" {
			return a, fmt.Errorf("%s: %w: give namespace or session_id", call.Name, errBadArguments)
		}
	case NameMemoryRecall, NameMemoryExport:
		if err := checkWindow(a.Since, a.Until); err != nil {
			return a, fmt.Errorf("%s: %w", call.Name, err)
		}
		switch a.SearchMode {
		case "", "bm25", "hybrid":
		case "embedding":
			return a, fmt.Errorf("%s: search_mode \"embedding\" is not supported yet (no embedding provider): use bm25 or hybrid (keyword search)", call.Name)
		default:
			return a, fmt.Errorf("%s: %w: search_mode must be bm25, embedding or hybrid", call.Name, errBadArguments)
		}
		if a.Limit != nil && *a.Limit < 0 {
			return a, fmt.Errorf("%s: %w: limit must not be negative", call.Name, errBadArguments)
		}
	}
	return a, nil
}

func checkWindow(since, until string) error {
	var s, u time.Time
	var err error
	if since != "" {
		if s, err = time.Parse(time.RFC3339Nano, since); err != nil {
			return fmt.Errorf("Invalid 'since' date: %s. Expected RFC 3339 format, e.g. 2025-03-01T00:00:00Z", since)
		}
	}
	if until != "" {
		if u, err = time.Parse(time.RFC3339Nano, until); err != nil {
			return fmt.Errorf("Invalid 'until' date: %s. Expected RFC 3339 format, e.g. 2025-03-01T00:00:00Z", until)
		}
	}
	if since != "" && until != "" && !s.Before(u) {
		return fmt.Errorf("'since' must be before 'until'")
	}
	return nil
}

// MemoryAccess is what the principal a turn runs for may do with the memory tools, as the memory/* methods
// would let it: reads need memory:read, writes memory:write, and a principal that is not the owner sees and
// changes only the memories of the sessions it owns. The zero value is the owner's: everything the agent's
// memory holds.
type MemoryAccess struct {
	// Restricted marks a principal that is not the owner: the fields below apply.
	Restricted  bool
	Read, Write bool // the principal holds memory:read, memory:write
	// OwnsSession reports whether the stored session key is one of the principal's; nil: none is.
	OwnsSession func(ctx context.Context, sessionKey string) bool
	// SessionKey is stamped on the memories the principal stores (its session's), so they stay in its scope.
	SessionKey string
}

// visible reports whether e is in the principal's scope.
func (a MemoryAccess) visible(ctx context.Context, e memory.Entry) bool {
	if !a.Restricted {
		return true
	}
	return e.SessionID != nil && a.OwnsSession != nil && a.OwnsSession(ctx, *e.SessionID)
}

// Keeps is the recall filter of the principal's injected memory context: nil for the owner (keep all), none
// without memory:read, else those in its scope.
func (a MemoryAccess) Keeps(ctx context.Context) func(memory.Entry) bool {
	if !a.Restricted {
		return nil
	}
	return func(e memory.Entry) bool { return a.Read && a.visible(ctx, e) }
}

// filter keeps the entries in the principal's scope.
func (a MemoryAccess) filter(ctx context.Context, entries []memory.Entry) []memory.Entry {
	if !a.Restricted {
		return entries
	}
	kept := entries[:0]
	for _, e := range entries {
		if a.visible(ctx, e) {
			kept = append(kept, e)
		}
	}
	return kept
}

// refusal is the tool error of a call the principal's grants do not cover ("" : covered).
func (a MemoryAccess) refusal(name string) string {
	if !a.Restricted {
		return ""
	}
	if memoryWrite(name) && !a.Write {
		return fmt.Sprintf("%s: refused: the principal this turn runs for lacks the %s grant", name, api.GrantMemoryWrite)
	}
	if !memoryWrite(name) && !a.Read {
		return fmt.Sprintf("%s: refused: the principal this turn runs for lacks the %s grant", name, api.GrantMemoryRead)
	}
	return ""
}

func runMemory(ctx context.Context, env Env, call Call) Result {
	if env.Memory == nil {
		return errorf("%s: memory is not available to this turn", call.Name)
	}
	a, err := parseMemory(call)
	if err != nil {
		return errorf("%s", err)
	}
	acc := env.MemoryAccess
	if why := acc.refusal(call.Name); why != "" {
		return errorf("%s", why)
	}
	mem := env.Memory
	switch call.Name {
	case NameMemoryStore:
		session := ""
		if acc.Restricted {
			session = acc.SessionKey
		}
		if err := mem.Store(ctx, *a.Key, *a.Content, a.Category, session); err != nil {
			return errorf("Failed to store memory: %v", err)
		}
		return Result{Output: "Stored memory: " + *a.Key}
	case NameMemoryRecall:
		limit := 5
		if a.Limit != nil {
			limit = *a.Limit
		}
		fetch := limit
		if acc.Restricted && limit > 0 {
			fetch = max(limit*4, 20) // others' memories are dropped below: ask for more
		}
		entries, err := mem.Recall(ctx, a.Query, fetch, "", a.Since, a.Until)
		if err != nil {
			return errorf("Memory recall failed: %v", err)
		}
		entries = acc.filter(ctx, entries)
		if limit > 0 && len(entries) > limit {
			entries = entries[:limit]
		}
		if len(entries) == 0 {
			return Result{Output: "No memories found."}
		}
		var b strings.Builder
		fmt.Fprintf(&b, "Found %d memories:\n", len(entries))
		for _, e := range entries {
			score := ""
			if e.Score != nil {
				score = fmt.Sprintf(" [%.0f%%]", math.Round(*e.Score*100))
			}
			fmt.Fprintf(&b, "- [%s] %s: %s%s\n", e.Category, e.Key, e.Content, score)
		}
		return Result{Output: b.String()}
	case NameMemoryForget:
		if acc.Restricted {
			e, err := mem.Get(ctx, *a.Key)
			if err != nil {
				return errorf("Failed to forget memory: %v", err)
			}
			if e == nil || !acc.visible(ctx, *e) {
				return Result{Output: "No memory found with key: " + *a.Key}
			}
		}
		ok, err := mem.Forget(ctx, *a.Key)
		if err != nil {
			return errorf("Failed to forget memory: %v", err)
		}
		if ok {
			return Result{Output: "Forgot memory: " + *a.Key}
		}
		return Result{Output: "No memory found with key: " + *a.Key}
	case NameMemoryExport:
		entries, err := mem.List(ctx, memory.Filter{Category: a.Category, SessionID: a.SessionID, Namespace: a.Namespace,
			Since: a.Since, Until: a.Until})
		if err != nil {
			return errorf("Export failed: %v", err)
		}
		out, _ := json.MarshalIndent(acc.filter(ctx, entries), "", "  ")
		return Result{Output: string(out)}
	case NameMemoryPurge:
		var parts []string
		if acc.Restricted && a.Namespace != "" {
			return errorf("memory_purge: refused: a namespace holds other users' memories; only the owner may purge one (purge your session_id instead)")
		}
		if acc.Restricted && !acc.visible(ctx, memory.Entry{SessionID: &a.SessionID}) {
			return errorf("memory_purge: refused: session %s is not one of yours", a.SessionID)
		}
		if a.Namespace != "" {
			n, err := mem.PurgeNamespace(ctx, a.Namespace)
			if err != nil {
				return errorf("Failed to purge namespace: %v", err)
			}
			parts = append(parts, fmt.Sprintf("Purged %d memories from namespace '%s'", n, a.Namespace))
		}
		if a.SessionID != "" {
			n, err := mem.PurgeSession(ctx, a.SessionID)
			if err != nil {
				return errorf("Failed to purge session: %v", err)
			}
			parts = append(parts, fmt.Sprintf("Purged %d memories from session '%s'", n, a.SessionID))
		}
		return Result{Output: strings.Join(parts, "; ")}
	}
	return errorf("%s: unknown tool", call.Name)
}

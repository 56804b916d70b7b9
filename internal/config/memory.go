package config

import (
	"fmt"
	"strings"
)

// MemoryConfig is [memory]: the install-wide memory store and how turns use it (upstream/memory.md §8). Only
// the keys this runtime implements are fields; the other upstream keys are reported as not supported yet
// (see unsupportedMemoryKeys) and left in the file.
type MemoryConfig struct {
	Backend                   string  `toml:"backend" desc:"Memory store: sqlite (data/memory/brain.db), postgres.<alias> ([storage.postgres.<alias>]), markdown or none."`
	AutoSave                  bool    `toml:"auto_save" desc:"Save each user message of an agent turn as a conversation memory."`
	HygieneEnabled            bool    `toml:"hygiene_enabled" desc:"Delete memories older than their category's retention (at start and every 12 hours)."`
	ConversationRetentionDays int     `toml:"conversation_retention_days" desc:"Days conversation memories are kept; 0: forever."`
	ConversationMaxRows       int     `toml:"conversation_max_rows" desc:"Most auto-saved user messages (user_msg_<turn> conversation memories) kept per agent, the oldest pruned first (ours); 0: no cap."`
	DailyRetentionDays        int     `toml:"daily_retention_days" desc:"Days daily memories are kept; 0: forever."`
	CoreRetentionDays         int     `toml:"core_retention_days" desc:"Days core memories are kept; 0: forever."`
	SearchMode                string  `toml:"search_mode" enum:"bm25|embedding|hybrid" desc:"Recall ranking; without an embedding provider every mode is keyword (BM25) recall."`
	MinRelevanceScore         float64 `toml:"min_relevance_score" desc:"Recalled memories scoring below this (0..1) are not injected into turns."`
	EmbeddingProvider         string  `toml:"embedding_provider" desc:"Embedding provider for vector recall; only none is supported yet (keyword recall)."`
	DefaultNamespace          string  `toml:"default_namespace" desc:"Namespace stamped on stored memories."`
}

// DefaultConversationMaxRows is [memory] conversation_max_rows's default (ours): a turn a minute for a week. It
// bounds what a recall that includes conversation memories reads, whatever the number of turns ever taken.
const DefaultConversationMaxRows = 10_000

// DefaultMemory returns upstream's [memory] defaults (and ours for the keys upstream lacks).
func DefaultMemory() MemoryConfig {
	return MemoryConfig{Backend: "sqlite", AutoSave: true, HygieneEnabled: true, ConversationRetentionDays: 30,
		ConversationMaxRows: DefaultConversationMaxRows, SearchMode: "hybrid", MinRelevanceScore: 0.4, EmbeddingProvider: "none", DefaultNamespace: "default"}
}

// AgentMemoryConfig is agents.<alias>.memory.
type AgentMemoryConfig struct {
	Backend string `toml:"backend" desc:"The agent's memory backend kind: sqlite (default: the install's [memory] backend), postgres, markdown or none."`
}

// StorageConfig is [storage]: where the daemon's shared state lives, the install's disk budget (ours), and
// named database connections ([storage.postgres.<alias>]).
type StorageConfig struct {
	Backend      string                     `toml:"backend" desc:"Where cron jobs and their runs live: sqlite (data/cron/jobs.db, this install only) or postgres.<alias> ([storage.postgres.<alias>], shared by every daemon on that database, each run claimed by exactly one)."`
	ClaimTTLSecs int                        `toml:"claim_ttl_secs" desc:"With a postgres backend: seconds a daemon's claim on a running job lasts without being renewed; a daemon that dies loses its claims this long after, and another records the run interrupted."`
	MaxDiskBytes int64                      `toml:"max_disk_bytes" desc:"Disk budget of the data dir in bytes (ours): past it the daemon deletes what is prunable, oldest first (rotated log files), records each deletion in data/state/prunes.jsonl, and doctor warns when what remains is still over; sessions, config, secrets, cron and memory are never deleted for it. 0: no budget."`
	Postgres     map[string]PostgresStorage `toml:"postgres"`
}

// DefaultClaimTTLSecs is [storage] claim_ttl_secs's default.
const DefaultClaimTTLSecs = 30

// StorageBackend is [storage] backend's kind and alias: ("sqlite", "") by default, ("postgres", alias) for
// "postgres.<alias>".
func (s StorageConfig) StorageBackend() (kind, alias string) {
	if k, a, ok := strings.Cut(s.Backend, "."); ok && k == "postgres" {
		return "postgres", a
	}
	return "sqlite", ""
}

// PostgresStorage is storage.postgres.<alias>. DBURL is a secret (it may carry a password).
type PostgresStorage struct {
	DBURL  string `toml:"db_url" desc:"PostgreSQL connection URL (a secret)."`
	Schema string `toml:"schema" desc:"Schema holding the memories table."`
	Table  string `toml:"table" desc:"Name of the memories table."`
}

func (p *PostgresStorage) setDefaults() { p.Schema, p.Table = "public", "memories" }

// unsupportedMemoryKeys are upstream [memory] keys this runtime reads no value from yet. Each one set in a file
// gets its own warning instead of the generic unknown-key one.
var unsupportedMemoryKeys = map[string]string{
	"embedding_model": "embeddings", "embedding_dimensions": "embeddings", "embedding_api_key": "embeddings",
	"auto_reindex_on_identity_change": "embeddings", "vector_weight": "embeddings", "keyword_weight": "embeddings",
	"embedding_cache_size": "embeddings", "chunk_max_tokens": "embeddings", "archive_after_days": "archiving",
	"purge_after_days": "archiving", "response_cache_enabled": "the response cache",
	"response_cache_ttl_minutes": "the response cache", "response_cache_max_entries": "the response cache",
	"response_cache_hot_entries": "the response cache", "snapshot_enabled": "snapshots",
	"snapshot_on_hygiene": "snapshots", "auto_hydrate": "snapshots", "retrieval_stages": "retrieval stages",
	"candidate_multiplier": "reranking", "rerank_enabled": "reranking", "rerank_threshold": "reranking",
	"rerank_strategy": "reranking", "mmr_lambda": "reranking", "importance_weight": "reranking",
	"recency_weight": "reranking", "fts_early_return_score": "reranking", "conflict_threshold": "conflict detection",
	"conflict_supersede_enabled": "conflict detection", "dedup_on_write": "deduplication",
	"dedup_jaccard_threshold": "deduplication", "dedup_action": "deduplication", "core_max_rows": "eviction",
	"core_max_bytes": "eviction", "daily_max_rows": "eviction", "evict_order": "eviction",
	"pin_namespaces": "eviction", "pin_min_importance": "eviction", "audit_enabled": "the audit log",
	"audit_retention_days": "the audit log", "consolidation_extract_facts": "consolidation", "types": "memory types",
	"policy": "memory policies", "sqlite_open_timeout_secs": "open timeouts",
}

// memoryWarnings rewrites the unknown-key warning of each upstream [memory] key we do not support yet into one
// that says so; other warnings pass unchanged.
func memoryWarnings(warnings []string) []string {
	out := make([]string, 0, len(warnings))
	for _, w := range warnings {
		rest, ok := strings.CutPrefix(w, "config: unknown key memory.")
		if ok {
			key, line, _ := strings.Cut(rest, " at line ")
			top, _, _ := strings.Cut(key, ".")
			if what, known := unsupportedMemoryKeys[top]; known {
				w = fmt.Sprintf("config: memory.%s (line %s) is not supported yet (%s): ignored, kept in the file", key, line, what)
			}
		}
		out = append(out, w)
	}
	return out
}

// validateMemory checks [memory], [storage] and the agents' memory settings.
func validateMemory(cfg *Config, v *validator) []string {
	var warnings []string
	m := cfg.Memory
	kind, alias, dotted := strings.Cut(m.Backend, ".")
	switch {
	case m.Backend == "sqlite" || m.Backend == "none" || m.Backend == "markdown":
	case kind == "postgres" && dotted:
		if _, ok := cfg.Storage.Postgres[alias]; !ok {
			v.add(Path{"memory", "backend"}, "storage %q is not defined under [storage.postgres]", m.Backend)
		}
	case kind == "qdrant" || kind == "lucid":
		warnings = append(warnings, fmt.Sprintf("config: memory.backend = %q is not supported yet: memory is off (as backend = \"none\")", m.Backend))
	case m.Backend == "postgres":
		v.add(Path{"memory", "backend"}, "name the connection: \"postgres.<alias>\" with [storage.postgres.<alias>] db_url")
	default:
		v.add(Path{"memory", "backend"}, "must be sqlite, postgres.<alias>, markdown or none, got %q", m.Backend)
	}
	switch m.SearchMode {
	case "bm25", "hybrid", "embedding":
	default:
		v.add(Path{"memory", "search_mode"}, "must be bm25, embedding or hybrid, got %q", m.SearchMode)
	}
	if m.MinRelevanceScore < 0 || m.MinRelevanceScore > 1 {
		v.add(Path{"memory", "min_relevance_score"}, "must be between 0 and 1, got %g", m.MinRelevanceScore)
	}
	for _, f := range []struct {
		key string
		n   int
	}{{"conversation_retention_days", m.ConversationRetentionDays}, {"daily_retention_days", m.DailyRetentionDays},
		{"core_retention_days", m.CoreRetentionDays}, {"conversation_max_rows", m.ConversationMaxRows}} {
		if f.n < 0 {
			v.add(Path{"memory", f.key}, "must not be negative")
		}
	}
	if p := m.EmbeddingProvider; p != "" && p != "none" {
		warnings = append(warnings, fmt.Sprintf("config: memory.embedding_provider = %q is not supported yet: recall is keyword-only (BM25)", p))
	}
	switch kind, alias, dotted := strings.Cut(cfg.Storage.Backend, "."); {
	case cfg.Storage.Backend == "" || cfg.Storage.Backend == "sqlite":
	case kind == "postgres" && dotted:
		if _, ok := cfg.Storage.Postgres[alias]; !ok {
			v.add(Path{"storage", "backend"}, "storage %q is not defined under [storage.postgres]", cfg.Storage.Backend)
		}
	case cfg.Storage.Backend == "postgres":
		v.add(Path{"storage", "backend"}, "name the connection: \"postgres.<alias>\" with [storage.postgres.<alias>] db_url")
	default:
		v.add(Path{"storage", "backend"}, "must be sqlite or postgres.<alias>, got %q", cfg.Storage.Backend)
	}
	if n := cfg.Storage.ClaimTTLSecs; n < 2 || n > 3600 {
		v.add(Path{"storage", "claim_ttl_secs"}, "must be between 2 and 3600, got %d", n)
	}
	if cfg.Storage.MaxDiskBytes < 0 {
		v.add(Path{"storage", "max_disk_bytes"}, "must not be negative (0: no budget)")
	}
	for _, name := range sortedKeys(cfg.Storage.Postgres) {
		if cfg.Storage.Postgres[name].DBURL == "" {
			v.add(Path{"storage", "postgres", name, "db_url"}, "is required")
		}
	}
	for _, name := range sortedKeys(cfg.Agents) {
		a := cfg.Agents[name]
		switch a.Memory.Backend {
		case "", "sqlite", "postgres", "markdown", "none":
		case "qdrant", "lucid":
			warnings = append(warnings, fmt.Sprintf("config: agents.%s.memory.backend = %q is not supported yet: the agent has no memory", name, a.Memory.Backend))
		default:
			v.add(Path{"agents", name, "memory", "backend"}, "must be sqlite, postgres, markdown or none, got %q", a.Memory.Backend)
		}
		for _, other := range a.Workspace.ReadMemoryFrom {
			at := Path{"agents", name, "workspace", "read_memory_from"}
			switch o, ok := cfg.Agents[other]; {
			case other == name:
				v.add(at, "an agent cannot name itself")
			case !ok:
				v.add(at, "agent %q is not defined", other)
			case sharedKind(o.Memory.Backend) != sharedKind(a.Memory.Backend):
				v.add(at, "agent %q uses the %s memory backend, %q uses %s: both must use the same kind", other,
					sharedKind(o.Memory.Backend), name, sharedKind(a.Memory.Backend))
			}
		}
	}
	return warnings
}

// sharedKind is an agent's memory backend kind with the default spelled out.
func sharedKind(b string) string {
	if b == "" || b == "postgres" {
		return "sqlite" // both mean "the install-wide SQL store"
	}
	return b
}

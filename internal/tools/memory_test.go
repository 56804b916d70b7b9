package tools

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/zeroclaw-go/zeroclaw/internal/config"
	"github.com/zeroclaw-go/zeroclaw/internal/memory"
)

func memoryEnv(t *testing.T, level Level) Env {
	t.Helper()
	cfg := config.Default()
	dir := t.TempDir()
	m, err := memory.Open(t.Context(), memory.Options{DataDir: dir, Config: func() *config.Config { return cfg },
		Now:       func() time.Time { return time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC) },
		Workspace: func(*config.Config, string) string { return filepath.Join(dir, "ws") }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = m.Close() })
	h, err := m.For(t.Context(), "default")
	if err != nil {
		t.Fatal(err)
	}
	return Env{Workspace: dir, Policy: Policy{Level: level}, Memory: h}
}

func runTool(t *testing.T, env Env, name string, args map[string]any) Result {
	t.Helper()
	raw, _ := json.Marshal(args)
	return Execute(t.Context(), env, Call{ID: "c", Name: name, Arguments: raw})
}

// The memory tools' outputs are upstream's, word for word.
func TestMemoryTools(t *testing.T) {
	t.Parallel()
	env := memoryEnv(t, LevelSupervised)
	if r := runTool(t, env, NameMemoryStore, map[string]any{"key": "lang", "content": "Prefers Rust"}); r.IsError || r.Output != "Stored memory: lang" {
		t.Fatalf("store: %+v", r)
	}
	runTool(t, env, NameMemoryStore, map[string]any{"key": "note", "content": "Fixed a Rust bug", "category": "daily"})
	r := runTool(t, env, NameMemoryRecall, map[string]any{"query": "Rust"})
	if r.IsError || !strings.HasPrefix(r.Output, "Found 2 memories:\n") || !strings.Contains(r.Output, "- [core] lang: Prefers Rust [") ||
		!strings.HasSuffix(r.Output, "%]\n") {
		t.Fatalf("recall: %q", r.Output)
	}
	if r := runTool(t, env, NameMemoryRecall, map[string]any{"query": "Haskell"}); r.Output != "No memories found." {
		t.Fatalf("recall miss: %+v", r)
	}
	if r := runTool(t, env, NameMemoryRecall, map[string]any{"query": "x", "search_mode": "embedding"}); !r.IsError || !strings.Contains(r.Output, "not supported yet") {
		t.Fatalf("embedding mode: %+v", r)
	}
	if r := runTool(t, env, NameMemoryRecall, map[string]any{"since": "2026-02-01T00:00:00Z", "until": "2026-01-01T00:00:00Z"}); !r.IsError || !strings.Contains(r.Output, "'since' must be before 'until'") {
		t.Fatalf("window: %+v", r)
	}
	var exported []memory.Entry
	r = runTool(t, env, NameMemoryExport, map[string]any{"category": "core"})
	if err := json.Unmarshal([]byte(r.Output), &exported); err != nil || len(exported) != 1 || exported[0].Key != "lang" {
		t.Fatalf("export: %q %v", r.Output, err)
	}
	if r := runTool(t, env, NameMemoryForget, map[string]any{"key": "lang"}); r.Output != "Forgot memory: lang" {
		t.Fatalf("forget: %+v", r)
	}
	if r := runTool(t, env, NameMemoryForget, map[string]any{"key": "lang"}); r.IsError || r.Output != "No memory found with key: lang" {
		t.Fatalf("forget again: %+v", r)
	}
	if r := runTool(t, env, NameMemoryPurge, map[string]any{"namespace": "default"}); r.Output != "Purged 1 memories from namespace 'default'" {
		t.Fatalf("purge: %+v", r)
	}
	if r := runTool(t, env, NameMemoryPurge, map[string]any{}); !r.IsError {
		t.Fatalf("purge without a filter: %+v", r)
	}
}

// Under readonly the memory tools that write are refused; recall and export run.
func TestMemoryToolsReadonly(t *testing.T) {
	t.Parallel()
	env := memoryEnv(t, LevelReadOnly)
	for _, name := range []string{NameMemoryStore, NameMemoryForget, NameMemoryPurge} {
		args := map[string]any{"key": "k", "content": "c", "namespace": "default"}
		if r := runTool(t, env, name, args); !r.IsError || !strings.Contains(r.Output, "refused under the readonly profile") {
			t.Errorf("%s under readonly: %+v", name, r)
		}
	}
	for _, name := range []string{NameMemoryRecall, NameMemoryExport} {
		if r := runTool(t, env, name, map[string]any{}); r.IsError {
			t.Errorf("%s under readonly: %+v", name, r)
		}
	}
	if d := (Policy{Level: LevelSupervised}).Decide(Call{Name: NameMemoryStore, Arguments: json.RawMessage(`{"key":"k","content":"c"}`)}, ""); d.Verdict != Run {
		t.Fatalf("memory_store under supervised: %+v", d)
	}
}

package memory

import (
	"path/filepath"
	"strings"
	"testing"
)

// queryPlan returns SQLite's plan for query, one detail line per step.
func queryPlan(t *testing.T, db *SQLite, query string, args []any) []string {
	t.Helper()
	rows, err := db.r.QueryContext(t.Context(), "EXPLAIN QUERY PLAN "+query, args...)
	if err != nil {
		t.Fatalf("explain %s: %v", query, err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var id, parent, unused int
		var detail string
		if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
			t.Fatal(err)
		}
		out = append(out, detail)
	}
	return out
}

// The injection's recall leaves conversation memories out. On a store that holds little else (every turn
// auto-saves its message as one), what it reads must not grow with them: the check for any injectable memory
// and the LIKE fallback read the category index around the excluded category, never the whole table or the
// agent's every row.
func TestSQLiteInjectionRecallPlansSkipTheExcludedCategory(t *testing.T) {
	db, err := OpenSQLite(t.Context(), filepath.Join(t.TempDir(), "brain.db"), nowFunc)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	a, _ := db.EnsureAgent(t.Context(), "a")
	b, _ := db.EnsureAgent(t.Context(), "b")
	for _, q := range []Query{
		{Text: "go", Limit: RecallLimit, Agents: []string{a}, ExcludeCategory: CategoryConversation},
		{Text: "what about lisbon", Limit: RecallLimit, Agents: []string{a, b}, ExcludeCategory: CategoryConversation},
		{Text: "go", Limit: RecallLimit, ExcludeCategory: CategoryConversation},
	} {
		for name, sq := range map[string]func(Query) (string, []any){"candidates": candidatesSQL, "like": likeSQL} {
			query, args := sq(q)
			plan := queryPlan(t, db, query, args)
			joined := strings.Join(plan, " | ")
			usesCategory := false
			for _, step := range plan {
				if strings.HasPrefix(step, "SCAN m") || strings.Contains(step, "idx_memories_agent_id") {
					t.Errorf("%s query for %+v reads more than the injectable rows: %s", name, q, joined)
				}
				usesCategory = usesCategory || strings.Contains(step, "idx_memories_category")
			}
			if !usesCategory {
				t.Errorf("%s query for %+v does not use idx_memories_category: %s", name, q, joined)
			}
		}
	}
}

// The check for injectable memories changes no recall's result: a store of conversation memories, another
// agent's facts and a superseded fact injects nothing; one fact of the agent is found by FTS5 or, for a word
// inside a token, by the LIKE fallback.
func TestSQLiteInjectionRecallFindsOnlyInjectableRows(t *testing.T) {
	db, err := OpenSQLite(t.Context(), filepath.Join(t.TempDir(), "brain.db"), nowFunc)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx := t.Context()
	a, _ := db.EnsureAgent(ctx, "a")
	b, _ := db.EnsureAgent(ctx, "b")
	store := func(agent, key, content, category string) {
		t.Helper()
		if err := db.Store(ctx, agent, Record{Key: key, Content: content, Category: category, Now: nowFunc()}); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 30 {
		store(a, AutoSaveKey(strings.Repeat("t", i+1)), "go west", CategoryConversation)
	}
	store(b, "b_fact", "go west with b", CategoryCore)
	store(a, "old_fact", "go west long ago", CategoryCore)
	if _, err := db.w.ExecContext(ctx, "UPDATE memories SET superseded_by = 'x' WHERE key = 'old_fact'"); err != nil {
		t.Fatal(err)
	}
	recall := func(text string) []Entry {
		t.Helper()
		out, err := db.Recall(ctx, Query{Text: text, Limit: RecallLimit, Agents: []string{a}, ExcludeCategory: CategoryConversation})
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	if got := recall("go"); len(got) != 0 {
		t.Fatalf("recall over conversation, foreign and superseded memories = %+v, want none", got)
	}
	store(a, "road", "a gopher went west", "custom")
	got := recall("gopher")
	if len(got) != 1 || got[0].Key != "road" || got[0].Score == nil || *got[0].Score != 1 {
		t.Fatalf("FTS5 recall = %+v, want road scored 1", got)
	}
	got = recall("ophe")
	if len(got) != 1 || got[0].Key != "road" || got[0].Score == nil || *got[0].Score != 1 {
		t.Fatalf("LIKE recall = %+v, want road scored 1 (the fallback's score)", got)
	}
	// "go" as a token is only in excluded memories; as text it is inside "gopher": the fallback finds it.
	got = recall("go")
	if len(got) != 1 || got[0].Key != "road" || got[0].Score == nil || *got[0].Score != 1 {
		t.Fatalf("LIKE recall past excluded FTS5 matches = %+v, want road scored 1", got)
	}
}

// An agent's id is looked up once per process: later turns get it without a query (the reader pool is closed
// here to show it), and a new agent is still created.
func TestSQLiteEnsureAgentLooksAnAgentUpOnce(t *testing.T) {
	db, err := OpenSQLite(t.Context(), filepath.Join(t.TempDir(), "brain.db"), nowFunc)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	id, err := db.EnsureAgent(t.Context(), "a")
	if err != nil {
		t.Fatal(err)
	}
	var stored string
	if err := db.w.QueryRowContext(t.Context(), "SELECT id FROM agents WHERE alias = 'a'").Scan(&stored); err != nil || stored != id {
		t.Fatalf("agents row = %q, %v; want %q", stored, err, id)
	}
	if err := db.r.Close(); err != nil {
		t.Fatal(err)
	}
	again, err := db.EnsureAgent(t.Context(), "a")
	if err != nil || again != id {
		t.Fatalf("EnsureAgent again = %q, %v; want %q without a query", again, err, id)
	}
	if _, err := db.EnsureAgent(t.Context(), "b"); err == nil {
		t.Fatalf("EnsureAgent of a new agent with the reader pool closed succeeded: it did not look it up")
	}
}

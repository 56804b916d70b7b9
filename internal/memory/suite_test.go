package memory

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// fixedNow is the clock of the suite: a fixed instant, so stored times are deterministic.
var fixedNow = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

func nowFunc() time.Time { return fixedNow }

// backends opens each backend the suite runs against: SQLite always, PostgreSQL when ZEROCLAW_TEST_PG_DSN
// names a server (CI sets it; under CI=true its absence fails the test).
func backends(t *testing.T) map[string]func(t *testing.T) Backend {
	out := map[string]func(t *testing.T) Backend{
		"sqlite": func(t *testing.T) Backend {
			db, err := OpenSQLite(t.Context(), filepath.Join(t.TempDir(), "memory", "brain.db"), nowFunc)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = db.Close() })
			return db
		},
	}
	if pg := postgresFactory(t); pg != nil {
		out["postgres"] = pg
	}
	return out
}

func TestBackendSuite(t *testing.T) {
	for name, open := range backends(t) {
		t.Run(name, func(t *testing.T) {
			ctx := t.Context()
			b := open(t)
			a, err := b.EnsureAgent(ctx, "alpha")
			if err != nil {
				t.Fatal(err)
			}
			again, _ := b.EnsureAgent(ctx, "alpha")
			beta, _ := b.EnsureAgent(ctx, "beta")
			if a == "" || again != a || beta == a {
				t.Fatalf("agent ids: %q %q %q", a, again, beta)
			}
			store := func(agent, key, content, cat, sid string) {
				t.Helper()
				if err := b.Store(ctx, agent, Record{Key: key, Content: content, Category: cat, SessionID: sid, Now: fixedNow}); err != nil {
					t.Fatal(err)
				}
			}
			store(a, "user_name", "The user's name is Ada", CategoryCore, "")
			store(a, "pet", "Ada has a cat called Pixel", CategoryDaily, "s1")
			store(beta, "user_name", "Beta's user is called Bob", CategoryCore, "")
			store(a, "team", "works with the compiler team", "project", "")

			// Agent scoping: alpha recalls its own rows only.
			got, err := b.Recall(ctx, Query{Text: "name", Limit: 5, Agents: []string{a}})
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != 1 || got[0].Content != "The user's name is Ada" || got[0].Score == nil || *got[0].Score != 1 {
				t.Fatalf("alpha recall: %+v", got)
			}
			if got[0].AgentAlias == nil || *got[0].AgentAlias != "alpha" || got[0].Category != CategoryCore {
				t.Fatalf("alpha recall entry: %+v", got[0])
			}
			// Both agents: two rows with the key, best first, scores in [0,1].
			both, _ := b.Recall(ctx, Query{Text: "name called", Limit: 5, Agents: []string{a, beta}})
			if len(both) < 2 {
				t.Fatalf("cross-agent recall: %+v", both)
			}
			for _, e := range both {
				if e.Score == nil || *e.Score < 0 || *e.Score > 1 {
					t.Fatalf("score out of range: %+v", e)
				}
			}
			// Session scoping is strict.
			if s1, _ := b.Recall(ctx, Query{Text: "Ada", Limit: 5, Agents: []string{a}, SessionID: "s1"}); len(s1) != 1 || s1[0].Key != "pet" {
				t.Fatalf("session recall: %+v", s1)
			}
			// Upsert keeps one row per (agent, key).
			store(a, "user_name", "The user's name is Ada Lovelace", CategoryCore, "")
			e, _ := b.Get(ctx, "user_name", []string{a})
			if e == nil || e.Content != "The user's name is Ada Lovelace" {
				t.Fatalf("get after upsert: %+v", e)
			}
			if e, _ := b.Get(ctx, "user_name", []string{beta}); e == nil || e.Content != "Beta's user is called Bob" {
				t.Fatalf("beta's row changed: %+v", e)
			}
			// Categories: custom names are kept verbatim.
			if l, _ := b.List(ctx, Filter{Category: "project", Agents: []string{a}}); len(l) != 1 || l[0].Key != "team" {
				t.Fatalf("list project: %+v", l)
			}
			if l, _ := b.List(ctx, Filter{Agents: []string{a}}); len(l) != 3 {
				t.Fatalf("list alpha: %+v", l)
			}
			// Recent recall (empty query) lists newest first without scores.
			if r, _ := b.Recall(ctx, Query{Text: "", Limit: 10, Agents: []string{beta}}); len(r) != 1 || r[0].Score != nil {
				t.Fatalf("recent: %+v", r)
			}
			// Forget is per agent.
			if ok, _ := b.Forget(ctx, beta, "pet"); ok {
				t.Fatal("beta forgot alpha's pet")
			}
			if ok, _ := b.Forget(ctx, a, "pet"); !ok {
				t.Fatal("alpha could not forget its pet")
			}
			if n, _ := b.PurgeNamespace(ctx, a, "default"); n != 2 {
				t.Fatalf("purge namespace removed %d, want 2", n)
			}
			// Retention removes the rows created before the bound, across agents.
			store(beta, "user_msg_1", "old chat", CategoryConversation, "s2")
			if n, _ := b.DeleteBefore(ctx, CategoryConversation, fixedNow.Add(time.Hour)); n != 1 {
				t.Fatalf("retention removed %d, want 1", n)
			}
			if n, _ := b.DeleteBefore(ctx, CategoryCore, fixedNow.Add(-time.Hour)); n != 0 {
				t.Fatalf("retention removed %d newer rows", n)
			}
		})
	}
}

// An upstream brain.db, made with upstream's final DDL and rows as its code writes them (UUIDs, local-offset
// times, a kind column with JSON), opens as it is and is recalled.
func TestUpstreamBrainDB(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "memory", "brain.db")
	seed(t, path, upstreamV3DDL+`
INSERT INTO agents VALUES ('9b2f1c3e-3c4d-4e5f-8a9b-0c1d2e3f4a5b', 'default', '2026-01-05T09:00:00.123456789+00:00');
INSERT INTO memories (id, key, content, category, embedding, created_at, updated_at, session_id, namespace, importance,
  superseded_by, agent_id, kind, pinned, tenant_id)
VALUES ('0f8e7d6c-5b4a-4392-8170-6f5e4d3c2b1a', 'favourite_language', 'The user prefers Rust for systems work', 'core', NULL,
  '2026-01-05T10:15:30.250+01:00', '2026-01-05T10:15:30.250+01:00', NULL, 'default', 0.5, NULL,
  '9b2f1c3e-3c4d-4e5f-8a9b-0c1d2e3f4a5b', '{"semantic":"fact"}', 0, NULL);`)
	db, err := OpenSQLite(t.Context(), path, nowFunc)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	id, _ := db.EnsureAgent(t.Context(), "default")
	if id != "9b2f1c3e-3c4d-4e5f-8a9b-0c1d2e3f4a5b" {
		t.Fatalf("default agent id %q", id)
	}
	got, err := db.Recall(t.Context(), Query{Text: "which language does the user prefer?", Limit: 5, Agents: []string{id}})
	if err != nil || len(got) != 1 || got[0].Key != "favourite_language" || got[0].Timestamp != "2026-01-05T10:15:30.250+01:00" {
		t.Fatalf("recall: %+v %v", got, err)
	}
	if k, ok := got[0].Kind.(map[string]any); !ok || k["semantic"] != "fact" {
		t.Fatalf("kind %#v", got[0].Kind)
	}
	if _, err := os.Stat(path + ".backup-20260301T120000"); err == nil {
		t.Fatal("an agent-scoped database was backed up as if it needed the rebuild")
	}
	// Our writes go through upstream's triggers: the FTS index finds a new row.
	if err := db.Store(t.Context(), id, Record{Key: "editor", Content: "uses helix", Category: CategoryCore, Now: fixedNow}); err != nil {
		t.Fatal(err)
	}
	if got, _ := db.Recall(t.Context(), Query{Text: "helix", Limit: 5}); len(got) != 1 {
		t.Fatalf("new row not indexed: %+v", got)
	}
}

// A brain.db from before agent scoping (key UNIQUE, no agents table) is backed up and rebuilt: its rows
// belong to the default agent and stay searchable.
func TestUpstreamPreAgentBrainDB(t *testing.T) {
	path := filepath.Join(t.TempDir(), "memory", "brain.db")
	seed(t, path, `
CREATE TABLE memories (id TEXT PRIMARY KEY, key TEXT NOT NULL UNIQUE, content TEXT NOT NULL,
  category TEXT NOT NULL DEFAULT 'core', embedding BLOB, created_at TEXT NOT NULL, updated_at TEXT NOT NULL,
  session_id TEXT, namespace TEXT DEFAULT 'default', importance REAL DEFAULT 0.5, superseded_by TEXT);
CREATE VIRTUAL TABLE memories_fts USING fts5(key, content, content=memories, content_rowid=rowid);
CREATE TRIGGER memories_ai AFTER INSERT ON memories BEGIN
  INSERT INTO memories_fts(rowid, key, content) VALUES (new.rowid, new.key, new.content); END;
INSERT INTO memories (id, key, content, category, created_at, updated_at, session_id)
VALUES ('11111111-2222-4333-8444-555555555555', 'home_city', 'Lives in Lisbon', 'core',
  '2025-11-02T08:00:00+00:00', '2025-11-02T08:00:00+00:00', 'telegram:chat 42');`)
	db, err := OpenSQLite(t.Context(), path, nowFunc)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := os.Stat(path + ".backup-20260301T120000"); err != nil {
		t.Fatalf("no backup before the rebuild: %v", err)
	}
	def, _ := db.EnsureAgent(t.Context(), "default")
	got, err := db.Recall(t.Context(), Query{Text: "Lisbon", Limit: 5, Agents: []string{def}})
	if err != nil || len(got) != 1 || got[0].SessionID == nil || *got[0].SessionID != "telegram_chat_42" {
		t.Fatalf("recall after rebuild: %+v %v", got, err)
	}
	scoped, err := db.agentScoped(t.Context())
	if err != nil || !scoped {
		t.Fatalf("table not agent-scoped after open: %v", err)
	}
	cols, _ := db.columns(t.Context())
	for _, c := range []string{"kind", "pinned", "tenant_id", "agent_id"} {
		if _, ok := cols[c]; !ok {
			t.Fatalf("column %s missing: %v", c, cols)
		}
	}
}

// The schema a fresh open creates is upstream's, object for object.
func TestSQLiteSchemaObjects(t *testing.T) {
	db, err := OpenSQLite(t.Context(), filepath.Join(t.TempDir(), "brain.db"), nowFunc)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rows, err := db.r.QueryContext(t.Context(), "SELECT type || ' ' || name FROM sqlite_master WHERE name NOT LIKE 'sqlite_%' AND name NOT LIKE 'memories_fts_%' ORDER BY 1")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for rows.Next() {
		var s string
		_ = rows.Scan(&s)
		got = append(got, s)
	}
	want := []string{"index idx_cache_accessed", "index idx_memories_agent_id", "index idx_memories_category",
		"index idx_memories_key", "index idx_memories_namespace", "index idx_memories_namespace_category",
		"index idx_memories_session", "table agents", "table embedding_cache", "table memories", "table memories_fts",
		"table memory_meta", "table schema_version", "trigger memories_ad", "trigger memories_ai", "trigger memories_au"}
	if !slices.Equal(got, want) {
		t.Fatalf("schema objects\n got %q\nwant %q", got, want)
	}
	for _, p := range []struct{ name, want string }{{"journal_mode", "wal"}, {"synchronous", "1"}, {"foreign_keys", "1"},
		{"cache_size", "-2000"}, {"temp_store", "2"}, {"mmap_size", "8388608"}} {
		var v string
		if err := db.w.QueryRowContext(t.Context(), "PRAGMA "+p.name).Scan(&v); err != nil || v != p.want {
			t.Errorf("pragma %s = %q (%v), want %q", p.name, v, err, p.want)
		}
	}
}

// upstreamV3DDL is the schema upstream leaves after open (init_schema, the V3 rebuild, init_schema again).
const upstreamV3DDL = `
CREATE TABLE agents (id TEXT PRIMARY KEY, alias TEXT NOT NULL UNIQUE, created_at TEXT NOT NULL);
CREATE TABLE memories (id TEXT PRIMARY KEY, key TEXT NOT NULL, content TEXT NOT NULL,
  category TEXT NOT NULL DEFAULT 'core', embedding BLOB, created_at TEXT NOT NULL, updated_at TEXT NOT NULL,
  session_id TEXT, namespace TEXT DEFAULT 'default', importance REAL DEFAULT 0.5, superseded_by TEXT,
  agent_id TEXT NOT NULL REFERENCES agents(id), UNIQUE (agent_id, key));
ALTER TABLE memories ADD COLUMN kind TEXT;
ALTER TABLE memories ADD COLUMN pinned INTEGER NOT NULL DEFAULT 0;
ALTER TABLE memories ADD COLUMN tenant_id TEXT;
CREATE INDEX idx_memories_category ON memories(category);
CREATE INDEX idx_memories_key ON memories(key);
CREATE INDEX idx_memories_session ON memories(session_id);
CREATE INDEX idx_memories_namespace ON memories(namespace);
CREATE INDEX idx_memories_agent_id ON memories(agent_id);
CREATE INDEX idx_memories_namespace_category ON memories(namespace, category);
CREATE VIRTUAL TABLE memories_fts USING fts5(key, content, content=memories, content_rowid=rowid);
CREATE TRIGGER memories_ai AFTER INSERT ON memories BEGIN
  INSERT INTO memories_fts(rowid, key, content) VALUES (new.rowid, new.key, new.content); END;
CREATE TRIGGER memories_ad AFTER DELETE ON memories BEGIN
  INSERT INTO memories_fts(memories_fts, rowid, key, content) VALUES ('delete', old.rowid, old.key, old.content); END;
CREATE TRIGGER memories_au AFTER UPDATE ON memories BEGIN
  INSERT INTO memories_fts(memories_fts, rowid, key, content) VALUES ('delete', old.rowid, old.key, old.content);
  INSERT INTO memories_fts(rowid, key, content) VALUES (new.rowid, new.key, new.content); END;
CREATE TABLE embedding_cache (content_hash TEXT PRIMARY KEY, embedding BLOB NOT NULL, created_at TEXT NOT NULL, accessed_at TEXT NOT NULL);
CREATE INDEX idx_cache_accessed ON embedding_cache(accessed_at);
CREATE TABLE memory_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE schema_version (component TEXT PRIMARY KEY, version INTEGER NOT NULL, applied_at TEXT NOT NULL);
INSERT INTO schema_version VALUES ('memories', 1, '2026-01-05T09:00:00+00:00');`

// seed writes a database with the given SQL through a plain connection (what an upstream daemon left).
func seed(t *testing.T, path, ddl string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	db, err := openPlain(path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.ExecContext(context.Background(), ddl); err != nil {
		t.Fatalf("seed: %v", err)
	}
}

// A term matched by half of the rows or more weighs nothing in BM25 (FTS5 clamps its IDF), so recall leaves it
// out of the ranking: the rows ranked first, and their scores, are those of upstream's query over every term;
// the remaining places go to rows only the common term matches, with their near-zero scores.
func TestSQLiteRecallCommonTermRanksAsUpstream(t *testing.T) {
	db, err := OpenSQLite(t.Context(), filepath.Join(t.TempDir(), "brain.db"), nowFunc)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx := t.Context()
	a, _ := db.EnsureAgent(ctx, "a")
	contents := []string{"about lisbon trams", "about lisbon and porto lisbon", "notes about a lisbon cafe"}
	for i := range 27 {
		contents = append(contents, fmt.Sprintf("note %d about the garden", i))
	}
	for i := range 10 {
		contents = append(contents, fmt.Sprintf("unrelated entry %d", i))
	}
	for i, c := range contents {
		if err := db.Store(ctx, a, Record{Key: fmt.Sprintf("k%02d", i), Content: c, Category: CategoryCore, Now: fixedNow}); err != nil {
			t.Fatal(err)
		}
	}
	weighty, zero, err := db.splitByWeight(ctx, ftsTerms("about lisbon"))
	if err != nil || !slices.Equal(weighty, []string{`"lisbon"`}) || !slices.Equal(zero, []string{`"about"`}) {
		t.Fatalf("split: %q %q %v", weighty, zero, err)
	}
	// Upstream's ranking: BM25 over both terms.
	rows, err := db.r.QueryContext(ctx, `SELECT m.key, -bm25(memories_fts) s FROM memories_fts f JOIN memories m ON m.rowid = f.rowid
		WHERE memories_fts MATCH ? ORDER BY bm25(memories_fts) LIMIT 3`, FTSQuery("about lisbon"))
	if err != nil {
		t.Fatal(err)
	}
	var wantKeys []string
	var wantScores []float64
	for rows.Next() {
		var k string
		var s float64
		_ = rows.Scan(&k, &s)
		wantKeys, wantScores = append(wantKeys, k), append(wantScores, s)
	}
	rows.Close()
	got, err := db.Recall(ctx, Query{Text: "about lisbon", Limit: 5, Agents: []string{a}})
	if err != nil || len(got) != 5 {
		t.Fatalf("recall: %+v %v", got, err)
	}
	for i, k := range wantKeys {
		if got[i].Key != k || math.Abs(*got[i].Score-wantScores[i]/wantScores[0]) > 1e-4 {
			t.Fatalf("rank %d: got %s %.6f, upstream %s %.6f", i, got[i].Key, *got[i].Score, k, wantScores[i]/wantScores[0])
		}
	}
	for _, e := range got[3:] {
		if !strings.Contains(e.Content, "about the garden") || *e.Score > 1e-4 {
			t.Fatalf("fill: %+v score %v", e, *e.Score)
		}
	}
}

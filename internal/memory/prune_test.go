package memory

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zeroclaw-go/zeroclaw/internal/config"
	"github.com/zeroclaw-go/zeroclaw/internal/store"
)

// PruneAutoSaved deletes one agent's oldest auto-saved conversation memories beyond the newest keep, at most a
// batch at a time, and nothing else: not another agent's, not a conversation memory the agent stored under its
// own key, not a fact.
func TestBackendPruneAutoSaved(t *testing.T) {
	for name, open := range backends(t) {
		t.Run(name, func(t *testing.T) {
			ctx := t.Context()
			b := open(t)
			a, _ := b.EnsureAgent(ctx, "alpha")
			other, _ := b.EnsureAgent(ctx, "beta")
			for i := range 10 {
				at := fixedNow.Add(time.Duration(i) * time.Minute)
				for _, agent := range []string{a, other} {
					if err := b.Store(ctx, agent, Record{Key: AutoSaveKey(fmt.Sprintf("t%02d", i)), Content: fmt.Sprintf("turn %d said hello", i),
						Category: CategoryConversation, SessionID: "rpc_s1", Now: at}); err != nil {
						t.Fatal(err)
					}
				}
			}
			for _, r := range []Record{{Key: "user_msgbox", Content: "hello from a look-alike key", Category: CategoryConversation},
				{Key: "chat_summary", Content: "hello, a conversation memory stored by hand", Category: CategoryConversation},
				{Key: "user_msg_fact", Content: "hello, a fact whose key looks auto-saved", Category: CategoryCore}} {
				r.Now = fixedNow.Add(-time.Hour) // older than every auto-saved row
				if err := b.Store(ctx, a, r); err != nil {
					t.Fatal(err)
				}
			}
			if n, err := b.PruneAutoSaved(ctx, a, 4, 3); err != nil || n != 3 {
				t.Fatalf("first batch: %d, %v; want 3 (the batch)", n, err)
			}
			if n, err := b.PruneAutoSaved(ctx, a, 4, 100); err != nil || n != 3 {
				t.Fatalf("second batch: %d, %v; want the 3 left beyond 4", n, err)
			}
			if n, err := b.PruneAutoSaved(ctx, a, 4, 100); err != nil || n != 0 {
				t.Fatalf("at the cap: %d, %v; want 0", n, err)
			}
			keys := func(agent string) []string {
				l, err := b.List(ctx, Filter{Agents: []string{agent}})
				if err != nil {
					t.Fatal(err)
				}
				var out []string
				for _, e := range l {
					out = append(out, e.Key)
				}
				slices.Sort(out)
				return out
			}
			want := []string{"chat_summary", "user_msg_fact", "user_msg_t06", "user_msg_t07", "user_msg_t08", "user_msg_t09", "user_msgbox"}
			if got := keys(a); !slices.Equal(got, want) {
				t.Fatalf("alpha keeps %q, want %q (the newest 4 auto-saved and every other row)", got, want)
			}
			if got := keys(other); len(got) != 10 {
				t.Fatalf("beta's rows were touched: %q", got)
			}
			// What was pruned is gone from recall too (the full-text index follows the table).
			got, err := b.Recall(ctx, Query{Text: "said", Limit: 50, Agents: []string{a}})
			if err != nil || len(got) != 4 {
				t.Fatalf("recall after the prune: %d rows, %v; want the 4 kept", len(got), err)
			}
		})
	}
}

// A manager with [memory] conversation_max_rows keeps each agent's auto-saved rows at most one step over the
// cap, whatever the number of turns, oldest pruned first, and records every prune (OnPrune); 0 keeps them all.
func TestAutoSaveCapPrunesOldestAndRecords(t *testing.T) {
	cases := map[string]func(c *config.Config){"sqlite": nil}
	if dsn := pgDSN(t); dsn != "" {
		schema := pgSchema(t, dsn)
		cases["postgres"] = func(c *config.Config) {
			c.Memory.Backend = "postgres.shared"
			c.Storage.Postgres = map[string]config.PostgresStorage{"shared": {DBURL: dsn, Schema: schema, Table: "memories"}}
		}
	}
	for name, backend := range cases {
		t.Run(name, func(t *testing.T) {
			const maxRows = 32 // a step of 3 saves
			var mu sync.Mutex
			var records []store.Prune
			now := fixedNow
			cfg := testConfig(func(c *config.Config) {
				if backend != nil {
					backend(c)
				}
				c.Memory.ConversationMaxRows = maxRows
				c.Memory.HygieneEnabled = false
			})
			m, err := Open(t.Context(), Options{DataDir: t.TempDir(), Config: cfg, Now: func() time.Time { return now },
				Workspace: func(*config.Config, string) string { return t.TempDir() },
				OnPrune:   func(p store.Prune) { mu.Lock(); records = append(records, p); mu.Unlock() }})
			if err != nil {
				t.Fatal(err)
			}
			defer m.Close()
			h, err := m.For(t.Context(), "default")
			if err != nil {
				t.Fatal(err)
			}
			if err := h.Store(t.Context(), "user_name", "The user's name is Ada", "", ""); err != nil {
				t.Fatal(err)
			}
			count := func() []Entry {
				m.prunes.Wait()
				l, err := h.List(t.Context(), Filter{Category: CategoryConversation})
				if err != nil {
					t.Fatal(err)
				}
				return l
			}
			const turns = 200
			for i := range turns {
				now = now.Add(time.Second)
				if err := m.AutoSave(t.Context(), h, fmt.Sprintf("turn%04d", i), "rpc_s1", fmt.Sprintf("message %d", i)); err != nil {
					t.Fatal(err)
				}
				if n := len(count()); n > maxRows+pruneStep(maxRows) {
					t.Fatalf("after %d turns %d auto-saved rows, past the cap %d and its step", i+1, n, maxRows)
				}
			}
			l := count()
			if len(l) < maxRows {
				t.Fatalf("%d rows kept, want at least the cap %d", len(l), maxRows)
			}
			for _, e := range l { // the newest are the ones kept
				var i int
				if _, err := fmt.Sscanf(e.Content, "message %d", &i); err != nil || i < turns-len(l) {
					t.Fatalf("kept %q among %d rows: not one of the newest", e.Content, len(l))
				}
			}
			if e, _ := h.Get(t.Context(), "user_name"); e == nil {
				t.Fatal("a fact was pruned")
			}
			mu.Lock()
			pruned := 0
			for _, r := range records {
				if r.Store != "memory" || r.Agent != "default" || r.Rows <= 0 || !strings.Contains(r.Reason, "conversation_max_rows = 32") || r.At.IsZero() {
					t.Fatalf("prune record %+v", r)
				}
				pruned += r.Rows
			}
			mu.Unlock()
			if pruned != turns-len(l) {
				t.Fatalf("records say %d rows pruned, %d are gone", pruned, turns-len(l))
			}

			// 0 is no cap: nothing more is pruned.
			cfg().Memory.ConversationMaxRows = 0
			for i := range 10 {
				if err := m.AutoSave(t.Context(), h, fmt.Sprintf("uncapped%d", i), "rpc_s1", "more"); err != nil {
					t.Fatal(err)
				}
			}
			if n := len(count()); n != len(l)+10 {
				t.Fatalf("uncapped: %d rows, want %d", n, len(l)+10)
			}
		})
	}
}

// A store that kept every turn before the cap existed is cut back at the first auto-save after start, in
// batches of pruneBatch, recorded once.
func TestAutoSaveCapCutsABacklog(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "memory", "brain.db")
	db, err := OpenSQLite(t.Context(), path, nowFunc)
	if err != nil {
		t.Fatal(err)
	}
	a, _ := db.EnsureAgent(t.Context(), "default")
	seedAutoSaved(t, db, a, 2500)
	_ = db.Close()
	var records []store.Prune
	m, err := Open(t.Context(), Options{DataDir: dir, Config: testConfig(func(c *config.Config) { c.Memory.ConversationMaxRows = 100 }),
		Now: nowFunc, Workspace: func(*config.Config, string) string { return t.TempDir() },
		OnPrune: func(p store.Prune) { records = append(records, p) }})
	if err != nil {
		t.Fatal(err)
	}
	h, _ := m.For(t.Context(), "default")
	if err := m.AutoSave(t.Context(), h, "next", "rpc_s1", "the first turn after the upgrade"); err != nil {
		t.Fatal(err)
	}
	m.prunes.Wait()
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	if len(records) != 1 || records[0].Rows != 2401 {
		t.Fatalf("records %+v, want one of 2401 rows (2,501 down to 100)", records)
	}
	db, err = OpenSQLite(t.Context(), path, nowFunc)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	l, _ := db.List(t.Context(), Filter{Category: CategoryConversation, Agents: []string{a}})
	if len(l) != 100 || !slices.ContainsFunc(l, func(e Entry) bool { return e.Key == "user_msg_next" }) {
		t.Fatalf("%d rows after the prune, want 100 with the newest", len(l))
	}
}

// seedAutoSaved inserts n auto-saved conversation rows of agent in one transaction, oldest first.
func seedAutoSaved(tb testing.TB, db *SQLite, agent string, n int) {
	tb.Helper()
	tx, err := db.w.BeginTx(context.Background(), nil)
	if err != nil {
		tb.Fatal(err)
	}
	for i := range n {
		w1, w2 := benchWords[i%len(benchWords)], benchWords[(i/7)%len(benchWords)]
		ts := stamp(fixedNow.Add(time.Duration(i-n) * time.Second))
		if _, err := tx.Exec(`INSERT INTO memories (id, key, content, category, created_at, updated_at, namespace, agent_id, session_id)
			VALUES (?, ?, ?, 'conversation', ?, ?, 'default', ?, 'rpc_s1')`, newUUID(), AutoSaveKey(fmt.Sprintf("old%06d", i)),
			fmt.Sprintf("what do you think about %s and %s today", w1, w2), ts, ts, agent); err != nil {
			tb.Fatal(err)
		}
	}
	if err := tx.Commit(); err != nil {
		tb.Fatal(err)
	}
}

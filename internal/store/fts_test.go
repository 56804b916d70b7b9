package store

import (
	"database/sql"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

func listKeys(t *testing.T, s *ChatStore, q string) []string {
	t.Helper()
	metas, err := s.List(t.Context(), q, 0)
	if err != nil {
		t.Fatalf("List(%q): %v", q, err)
	}
	keys := make([]string, len(metas))
	for i, m := range metas {
		keys[i] = m.Key
	}
	return keys
}

func seedSearch(t *testing.T) *ChatStore {
	t.Helper()
	s, _ := openTestChat(t)
	mustAppend(t, s, "ops", "user", "please deploy the kubernetes cluster", t0)
	mustAppend(t, s, "ops", "assistant", "deploying now (AND watching) the \"rollout\"", t0.Add(time.Second))
	mustAppend(t, s, "kitchen", "user", "how do I bake a cake?", t0.Add(2*time.Second))
	mustAppend(t, s, "intl", "user", "un café crème, s'il vous plaît — 日本語 ok", t0.Add(3*time.Second))
	return s
}

func TestListOrderAndSearch(t *testing.T) {
	s := seedSearch(t)

	if got, want := listKeys(t, s, ""), []string{"intl", "kitchen", "ops"}; !slices.Equal(got, want) {
		t.Fatalf("List() = %v, want newest first %v", got, want)
	}
	metas, err := s.List(t.Context(), "   ", 2)
	if err != nil || len(metas) != 2 {
		t.Fatalf("List limit 2 = %d rows, %v", len(metas), err)
	}
	// Activity moves a session to the front.
	mustAppend(t, s, "ops", "user", "status?", t0.Add(time.Hour))
	if got := listKeys(t, s, ""); got[0] != "ops" {
		t.Fatalf("after new activity, List()[0] = %q, want ops", got[0])
	}

	tests := []struct {
		q    string
		want []string
	}{
		{"kubernetes", []string{"ops"}},
		{"KUBERNETES", []string{"ops"}},
		{"deploy cluster", []string{"ops"}},
		{"deploy cake", nil}, // all words must occur in one message
		{"depl*", []string{"ops"}},
		{"cake", []string{"kitchen"}},
		{"café", []string{"intl"}},
		{"日本語", []string{"intl"}},
		{"rollout", []string{"ops"}},
		{"absent", nil},
	}
	for _, tc := range tests {
		if got := listKeys(t, s, tc.q); !slices.Equal(got, tc.want) {
			t.Errorf("List(%q) = %v, want %v", tc.q, got, tc.want)
		}
	}
}

// TestSearchHostileQueries feeds FTS5 syntax and junk as user input: none may error, and a real word next to
// the junk must still be found.
func TestSearchHostileQueries(t *testing.T) {
	s := seedSearch(t)
	hostile := []string{
		`"`, `""`, `"""`, `'`, `AND`, `OR`, `NOT`, `AND OR NOT`, `*`, `**`, `(`, `)`, `()`, `(((`,
		`NEAR(`, `NEAR(a b, 2)`, `content:`, `session_key:ops`, `{content}: x`, `^`, `-`, `+`, `:`,
		"\x00", "\xff\xfe", "😀", `a"b`, `\`, `%`, `_`, `;DROP TABLE sessions;--`, strings.Repeat("x ", 500),
	}
	for _, junk := range hostile {
		if _, err := s.List(t.Context(), junk, 10); err != nil {
			t.Errorf("List(%q): %v", junk, err)
		}
		got := listKeys(t, s, "kubernetes "+junk)
		// Junk that still contains a searchable word narrows the match; junk without one leaves it intact.
		if ftsQuery(junk) == "" && !slices.Equal(got, []string{"ops"}) {
			t.Errorf("List(%q) = %v, want [ops]", "kubernetes "+junk, got)
		}
	}
	for _, q := range []string{`"deploy`, `deploy"`, `(deploy)`, `deploying AND`, `^deploy`} {
		if got := listKeys(t, s, q); !slices.Equal(got, []string{"ops"}) {
			t.Errorf("List(%q) = %v, want [ops]", q, got)
		}
	}
	// Nothing searchable matches nothing, rather than everything.
	if got := listKeys(t, s, `* ( ) "`); len(got) != 0 {
		t.Errorf("punctuation-only query matched %v", got)
	}
	// The store still works.
	mustAppend(t, s, "ops", "user", "still fine", t0)
}

func FuzzFTSQuery(f *testing.F) {
	for _, seed := range []string{"", "hello", `"`, "a AND b", "x*", "(a OR b)", "col:x", "\x00", "日本 語", `NEAR("a" "b")`} {
		f.Add(seed)
	}
	p := filepath.Join(f.TempDir(), "fuzz.db")
	s, err := OpenChat(f.Context(), p)
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { _ = s.Close() })
	if _, err := s.Append(f.Context(), "k", "user", "hello world", t0); err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, q string) {
		if _, err := s.List(t.Context(), q, 5); err != nil {
			t.Fatalf("List(%q): %v", q, err)
		}
		// "hello" plus anything still finds the session when the extra words are not searchable.
		if ftsQuery(q) == "" {
			metas, err := s.List(t.Context(), "hello "+q, 5)
			if err != nil || len(metas) != 1 {
				t.Fatalf("List(hello %q) = %d, %v", q, len(metas), err)
			}
		}
	})
}

func TestDeleteIdempotentAndRemovesFTSRows(t *testing.T) {
	s := seedSearch(t)
	ctx := t.Context()
	if err := s.Delete(ctx, "ops"); err != nil {
		t.Fatal(err)
	}
	if err := s.Delete(ctx, "ops"); err != nil {
		t.Fatalf("second Delete: %v", err)
	}
	if err := s.Delete(ctx, "never-existed"); err != nil {
		t.Fatalf("Delete(unknown): %v", err)
	}
	if got := listKeys(t, s, "kubernetes"); len(got) != 0 {
		t.Fatalf("search after delete = %v", got)
	}
	var n int
	if err := s.d.r.QueryRowContext(ctx, "SELECT COUNT(*) FROM sessions_fts WHERE sessions_fts MATCH 'kubernetes OR deploying'").Scan(&n); err != nil || n != 0 {
		t.Fatalf("FTS rows left for deleted session: %d, %v", n, err)
	}
	if err := s.d.r.QueryRowContext(ctx, "SELECT COUNT(*) FROM sessions WHERE session_key = 'ops'").Scan(&n); err != nil || n != 0 {
		t.Fatalf("message rows left: %d, %v", n, err)
	}
	if _, err := s.Meta(ctx, "ops"); err == nil {
		t.Fatal("Meta after Delete must fail")
	}
	assertIntegrity(t, s.d.w)
	// Other sessions are untouched and the key can be reused from index 0.
	if got := listKeys(t, s, "cake"); !slices.Equal(got, []string{"kitchen"}) {
		t.Fatalf("other session lost: %v", got)
	}
	if idx := mustAppend(t, s, "ops", "user", "new life", t0); idx != 0 {
		t.Fatalf("reused key index = %d, want 0", idx)
	}
}

// ListAttributed leaves out rows with neither an agent nor a channel (upstream's session/list), before the limit
// is applied, and reports channel_id.
func TestListAttributed(t *testing.T) {
	s, p := openTestChat(t)
	ctx := t.Context()
	if _, _, err := s.EnsureSession(ctx, "agent_row", "default", "", t0); err != nil {
		t.Fatal(err)
	}
	mustAppend(t, s, "channel_row", "user", "hi from telegram", t0.Add(time.Second))
	mustAppend(t, s, "orphan", "user", "hi from nowhere", t0.Add(2*time.Second))
	db, err := sql.Open("sqlite", p)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(`UPDATE session_metadata SET channel_id = 'telegram' WHERE session_key = 'channel_row'`); err != nil {
		t.Fatal(err)
	}
	metas, err := s.ListAttributed(ctx, "", 2)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, m := range metas {
		got = append(got, m.Key+"/"+m.AgentAlias+"/"+m.ChannelID)
	}
	if want := []string{"channel_row//telegram", "agent_row/default/"}; !slices.Equal(got, want) {
		t.Fatalf("ListAttributed = %q, want %q", got, want)
	}
	if metas, _ = s.ListAttributed(ctx, "hi", 0); len(metas) != 1 || metas[0].Key != "channel_row" {
		t.Fatalf("ListAttributed with a query = %+v", metas)
	}
	if keys := listKeys(t, s, ""); len(keys) != 3 {
		t.Fatalf("List still lists every row: %q", keys)
	}
}

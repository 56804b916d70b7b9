package memory

import (
	"errors"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zeroclaw-go/zeroclaw/internal/config"
)

func testConfig(mut func(c *config.Config)) func() *config.Config {
	c := config.Default()
	c.Agents["other"] = config.AgentConfig{ModelProvider: "echo.default", RiskProfile: "supervised"}
	if mut != nil {
		mut(c)
	}
	return func() *config.Config { return c }
}

func openManager(t *testing.T, dataDir string, cfg func() *config.Config) *Manager {
	t.Helper()
	m, err := Open(t.Context(), Options{DataDir: dataDir, Config: cfg, Now: nowFunc,
		Workspace: func(_ *config.Config, alias string) string { return filepath.Join(dataDir, "ws", alias) }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = m.Close() })
	return m
}

// Agents see their own memories; read_memory_from opens another agent's for reading only.
func TestManagerScopingAndOptIn(t *testing.T) {
	dir := t.TempDir()
	m := openManager(t, dir, testConfig(nil))
	def, _ := m.For(t.Context(), "default")
	other, _ := m.For(t.Context(), "other")
	if err := def.Store(t.Context(), "user_name", "The user's name is Ada", "", ""); err != nil {
		t.Fatal(err)
	}
	if got, _ := other.Recall(t.Context(), "name", 5, "", "", ""); len(got) != 0 {
		t.Fatalf("other agent recalled default's memory: %+v", got)
	}
	if _, err := other.Forget(t.Context(), "user_name"); !errors.Is(err, ErrForeign) {
		t.Fatalf("forgetting another agent's memory: %v", err)
	}
	_ = m.Close()
	m3 := openManager(t, dir, testConfig(func(c *config.Config) {
		a := c.Agents["other"]
		a.Workspace.ReadMemoryFrom = []string{"default"}
		c.Agents["other"] = a
	}))
	reader, _ := m3.For(t.Context(), "other")
	got, _ := reader.Recall(t.Context(), "name", 5, "", "", "")
	if len(got) != 1 || got[0].Key != "user_name" {
		t.Fatalf("opted-in recall: %+v", got)
	}
	if ok, err := reader.Forget(t.Context(), "user_name"); ok || !errors.Is(err, ErrForeign) {
		t.Fatalf("read_memory_from gave write access: %v %v", ok, err)
	}
}

// Once an agent wrote to a backend, switching its backend refuses with a hint; an agent that never wrote may
// switch.
func TestManagerBackendLock(t *testing.T) {
	dir := t.TempDir()
	m := openManager(t, dir, testConfig(nil))
	h, _ := m.For(t.Context(), "default")
	if err := h.Store(t.Context(), "k", "v", "", ""); err != nil {
		t.Fatal(err)
	}
	_ = m.Close()
	md := openManager(t, dir, testConfig(func(c *config.Config) { c.Memory.Backend = "markdown" }))
	_, err := md.For(t.Context(), "default")
	if !errors.Is(err, ErrLocked) || !strings.Contains(err.Error(), `"sqlite"`) || !strings.Contains(err.Error(), "backends.json") {
		t.Fatalf("switch after a write: %v", err)
	}
	if _, err := md.For(t.Context(), "other"); err != nil {
		t.Fatalf("an agent that never wrote cannot switch: %v", err)
	}
}

// Auto-save uses one key per turn, so a second message does not overwrite the first; retention then removes
// conversation memories past conversation_retention_days.
func TestAutoSaveUniqueKeysAndRetention(t *testing.T) {
	now := fixedNow
	cfg := testConfig(nil)
	m, err := Open(t.Context(), Options{DataDir: t.TempDir(), Config: cfg, Now: func() time.Time { return now },
		Workspace: func(*config.Config, string) string { return t.TempDir() }})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	h, _ := m.For(t.Context(), "default")
	for i, msg := range []string{"first message", "second message"} {
		if err := m.AutoSave(t.Context(), h, []string{"t1", "t2"}[i], "rpc_s1", msg); err != nil {
			t.Fatal(err)
		}
	}
	l, _ := h.List(t.Context(), Filter{Category: CategoryConversation})
	if len(l) != 2 || l[0].SessionID == nil || *l[0].SessionID != "rpc_s1" {
		t.Fatalf("auto-saved: %+v", l)
	}
	now = now.Add(31 * 24 * time.Hour) // past the 30-day retention and the 12 h hygiene interval
	if err := m.AutoSave(t.Context(), h, "t3", "rpc_s1", "third message"); err != nil {
		t.Fatal(err)
	}
	l, _ = h.List(t.Context(), Filter{Category: CategoryConversation})
	if len(l) != 1 || l[0].Content != "third message" {
		t.Fatalf("after retention: %+v", l)
	}
}

func TestRender(t *testing.T) {
	sc := func(f float64) *float64 { return &f }
	old := fixedNow.Add(-14 * 24 * time.Hour).Format(time.RFC3339)
	entries := []Entry{
		{Key: "user_name", Content: "Ada", Category: CategoryCore, Score: sc(1), Timestamp: old},
		{Key: "low", Content: "below the floor", Category: CategoryCore, Score: sc(0.2)},
		{Key: "user_msg_t1", Content: "autosaved", Category: CategoryConversation, Score: sc(1)},
		{Key: "chat", Content: "a conversation", Category: CategoryConversation, Score: sc(1), Timestamp: fixedNow.Format(time.RFC3339)},
		{Key: "stale", Content: "two half-lives old", Category: CategoryDaily, Score: sc(1), Timestamp: old},
		{Key: "long", Content: strings.Repeat("x", 900), Category: "custom"},
	}
	Decay(entries, fixedNow)
	if *entries[0].Score != 1 || *entries[4].Score > 0.26 || *entries[4].Score < 0.24 {
		t.Fatalf("decay: core %v daily %v", *entries[0].Score, *entries[4].Score)
	}
	got := Render(entries, InjectOptions{MinRelevance: 0.4, ExcludeConversation: true})
	want := "[Memory context]\n- user_name: Ada\n- long: " + strings.Repeat("x", 800) + "...\n[/Memory context]\n\n"
	if got != want {
		t.Fatalf("render\n got %q\nwant %q", got, want)
	}
	if got := Render(entries, InjectOptions{MinRelevance: 0.4}); !strings.Contains(got, "- chat: a conversation\n") {
		t.Fatalf("conversation excluded with a session scope: %q", got)
	}
	if Render(nil, InjectOptions{}) != "" {
		t.Fatal("empty render not empty")
	}
}

// A config change that names another backend reopens it on next use; an agent that wrote to the old one is
// refused with the hint while one that never wrote moves; switching back finds the old memories again.
// A backend that fails to open leaves memory unavailable until the config names one that opens.
func TestManagerReopensOnConfigChange(t *testing.T) {
	dsn := pgDSN(t)
	if dsn == "" {
		t.Log("ZEROCLAW_TEST_PG_DSN not set: the sqlite to postgres switch is not run (source scripts/pg-test-server.sh)")
		return
	}
	schema := pgSchema(t, dsn)
	var mu sync.Mutex
	cur := testConfig(nil)()
	set := func(mut func(c *config.Config)) {
		mu.Lock()
		defer mu.Unlock()
		next := testConfig(mut)()
		cur = next
	}
	cfg := func() *config.Config { mu.Lock(); defer mu.Unlock(); return cur }
	toPG := func(url string) func(c *config.Config) {
		return func(c *config.Config) {
			c.Memory.Backend = "postgres.shared"
			c.Storage.Postgres = map[string]config.PostgresStorage{"shared": {DBURL: url, Schema: schema, Table: "memories"}}
		}
	}
	m := openManager(t, t.TempDir(), cfg)
	ctx := t.Context()
	def, err := m.For(ctx, "default")
	if err != nil {
		t.Fatal(err)
	}
	if err := def.Store(ctx, "user_name", "The user's name is Ada", "", ""); err != nil {
		t.Fatal(err)
	}

	// A server that is not there: memory is unavailable, nothing else breaks.
	set(toPG("postgres://zc:secret@127.0.0.1:1/none?connect_timeout=2"))
	if _, err := m.For(ctx, "other"); !errors.Is(err, ErrUnavailable) {
		t.Fatalf("unreachable backend: %v", err)
	}
	if b, _ := m.Shared(); b != nil {
		t.Fatalf("shared backend after a failed open: %v", b.Kind())
	}

	set(toPG(dsn))
	if _, err := m.For(ctx, "default"); !errors.Is(err, ErrLocked) || !strings.Contains(err.Error(), `"sqlite"`) ||
		!strings.Contains(err.Error(), `"postgres.shared"`) {
		t.Fatalf("default after the switch: %v", err)
	}
	other, err := m.For(ctx, "other")
	if err != nil || other.Kind() != KindPostgres {
		t.Fatalf("other after the switch: %v", err)
	}
	if err := other.Store(ctx, "pg_fact", "stored in PostgreSQL", "", ""); err != nil {
		t.Fatal(err)
	}
	b, name := m.Shared()
	if b == nil || name != "postgres.shared" {
		t.Fatalf("shared: %v %q", b, name)
	}
	if got, _ := b.Recall(ctx, Query{Text: "PostgreSQL", Limit: 5}); len(got) != 1 || got[0].Key != "pg_fact" {
		t.Fatalf("recall in postgres: %+v", got)
	}

	set(nil) // back to sqlite
	def, err = m.For(ctx, "default")
	if err != nil {
		t.Fatalf("default back on sqlite: %v", err)
	}
	if got, _ := def.Recall(ctx, "name", 5, "", "", ""); len(got) != 1 || got[0].Key != "user_name" {
		t.Fatalf("sqlite memories after switching back: %+v", got)
	}
	if _, err := m.For(ctx, "other"); !errors.Is(err, ErrLocked) {
		t.Fatalf("other wrote to postgres, then sqlite: %v", err)
	}
}

// Package chattest is the one test suite of store.Chat, run against every backend: the SQLite store (package
// store's tests) and the PostgreSQL store (package pgchat's). A backend passes when it answers every case the
// same way.
package chattest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zeroclaw-go/zeroclaw/internal/store"
)

// Backend opens stores of one backend for the suite.
type Backend struct {
	// Open is a new, empty store, closed when the test ends.
	Open func(t *testing.T) store.Chat
	// Crash ends s as a daemon that died would (no clean shutdown, whatever it owned given up as it is after
	// the backend's timeout) and returns another store on the same data, as the next daemon would open it.
	Crash func(t *testing.T, s store.Chat) store.Chat
}

// T0 is the suite's clock: whole seconds, which every backend stores exactly.
var T0 = time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)

// Run runs every case against b.
func Run(t *testing.T, b Backend) {
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { c.fn(t, b) })
	}
}

var cases = []struct {
	name string
	fn   func(t *testing.T, b Backend)
}{
	{"AppendAndPaging", appendAndPaging},
	{"PageByteBudget", pageByteBudget},
	{"EnsureSessionMetadata", ensureSessionMetadata},
	{"Owners", owners},
	{"Resolve", resolve},
	{"Search", search},
	{"SearchHostile", searchHostile},
	{"ListOrderAndAttributed", listOrderAndAttributed},
	{"Turns", turns},
	{"InterruptRunning", interruptRunning},
	{"DeleteAndAgents", deleteAndAgents},
	{"ConcurrentAppends", concurrentAppends},
	{"ContentBytes", contentBytes},
	{"Closed", closed},
}

func mustAppend(t *testing.T, s store.Chat, key, role, content string, now time.Time) int {
	t.Helper()
	i, err := s.Append(t.Context(), key, role, content, now)
	if err != nil {
		t.Fatalf("Append(%s): %v", key, err)
	}
	return i
}

func indices(msgs []store.Message) []int {
	out := make([]int, len(msgs))
	for i, m := range msgs {
		out[i] = m.Index
	}
	return out
}

func keys(t *testing.T, s store.Chat, q string, attributed bool) []string {
	t.Helper()
	list := s.List
	if attributed {
		list = s.ListAttributed
	}
	metas, err := list(t.Context(), q, 0)
	if err != nil {
		t.Fatalf("List(%q): %v", q, err)
	}
	out := make([]string, len(metas))
	for i, m := range metas {
		out[i] = m.Key
	}
	return out
}

func appendAndPaging(t *testing.T, b Backend) {
	s := b.Open(t)
	ctx := t.Context()
	for i := range 10 {
		if got := mustAppend(t, s, "k", "user", fmt.Sprintf("m%d", i), T0.Add(time.Duration(i)*time.Second)); got != i {
			t.Fatalf("Append #%d returned index %d", i, got)
		}
	}
	mustAppend(t, s, "other", "user", "noise", T0)
	for _, tc := range []struct {
		name          string
		key           string
		limit, before int
		want          []int
		start, total  int
	}{
		{"newest page", "k", 3, -1, []int{7, 8, 9}, 7, 10},
		{"page before 7", "k", 3, 7, []int{4, 5, 6}, 4, 10},
		{"short first page", "k", 3, 2, []int{0, 1}, 0, 10},
		{"before 0 is empty", "k", 3, 0, []int{}, 0, 10},
		{"no limit", "k", 0, -1, []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}, 0, 10},
		{"before past the end", "k", 2, 50, []int{8, 9}, 8, 10},
		{"unknown session", "nope", 5, -1, []int{}, 0, 0},
	} {
		msgs, total, start, err := s.Page(ctx, tc.key, tc.limit, tc.before, 0)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(indices(msgs), tc.want) || total != tc.total || start != tc.start {
			t.Errorf("%s: idx=%v total=%d start=%d, want %v %d %d", tc.name, indices(msgs), total, start, tc.want, tc.total, tc.start)
		}
		for _, m := range msgs {
			if m.Content != fmt.Sprintf("m%d", m.Index) || !m.CreatedAt.Equal(T0.Add(time.Duration(m.Index)*time.Second)) {
				t.Errorf("%s: message %d is %+v", tc.name, m.Index, m)
			}
		}
	}
	all, err := s.All(ctx, "k")
	if err != nil || len(all) != 10 || all[3].Content != "m3" || all[3].Role != "user" || all[3].Index != 3 {
		t.Fatalf("All: %+v %v", all, err)
	}
	if none, err := s.All(ctx, "nope"); err != nil || len(none) != 0 {
		t.Fatalf("All(unknown) = %v, %v", none, err)
	}
}

func pageByteBudget(t *testing.T, b Backend) {
	s := b.Open(t)
	ctx := t.Context()
	sizes := []int{10, 500, 20, 30, 1000, 5}
	for i, n := range sizes {
		mustAppend(t, s, "k", "user", strings.Repeat(string(rune('a'+i)), n), T0)
	}
	for _, tc := range []struct {
		limit, before, max int
		want               []int
	}{
		{0, -1, 0, []int{0, 1, 2, 3, 4, 5}},
		{0, -1, 1005, []int{4, 5}},
		{0, -1, 1004, []int{5}},
		{0, -1, 1, []int{5}},
		{0, 5, 1, []int{4}},      // one message over the budget still comes alone
		{0, 4, 549, []int{2, 3}}, // 500 more would pass 549
		{2, 4, 0, []int{2, 3}},
		{1, -1, 1 << 20, []int{5}},
		{0, 0, 100, []int{}},
	} {
		msgs, total, start, err := s.Page(ctx, "k", tc.limit, tc.before, tc.max)
		if err != nil {
			t.Fatal(err)
		}
		wantStart := tc.before
		if len(tc.want) > 0 {
			wantStart = tc.want[0]
		}
		if total != len(sizes) || start != wantStart || !slices.Equal(indices(msgs), tc.want) {
			t.Errorf("Page(limit %d, before %d, max %d) = %v start %d total %d, want %v", tc.limit, tc.before, tc.max, indices(msgs), start, total, tc.want)
		}
		for _, m := range msgs {
			if len(m.Content) != sizes[m.Index] {
				t.Errorf("message %d has %d bytes", m.Index, len(m.Content))
			}
		}
	}
	m, total, err := s.Message(ctx, "k", 4)
	if err != nil || m.Index != 4 || len(m.Content) != 1000 || total != len(sizes) {
		t.Fatalf("Message(4) = %d %d %d %v", m.Index, len(m.Content), total, err)
	}
	for _, i := range []int{-1, 6} {
		if _, total, err := s.Message(ctx, "k", i); !errors.Is(err, store.ErrNotFound) || total != len(sizes) {
			t.Errorf("Message(%d): %v (total %d), want ErrNotFound", i, err, total)
		}
	}
	// A long history read back within a small budget: the budget, not the history, bounds the page.
	for i := range 600 {
		mustAppend(t, s, "long", "user", fmt.Sprintf("%04d", i), T0)
	}
	msgs, total, start, err := s.Page(ctx, "long", 0, -1, 40)
	if err != nil || total != 600 || start != 590 || len(msgs) != 10 || msgs[9].Content != "0599" {
		t.Fatalf("long Page = %d msgs start %d total %d %v", len(msgs), start, total, err)
	}
	msgs, _, start, err = s.Page(ctx, "long", 0, 300, 0)
	if err != nil || start != 0 || len(msgs) != 300 || msgs[299].Content != "0299" {
		t.Fatalf("long Page before 300 = %d msgs start %d %v", len(msgs), start, err)
	}
}

func ensureSessionMetadata(t *testing.T, b Backend) {
	s := b.Open(t)
	ctx := t.Context()
	meta, existed, err := s.EnsureSession(ctx, "k", "coder", "", T0)
	if err != nil || existed || meta.AgentAlias != "coder" || meta.MessageCount != 0 || meta.State != "idle" || !meta.CreatedAt.Equal(T0) {
		t.Fatalf("first EnsureSession: existed=%v meta=%+v %v", existed, meta, err)
	}
	mustAppend(t, s, "k", "user", "hi", T0.Add(time.Minute))
	mustAppend(t, s, "k", "assistant", "hello", T0.Add(2*time.Minute))
	meta, existed, err = s.EnsureSession(ctx, "k", "someone-else", "", T0.Add(time.Hour))
	if err != nil || !existed || meta.AgentAlias != "coder" {
		t.Fatalf("second EnsureSession must keep the row: existed=%v meta=%+v %v", existed, meta, err)
	}
	if meta.MessageCount != 2 || !meta.LastActivity.Equal(T0.Add(2*time.Minute)) || !meta.CreatedAt.Equal(T0) {
		t.Fatalf("metadata after two appends: %+v", meta)
	}
	mustAppend(t, s, "fresh", "user", "x", T0)
	if m, err := s.Meta(ctx, "fresh"); err != nil || m.MessageCount != 1 || m.AgentAlias != "" {
		t.Fatalf("Meta(fresh) = %+v, %v", m, err)
	}
	// A row naming no agent adopts the next one, once.
	mustAppend(t, s, "orphan", "user", "hi", T0)
	if m, existed, err := s.EnsureSession(ctx, "orphan", "a", "", T0.Add(1)); err != nil || !existed || m.AgentAlias != "a" || !m.LastActivity.Equal(T0) {
		t.Fatalf("EnsureSession(orphan) = %+v, %v, %v", m, existed, err)
	}
	if m, _, err := s.EnsureSession(ctx, "orphan", "b", "", T0.Add(2)); err != nil || m.AgentAlias != "a" {
		t.Fatalf("second EnsureSession changed the agent: %+v %v", m, err)
	}
	if _, err := s.Meta(ctx, "missing"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("Meta(missing): %v, want ErrNotFound", err)
	}
	if _, err := s.Append(ctx, "", "user", "x", T0); !errors.Is(err, store.ErrInvalid) {
		t.Fatalf("Append with empty key: %v, want ErrInvalid", err)
	}
	if _, err := s.Append(ctx, "k", "", "x", T0); !errors.Is(err, store.ErrInvalid) {
		t.Fatalf("Append with empty role: %v, want ErrInvalid", err)
	}
	if err := s.SetState(ctx, "missing", "idle", "", nil); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("SetState(missing): %v, want ErrNotFound", err)
	}
	if err := s.SetState(ctx, "k", "", "", nil); !errors.Is(err, store.ErrInvalid) {
		t.Fatalf("SetState with empty state: %v, want ErrInvalid", err)
	}
}

func owners(t *testing.T, b Backend) {
	s := b.Open(t)
	ctx := t.Context()
	meta, existed, err := s.EnsureSession(ctx, "a", "default", "alice", T0)
	if err != nil || existed || meta.Owner != "alice" {
		t.Fatalf("new session: %+v existed=%v %v, want owner alice", meta, existed, err)
	}
	if meta, _, err = s.EnsureSession(ctx, "a", "default", "bob", T0); err != nil || meta.Owner != "alice" {
		t.Fatalf("ensure by another principal: %+v %v, owner must stay alice", meta, err)
	}
	mustAppend(t, s, "legacy", "user", "hi", T0)
	if m, _ := s.Meta(ctx, "legacy"); m.Owner != "" {
		t.Fatalf("a session written without an owner reports %q", m.Owner)
	}
	if meta, _, err = s.EnsureSession(ctx, "legacy", "", "operator", T0); err != nil || meta.Owner != "operator" {
		t.Fatalf("claim: %+v %v", meta, err)
	}
	if err := s.Delete(ctx, "a"); err != nil {
		t.Fatal(err)
	}
	if meta, _, err = s.EnsureSession(ctx, "a", "default", "bob", T0); err != nil || meta.Owner != "bob" {
		t.Fatalf("recreated after delete: %+v %v, want bob", meta, err)
	}
	if _, err := s.BeginTurn(ctx, "turned", "default", "carol", "t1", T0, "hi"); err != nil {
		t.Fatal(err)
	}
	if m, err := s.Meta(ctx, "turned"); err != nil || m.Owner != "carol" {
		t.Fatalf("BeginTurn's session owner: %+v %v", m, err)
	}
}

func resolve(t *testing.T, b Backend) {
	s := b.Open(t)
	ctx := t.Context()
	for _, key := range []string{"all", "rpc_all", "gw_all", "rpc_two", "gw_two", "gw_gwonly", "bare"} {
		mustAppend(t, s, key, "user", "in "+key, T0)
	}
	for id, want := range map[string]string{"all": "all", "two": "rpc_two", "gwonly": "gw_gwonly", "bare": "bare", "rpc_two": "rpc_two"} {
		if meta, err := s.Resolve(ctx, id); err != nil || meta.Key != want {
			t.Errorf("Resolve(%q) = %q, %v; want %q", id, meta.Key, err, want)
		}
	}
	for _, id := range []string{"none", "", "rpc_bare"} {
		if meta, err := s.Resolve(ctx, id); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("Resolve(%q) = %+v, %v; want ErrNotFound", id, meta, err)
		}
	}
	if meta, err := s.Resolve(ctx, "two"); err != nil || meta.MessageCount != 1 {
		t.Errorf("Resolve(two) count = %+v, %v", meta, err)
	}
}

func seedSearch(t *testing.T, b Backend) store.Chat {
	s := b.Open(t)
	mustAppend(t, s, "ops", "user", "please deploy the kubernetes cluster", T0)
	mustAppend(t, s, "ops", "assistant", "deploying now (AND watching) the \"rollout\"", T0.Add(time.Second))
	mustAppend(t, s, "kitchen", "user", "how do I bake a cake?", T0.Add(2*time.Second))
	mustAppend(t, s, "intl", "user", "un café crème, s'il vous plaît — 日本語 ok", T0.Add(3*time.Second))
	mustAppend(t, s, "web", "user", "see docs.example.com/path-to_thing and foo-bar v1.2", T0.Add(4*time.Second))
	return s
}

func search(t *testing.T, b Backend) {
	s := seedSearch(t, b)
	for _, tc := range []struct {
		q    string
		want []string
	}{
		{"kubernetes", []string{"ops"}},
		{"KUBERNETES", []string{"ops"}},
		{"deploy cluster", []string{"ops"}},
		{"deploy cake", []string{}}, // all words must occur in one message
		{"depl*", []string{"ops"}},
		{"cake", []string{"kitchen"}},
		{"café", []string{"intl"}},
		{"CAFÉ", []string{"intl"}},
		{"cafe", []string{"intl"}}, // accents are folded
		{"plaît", []string{"intl"}},
		{"日本語", []string{"intl"}},
		{"rollout", []string{"ops"}},
		{"absent", []string{}},
		{"example", []string{"web"}}, // punctuation separates tokens
		{"foo-bar", []string{"web"}}, // a word of several tokens is a phrase
		{"bar-foo", []string{}},      // in order
		{"docs.example.com", []string{"web"}},
		{"path-to*", []string{"web"}},
		{"v1", []string{"web"}},
		{"thing and", []string{"web"}},
		{"s'il", []string{"intl"}},
		{"watching) (AND", []string{"ops"}},
	} {
		if got := keys(t, s, tc.q, false); !slices.Equal(got, tc.want) {
			t.Errorf("List(%q) = %v, want %v", tc.q, got, tc.want)
		}
	}
	// Newest activity first among the matches, and the limit counts them.
	mustAppend(t, s, "kitchen", "user", "deploy the oven", T0.Add(time.Hour))
	if got := keys(t, s, "deploy", false); !slices.Equal(got, []string{"kitchen", "ops"}) {
		t.Errorf("List(deploy) = %v", got)
	}
	if metas, err := s.List(t.Context(), "deploy", 1); err != nil || len(metas) != 1 || metas[0].Key != "kitchen" {
		t.Errorf("List(deploy, 1) = %+v %v", metas, err)
	}
	// A deleted session's messages are found no more.
	if err := s.Delete(t.Context(), "ops"); err != nil {
		t.Fatal(err)
	}
	if got := keys(t, s, "kubernetes", false); len(got) != 0 {
		t.Errorf("a deleted session is still found: %v", got)
	}
}

func searchHostile(t *testing.T, b Backend) {
	s := seedSearch(t, b)
	hostile := []string{
		`"`, `""`, `"""`, `'`, `''`, `AND`, `OR`, `NOT`, `AND OR NOT`, `*`, `**`, `(`, `)`, `()`, `(((`,
		`NEAR(`, `NEAR(a b, 2)`, `content:`, `session_key:ops`, `{content}: x`, `^`, `-`, `+`, `:`, `!`, `&`,
		`|`, `<->`, `<2>`, `:*`, `'a':*`, `\`, `\'`, "\x00", "\xff\xfe", "😀", `a"b`, `%`, `_`,
		`;DROP TABLE sessions;--`, strings.Repeat("x ", 500), strings.Repeat("y", 5000),
	}
	for _, junk := range hostile {
		if _, err := s.List(t.Context(), junk, 10); err != nil {
			t.Errorf("List(%q): %v", junk, err)
		}
		if _, err := s.ListAttributed(t.Context(), "kubernetes "+junk, 10); err != nil {
			t.Errorf("ListAttributed(%q): %v", junk, err)
		}
	}
	for _, junk := range []string{`"`, `*`, `(`, `)`, `^`, `-`, `:`, `&`, `|`, `<->`, `\`, "\x00", "😀", `%`} {
		if got := keys(t, s, "kubernetes "+junk, false); !slices.Equal(got, []string{"ops"}) {
			t.Errorf("List(%q) = %v, want [ops]", "kubernetes "+junk, got)
		}
	}
	for _, q := range []string{`"deploy`, `deploy"`, `(deploy)`, `deploying AND`, `^deploy`, `'deploy'`} {
		if got := keys(t, s, q, false); !slices.Equal(got, []string{"ops"}) {
			t.Errorf("List(%q) = %v, want [ops]", q, got)
		}
	}
	if got := keys(t, s, `* ( ) "`, false); len(got) != 0 {
		t.Errorf("punctuation-only query matched %v", got)
	}
	mustAppend(t, s, "ops", "user", "still fine", T0)
}

func listOrderAndAttributed(t *testing.T, b Backend) {
	s := b.Open(t)
	ctx := t.Context()
	if _, _, err := s.EnsureSession(ctx, "agent-b", "b", "", T0.Add(2*time.Second)); err != nil {
		t.Fatal(err)
	}
	mustAppend(t, s, "plain", "user", "x", T0.Add(3*time.Second))
	if _, _, err := s.EnsureSession(ctx, "agent-a", "a", "", T0.Add(time.Second)); err != nil {
		t.Fatal(err)
	}
	mustAppend(t, s, "tie-2", "user", "x", T0)
	mustAppend(t, s, "tie-1", "user", "x", T0)
	if got, want := keys(t, s, "", false), []string{"plain", "agent-b", "agent-a", "tie-1", "tie-2"}; !slices.Equal(got, want) {
		t.Fatalf("List() = %v, want %v", got, want)
	}
	if got, want := keys(t, s, "   ", true), []string{"agent-b", "agent-a"}; !slices.Equal(got, want) {
		t.Fatalf("ListAttributed() = %v, want %v", got, want)
	}
	if metas, err := s.List(ctx, "", 2); err != nil || len(metas) != 2 {
		t.Fatalf("List limit 2 = %d rows, %v", len(metas), err)
	}
	mustAppend(t, s, "tie-2", "user", "y", T0.Add(time.Hour))
	if got := keys(t, s, "", false); got[0] != "tie-2" {
		t.Fatalf("after new activity List()[0] = %q", got[0])
	}
}

func turns(t *testing.T, b Backend) {
	s := b.Open(t)
	ctx := t.Context()
	idx, err := s.BeginTurn(ctx, "k", "coder", "", "turn-1", T0, "hello")
	if err != nil || idx != 0 {
		t.Fatalf("BeginTurn = %d, %v", idx, err)
	}
	m, err := s.Meta(ctx, "k")
	if err != nil || m.State != "running" || m.TurnID != "turn-1" || m.TurnStartedAt == nil || !m.TurnStartedAt.Equal(T0) || m.AgentAlias != "coder" || m.MessageCount != 1 {
		t.Fatalf("meta of a running turn: %+v %v", m, err)
	}
	if i := mustAppend(t, s, "k", "tool", "a tool result", T0.Add(time.Second)); i != 1 {
		t.Fatalf("append during the turn: %d", i)
	}
	idx, err = s.EndTurn(ctx, "k", "assistant", "hi there", T0.Add(2*time.Second), "idle")
	if err != nil || idx != 2 {
		t.Fatalf("EndTurn = %d, %v", idx, err)
	}
	m, _ = s.Meta(ctx, "k")
	if m.State != "idle" || m.TurnID != "" || m.TurnStartedAt != nil || m.MessageCount != 3 || !m.LastActivity.Equal(T0.Add(2*time.Second)) {
		t.Fatalf("meta after EndTurn: %+v", m)
	}
	// A turn without a prompt stores none; the next turn of the same daemon may start at once.
	if idx, err := s.BeginTurn(ctx, "k", "coder", "", "turn-2", T0.Add(3*time.Second), ""); err != nil || idx != -1 {
		t.Fatalf("BeginTurn without prompt = %d, %v", idx, err)
	}
	if idx, err := s.EndTurn(ctx, "k", "assistant", "done", T0.Add(4*time.Second), "error"); err != nil || idx != 3 {
		t.Fatalf("EndTurn(error) = %d, %v", idx, err)
	}
	if m, _ := s.Meta(ctx, "k"); m.State != "error" {
		t.Fatalf("state after a failed turn: %q", m.State)
	}
	if _, err := s.EndTurn(ctx, "k", "", "x", T0, "idle"); !errors.Is(err, store.ErrInvalid) {
		t.Fatalf("EndTurn with empty role: %v", err)
	}
	all, _ := s.All(ctx, "k")
	if got := []string{all[0].Role, all[1].Role, all[2].Role, all[3].Role}; !slices.Equal(got, []string{"user", "tool", "assistant", "assistant"}) {
		t.Fatalf("roles %v", got)
	}
}

func interruptRunning(t *testing.T, b Backend) {
	s := b.Open(t)
	ctx := t.Context()
	for _, k := range []string{"running", "running-no-turn", "idle", "error"} {
		if _, _, err := s.EnsureSession(ctx, k, "a", "", T0); err != nil {
			t.Fatal(err)
		}
	}
	started := T0.Add(time.Second)
	for _, st := range []struct{ key, state, turn string }{
		{"running", "running", "turn-1"}, {"running-no-turn", "running", ""}, {"error", "error", ""},
	} {
		if err := s.SetState(ctx, st.key, st.state, st.turn, &started); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.BeginTurn(ctx, "begun", "a", "", "turn-b", started, "go"); err != nil {
		t.Fatal(err)
	}
	s = b.Crash(t, s)
	n, err := s.InterruptRunning(ctx)
	if err != nil || n != 3 {
		t.Fatalf("InterruptRunning = %d, %v; want 3 sessions", n, err)
	}
	want := map[string]store.SessionMeta{
		"running":         {State: "idle", Interrupted: true, InterruptedTurnID: "turn-1"},
		"running-no-turn": {State: "idle", Interrupted: true},
		"begun":           {State: "idle", Interrupted: true, InterruptedTurnID: "turn-b"},
		"idle":            {State: "idle"},
		"error":           {State: "error", TurnStartedAt: &started},
	}
	rows, err := s.List(ctx, "", 0)
	if err != nil || len(rows) != len(want) {
		t.Fatalf("List: %d rows, %v", len(rows), err)
	}
	for _, m := range rows {
		w := want[m.Key]
		if m.State != w.State || m.TurnID != "" || m.Interrupted != w.Interrupted ||
			m.InterruptedTurnID != w.InterruptedTurnID || (m.TurnStartedAt == nil) != (w.TurnStartedAt == nil) {
			t.Errorf("%s after InterruptRunning: %+v, want %+v", m.Key, m, w)
		}
	}
	if n, err := s.InterruptRunning(ctx); err != nil || n != 0 {
		t.Fatalf("second InterruptRunning = %d, %v; want 0", n, err)
	}
	if err := s.SetState(ctx, "running", "running", "turn-2", &started); err != nil {
		t.Fatal(err)
	}
	if m, _ := s.Meta(ctx, "running"); m.Interrupted || m.InterruptedTurnID != "" || m.TurnID != "turn-2" {
		t.Fatalf("after a new turn: %+v", m)
	}
	if _, err := s.EndTurn(ctx, "begun", "assistant", "late", T0, "idle"); err != nil {
		t.Fatalf("EndTurn on an interrupted session by the next daemon: %v", err)
	}
}

func deleteAndAgents(t *testing.T, b Backend) {
	s := b.Open(t)
	ctx := t.Context()
	for k, a := range map[string]string{"s1": "a", "s2": "a", "s3": "b", "s4": ""} {
		if _, _, err := s.EnsureSession(ctx, k, a, "", T0); err != nil {
			t.Fatal(err)
		}
		mustAppend(t, s, k, "user", "hello "+k, T0)
	}
	if got, err := s.CountByAgent(ctx); err != nil || len(got) != 2 || got["a"] != 2 || got["b"] != 1 {
		t.Fatalf("CountByAgent = %v, %v", got, err)
	}
	if n, err := s.RenameAgent(ctx, "a", "c"); err != nil || n != 2 {
		t.Fatalf("RenameAgent = %d, %v", n, err)
	}
	if got, _ := s.CountByAgent(ctx); got["c"] != 2 || got["a"] != 0 {
		t.Fatalf("after rename: %v", got)
	}
	if err := s.Delete(ctx, "s1"); err != nil {
		t.Fatal(err)
	}
	if err := s.Delete(ctx, "never"); err != nil {
		t.Fatalf("deleting an unknown session: %v", err)
	}
	if _, err := s.Meta(ctx, "s1"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("Meta after Delete: %v", err)
	}
	if msgs, total, _, err := s.Page(ctx, "s1", 0, -1, 0); err != nil || total != 0 || len(msgs) != 0 {
		t.Fatalf("Page after Delete: %v %d %v", msgs, total, err)
	}
	if i := mustAppend(t, s, "s1", "user", "again", T0); i != 0 {
		t.Fatalf("a recreated session starts at index %d", i)
	}
}

func concurrentAppends(t *testing.T, b Backend) {
	s := b.Open(t)
	const writers, each = 6, 15
	var wg sync.WaitGroup
	errs := make(chan error, writers*each)
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				if _, err := s.Append(context.Background(), "k", "user", fmt.Sprintf("w%d-%d", w, i), T0); err != nil {
					errs <- err
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	all, err := s.All(t.Context(), "k")
	if err != nil || len(all) != writers*each {
		t.Fatalf("All = %d, %v", len(all), err)
	}
	seen := map[string]bool{}
	for i, m := range all {
		if m.Index != i || seen[m.Content] {
			t.Fatalf("message %d: %+v (duplicate %v)", i, m, seen[m.Content])
		}
		seen[m.Content] = true
	}
	if m, _ := s.Meta(t.Context(), "k"); m.MessageCount != writers*each {
		t.Fatalf("count %d", m.MessageCount)
	}
}

// contentBytes: content is kept byte for byte, whatever a model or a tool put in it.
func contentBytes(t *testing.T, b Backend) {
	s := b.Open(t)
	contents := []string{"", "tab\tnewline\n", `quote' "double" \back\slash`, "ünïcödé 日本 😀", "\x01\x7f", strings.Repeat("z", 1<<16)}
	for i, c := range contents {
		if got := mustAppend(t, s, "k", "user", c, T0); got != i {
			t.Fatalf("index %d", got)
		}
	}
	all, err := s.All(t.Context(), "k")
	if err != nil || len(all) != len(contents) {
		t.Fatalf("All = %d, %v", len(all), err)
	}
	for i, m := range all {
		if m.Content != contents[i] {
			t.Errorf("message %d: %q, want %q", i, m.Content[:min(len(m.Content), 40)], contents[i][:min(len(contents[i]), 40)])
		}
	}
}

func closed(t *testing.T, b Backend) {
	s := b.Open(t)
	mustAppend(t, s, "k", "user", "x", T0)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	ctx := context.Background()
	for name, err := range map[string]error{
		"Append": func() error { _, err := s.Append(ctx, "k", "user", "x", T0); return err }(),
		"Meta":   func() error { _, err := s.Meta(ctx, "k"); return err }(),
		"List":   func() error { _, err := s.List(ctx, "", 0); return err }(),
		"Resolve": func() error {
			_, err := s.Resolve(ctx, "k")
			return err
		}(),
		"BeginTurn": func() error { _, err := s.BeginTurn(ctx, "k", "", "", "t", T0, ""); return err }(),
	} {
		if !errors.Is(err, store.ErrClosed) {
			t.Errorf("%s after Close: %v, want ErrClosed", name, err)
		}
	}
}

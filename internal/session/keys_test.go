package session

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/zeroclaw-go/zeroclaw/internal/api"
	"github.com/zeroclaw-go/zeroclaw/internal/store"
)

// storedKeys lists every session_metadata key of the store.
func (e *env) storedKeys() []string {
	e.t.Helper()
	rows, err := e.chat.List(e.t.Context(), "", 0)
	if err != nil {
		e.t.Fatal(err)
	}
	var keys []string
	for _, r := range rows {
		keys = append(keys, r.Key)
	}
	slices.Sort(keys)
	return keys
}

func (e *env) history(key string) []string {
	e.t.Helper()
	msgs, err := e.chat.All(e.t.Context(), key)
	if err != nil {
		e.t.Fatal(err)
	}
	var out []string
	for _, m := range msgs {
		out = append(out, m.Role+":"+m.Content)
	}
	return out
}

// A session made over RPC is stored as rpc_<id>; every method reaches it by its bare id, lists show the bare
// id, and a restart resumes it without a second row.
func TestNewSessionStoredUnderRPCKey(t *testing.T) {
	e := newEnv(t, nil)
	ctx := t.Context()
	s := e.open(admin, api.SessionNewParams{SessionID: "s1"})
	if s.SessionID != "s1" {
		t.Fatalf("session_id = %q", s.SessionID)
	}
	if got := e.storedKeys(); !slices.Equal(got, []string{"rpc_s1"}) {
		t.Fatalf("stored keys after session/new = %v, want [rpc_s1]", got)
	}
	e.prompt("s1", "hello", &sink{})
	if got := e.history("rpc_s1"); !slices.Equal(got, []string{"user:hello", "assistant:hello"}) {
		t.Fatalf("rpc_s1 history = %v", got)
	}
	msgs, err := e.m.Messages(ctx, admin, api.SessionMessagesParams{SessionID: "s1"})
	if err != nil || msgs.Total != 2 || msgs.SessionID != "s1" {
		t.Fatalf("messages = %+v, %v", msgs, err)
	}
	if st, err := e.m.State(ctx, admin, "s1"); err != nil || st.State != stateIdle || st.SessionID != "s1" {
		t.Fatalf("state = %+v, %v", st, err)
	}
	if got := listIDs(t, e.m, admin); !slices.Equal(got, []string{"s1"}) {
		t.Fatalf("list = %v, want [s1]", got)
	}

	// A generated id follows the same rule.
	gen := e.open(admin, api.SessionNewParams{})
	if got := e.storedKeys(); !slices.Contains(got, "rpc_"+gen.SessionID) || slices.Contains(got, gen.SessionID) {
		t.Fatalf("stored keys = %v, want rpc_%s and no bare row", got, gen.SessionID)
	}

	e.restart()
	back := e.open(admin, api.SessionNewParams{SessionID: "s1"})
	if back.MessageCount != 2 {
		t.Fatalf("resumed = %+v, want 2 messages", back)
	}
	e.prompt("s1", "again", &sink{})
	if got := e.storedKeys(); len(got) != 2 || !slices.Contains(got, "rpc_s1") {
		t.Fatalf("stored keys after resume = %v", got)
	}
	if n := len(e.history("rpc_s1")); n != 4 {
		t.Fatalf("rpc_s1 has %d messages after the resumed turn, want 4", n)
	}

	if _, err := e.m.Delete(ctx, admin, "s1"); err != nil {
		t.Fatal(err)
	}
	if _, err := e.chat.Meta(ctx, "rpc_s1"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("rpc_s1 after delete: %v", err)
	}
}

// A session of our earlier releases, stored under its bare id, keeps working: it resumes by that id, its
// turns append to the bare row, and no rpc_ row appears.
func TestBareKeySessionOfEarlierReleasesKeepsItsKey(t *testing.T) {
	e := newEnv(t, nil)
	ctx := t.Context()
	if _, _, err := e.chat.EnsureSession(ctx, "old-1", "default", "operator", time.Now()); err != nil {
		t.Fatal(err)
	}
	for _, m := range []string{"user:before", "assistant:before"} {
		role, content, _ := strings.Cut(m, ":")
		if _, err := e.chat.Append(ctx, "old-1", role, content, time.Now()); err != nil {
			t.Fatal(err)
		}
	}
	res := e.open(admin, api.SessionNewParams{SessionID: "old-1"})
	if res.MessageCount != 2 || res.SessionID != "old-1" {
		t.Fatalf("resumed = %+v", res)
	}
	e.prompt("old-1", "after", &sink{})
	if got := e.storedKeys(); !slices.Equal(got, []string{"old-1"}) {
		t.Fatalf("stored keys = %v, want only old-1", got)
	}
	if got := e.history("old-1"); len(got) != 4 || got[2] != "user:after" {
		t.Fatalf("old-1 history = %v", got)
	}
}

// Upstream's keys resume by bare id: rpc_<id>, then gw_<id>; a channel key by itself. The bare row wins when
// both exist. The revived orphan gets its agent. Ownership is recorded on the stored key.
func TestUpstreamKeysResumeByBareID(t *testing.T) {
	e := newEnv(t, nil)
	ctx := t.Context()
	now := time.Now()
	for _, key := range []string{"rpc_u1", "gw_g1", "telegram_123_456", "rpc_both", "both"} {
		if _, err := e.chat.Append(ctx, key, "user", "in "+key, now); err != nil {
			t.Fatal(err)
		}
	}
	alice := Owner{Principal: "alice", ConnID: 3}
	for id, key := range map[string]string{"u1": "rpc_u1", "g1": "gw_g1", "telegram_123_456": "telegram_123_456", "both": "both"} {
		res := e.open(admin, api.SessionNewParams{SessionID: id})
		if res.SessionID != id || res.MessageCount != 1 {
			t.Fatalf("resume %s = %+v", id, res)
		}
		sk := &sink{}
		e.prompt(id, "next", sk)
		if got := e.history(key); !slices.Equal(got, []string{"user:in " + key, "user:next", "assistant:next"}) {
			t.Fatalf("%s history = %v", key, got)
		}
		meta, err := e.chat.Meta(ctx, key)
		if err != nil || meta.AgentAlias != "default" || meta.Owner != "operator" {
			t.Fatalf("%s meta = %+v, %v", key, meta, err)
		}
		if _, err := e.m.Messages(ctx, alice, api.SessionMessagesParams{SessionID: id}); !errors.Is(err, ErrNotOwned) {
			t.Fatalf("alice reads %s: %v", id, err)
		}
	}
	want := []string{"both", "gw_g1", "rpc_both", "rpc_u1", "telegram_123_456"}
	if got := e.storedKeys(); !slices.Equal(got, want) {
		t.Fatalf("stored keys = %v, want %v (no new row)", got, want)
	}
	if got := e.history("rpc_both"); len(got) != 1 {
		t.Fatalf("rpc_both was written although the bare row wins: %v", got)
	}
	// Lists strip the prefix. The shadowed rpc_both was never revived, so it names no agent and is not listed.
	if got := listIDs(t, e.m, admin); !slices.Equal(got, []string{"both", "g1", "telegram_123_456", "u1"}) {
		t.Fatalf("list = %v", got)
	}
}

// A full key used as an id (rpc_x) reaches the same row as the bare id (x): the two live sessions share one
// turn lock, so their turns never interleave in the store, and no rpc_rpc_x row is made.
func TestFullKeyAndBareIDShareTheTurnLock(t *testing.T) {
	e := newEnv(t, nil)
	e.open(admin, api.SessionNewParams{SessionID: "x"})
	e.open(admin, api.SessionNewParams{SessionID: "rpc_x"})
	a, err := e.m.live("x")
	if err != nil {
		t.Fatal(err)
	}
	b, err := e.m.live("rpc_x")
	if err != nil {
		t.Fatal(err)
	}
	if a.key != "rpc_x" || b.key != "rpc_x" || a.lock != b.lock {
		t.Fatalf("keys %q and %q, same lock %v", a.key, b.key, a.lock == b.lock)
	}
	if _, locks := e.m.mapSizes(); locks != 1 {
		t.Fatalf("%d turn locks, want 1", locks)
	}
	e.prompt("rpc_x", "via the key", &sink{})
	if got := e.storedKeys(); !slices.Equal(got, []string{"rpc_x"}) {
		t.Fatalf("stored keys = %v, want [rpc_x]", got)
	}
}

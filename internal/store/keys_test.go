package store

import (
	"context"
	"errors"
	"testing"
)

func TestSessionIDStripsOnePrefix(t *testing.T) {
	for key, want := range map[string]string{
		"rpc_abc":          "abc",
		"gw_abc":           "abc",
		"abc":              "abc",
		"telegram_123_456": "telegram_123_456",
		"rpc_gw_abc":       "gw_abc", // one prefix only: rpc_ first, as upstream's list does
		"gw_rpc_abc":       "rpc_abc",
		"rpc_":             "",
		"RPC_abc":          "RPC_abc",
	} {
		if got := SessionID(key); got != want {
			t.Errorf("SessionID(%q) = %q, want %q", key, got, want)
		}
	}
	if got := RPCKey("abc"); got != "rpc_abc" {
		t.Errorf("RPCKey = %q", got)
	}
}

// Resolve tries <id>, rpc_<id>, gw_<id> in that order: a bare row (our earlier releases, channel sessions)
// wins over a prefixed one, rpc_ over gw_.
func TestResolveOrder(t *testing.T) {
	s, _ := openTestChat(t)
	ctx := t.Context()
	for _, key := range []string{"all", "rpc_all", "gw_all", "rpc_two", "gw_two", "gw_gwonly", "bare"} {
		mustAppend(t, s, key, "user", "in "+key, t0)
	}
	for id, want := range map[string]string{
		"all":     "all",
		"two":     "rpc_two",
		"gwonly":  "gw_gwonly",
		"bare":    "bare",
		"rpc_two": "rpc_two", // a full key names its own row
	} {
		meta, err := s.Resolve(ctx, id)
		if err != nil || meta.Key != want {
			t.Errorf("Resolve(%q) = %q, %v; want %q", id, meta.Key, err, want)
		}
	}
	for _, id := range []string{"none", "", "rpc_bare"} {
		if meta, err := s.Resolve(ctx, id); !errors.Is(err, ErrNotFound) {
			t.Errorf("Resolve(%q) = %+v, %v; want ErrNotFound", id, meta, err)
		}
	}
	// The metadata is the row's own: counts and owner come with it.
	if _, _, err := s.EnsureSession(ctx, "rpc_owned", "a", "alice", t0); err != nil {
		t.Fatal(err)
	}
	if meta, err := s.Resolve(ctx, "owned"); err != nil || meta.Key != "rpc_owned" || meta.Owner != "alice" || meta.AgentAlias != "a" {
		t.Errorf("Resolve(owned) = %+v, %v", meta, err)
	}
	if meta, err := s.Resolve(ctx, "two"); err != nil || meta.MessageCount != 1 {
		t.Errorf("Resolve(two) count = %+v, %v", meta, err)
	}
	s.Close()
	if _, err := s.Resolve(context.Background(), "all"); !errors.Is(err, ErrClosed) {
		t.Errorf("Resolve after Close: %v", err)
	}
}

// Reviving a row that names no agent (an upstream orphan, a JSONL import, a channel session) records the agent
// it now runs under; a row with an agent keeps it.
func TestEnsureSessionFillsMissingAgent(t *testing.T) {
	s, _ := openTestChat(t)
	ctx := t.Context()
	mustAppend(t, s, "orphan", "user", "hi", t0)
	meta, existed, err := s.EnsureSession(ctx, "orphan", "a", "", t0.Add(1))
	if err != nil || !existed || meta.AgentAlias != "a" || meta.MessageCount != 1 {
		t.Fatalf("EnsureSession(orphan) = %+v, existed %v, %v", meta, existed, err)
	}
	meta, existed, err = s.EnsureSession(ctx, "orphan", "b", "", t0.Add(2))
	if err != nil || !existed || meta.AgentAlias != "a" {
		t.Fatalf("second EnsureSession changed the agent: %+v, existed %v, %v", meta, existed, err)
	}
	if !meta.CreatedAt.Equal(t0) || !meta.LastActivity.Equal(t0) {
		t.Fatalf("EnsureSession touched the times of an existing row: %+v", meta)
	}
	meta, existed, err = s.EnsureSession(ctx, "fresh", "a", "", t0)
	if err != nil || existed || meta.AgentAlias != "a" {
		t.Fatalf("EnsureSession(fresh) = %+v, existed %v, %v", meta, existed, err)
	}
}

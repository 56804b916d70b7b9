package store

import (
	"context"
	"maps"
	"testing"
	"time"
)

func TestCountAndRenameAgent(t *testing.T) {
	s, _ := openTestChat(t)
	ctx := context.Background()
	now := time.Unix(1_700_000_000, 0)
	for key, alias := range map[string]string{"s1": "bot", "s2": "bot", "s3": "other", "s4": ""} {
		if _, _, err := s.EnsureSession(ctx, key, alias, "", now); err != nil {
			t.Fatal(err)
		}
	}
	counts, err := s.CountByAgent(ctx)
	if err != nil || !maps.Equal(counts, map[string]int{"bot": 2, "other": 1}) {
		t.Fatalf("counts %v %v", counts, err)
	}
	n, err := s.RenameAgent(ctx, "bot", "robot")
	if err != nil || n != 2 {
		t.Fatalf("rename: %d %v", n, err)
	}
	if m, _ := s.Meta(ctx, "s1"); m.AgentAlias != "robot" {
		t.Fatalf("s1 attributed to %q", m.AgentAlias)
	}
	counts, _ = s.CountByAgent(ctx)
	if !maps.Equal(counts, map[string]int{"robot": 2, "other": 1}) {
		t.Fatalf("counts after rename %v", counts)
	}
}

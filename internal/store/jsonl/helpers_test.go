package jsonl

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/zeroclaw-go/zeroclaw/internal/store"
)

var t0 = time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)

func openTestChat(t testing.TB) (*store.ChatStore, string) {
	t.Helper()
	p := filepath.Join(t.TempDir(), "data", "sessions", "sessions.db")
	s, err := store.OpenChat(context.Background(), p)
	if err != nil {
		t.Fatalf("OpenChat: %v", err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s, p
}

func mustAppend(t testing.TB, s *store.ChatStore, key, role, content string, now time.Time) int {
	t.Helper()
	idx, err := s.Append(context.Background(), key, role, content, now)
	if err != nil {
		t.Fatalf("Append(%s): %v", key, err)
	}
	return idx
}

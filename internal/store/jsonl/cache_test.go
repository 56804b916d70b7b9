package jsonl

import (
	"os"
	"path/filepath"
	"testing"
)

// Append caches each session's row count (store's rowCounts). The index it returns must stay the row's true
// position when a JSONL import re-creates a deleted session behind the cache (store's
// TestAppendIndexExactWhenRowsChangeBehindTheCache covers the other cases).
func TestAppendIndexExactAfterImportRecreatesSession(t *testing.T) {
	ctx := t.Context()
	s, _ := openTestChat(t)
	// A deleted session re-created by the JSONL import (under a new source name it never consumed).
	if err := s.Delete(ctx, "j"); err != nil {
		t.Fatal(err)
	}
	mustAppend(t, s, "j", "user", "cached", t0)
	if err := s.Delete(ctx, "j"); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "j.jsonl"), []byte(`{"role":"user","content":"a"}`+"\n"+`{"role":"assistant","content":"b"}`+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := ImportDir(ctx, s, dir, t0); err != nil {
		t.Fatal(err)
	}
	if got := mustAppend(t, s, "j", "user", "after import", t0); got != 2 {
		t.Fatalf("append after import: index %d, want 2", got)
	}
	msgs, err := s.All(ctx, "j")
	if err != nil || len(msgs) != 3 || msgs[2].Index != 2 || msgs[2].Content != "after import" {
		t.Fatalf("messages after import: %+v, %v", msgs, err)
	}
}

package jsonl

import (
	"errors"
	"github.com/zeroclaw-go/zeroclaw/internal/store"
	"path/filepath"
	"testing"
)

// Two session keys that differ only in characters FileName replaces ("s.1", "s_1", "s:1") would share one
// file: a principal opening the second would read and write the first one's messages, whoever owns it. The
// JSONL backend gives a file to one key only; the others are refused (store.ErrInvalid) before anything is written,
// through every call that can create a session.
func TestJSONLChatRefusesKeysSharingAFile(t *testing.T) {
	ctx := t.Context()
	dir := filepath.Join(t.TempDir(), "sessions")
	c, err := Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, _, err := c.EnsureSession(ctx, "gw_s.1", "default", "owner", tImport); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Append(ctx, "gw_s.1", "user", "owner secret", tImport); err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"gw_s_1", "gw_s:1", "gw_s/1"} {
		if _, _, err := c.EnsureSession(ctx, key, "default", "intruder", tImport); !errors.Is(err, store.ErrInvalid) {
			t.Errorf("EnsureSession(%q) = %v, want store.ErrInvalid", key, err)
		}
		if _, err := c.BeginTurn(ctx, key, "default", "intruder", "t1", tImport, "hi"); !errors.Is(err, store.ErrInvalid) {
			t.Errorf("BeginTurn(%q) = %v, want store.ErrInvalid", key, err)
		}
		if _, err := c.Append(ctx, key, "user", "hi", tImport); !errors.Is(err, store.ErrInvalid) {
			t.Errorf("Append(%q) = %v, want store.ErrInvalid", key, err)
		}
		if _, err := c.Meta(ctx, key); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("Meta(%q) = %v, want no session", key, err)
		}
	}
	msgs, err := c.All(ctx, "gw_s.1")
	if err != nil || len(msgs) != 1 || msgs[0].Content != "owner secret" {
		t.Errorf("gw_s.1 = %+v, %v; want its one message", msgs, err)
	}
	// A key of its own file is fine.
	if _, _, err := c.EnsureSession(ctx, "gw_s_2", "default", "intruder", tImport); err != nil {
		t.Errorf("EnsureSession(gw_s_2) = %v", err)
	}
	// A multi-byte character becomes one '_' per byte: "\u00e9" (2 bytes) shares a file with "__".
	if _, _, err := c.EnsureSession(ctx, "x\u00e9", "default", "owner", tImport); err != nil {
		t.Fatal(err)
	}
	if _, _, err := c.EnsureSession(ctx, "x__", "default", "intruder", tImport); !errors.Is(err, store.ErrInvalid) {
		t.Errorf("EnsureSession(x__) = %v, want store.ErrInvalid", err)
	}
}

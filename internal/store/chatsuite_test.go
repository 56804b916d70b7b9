package store_test

import (
	"context"
	"path/filepath"
	"sync"
	"testing"

	"github.com/zeroclaw-go/zeroclaw/internal/store"
	"github.com/zeroclaw-go/zeroclaw/internal/store/chattest"
)

// The store.Chat suite against the SQLite store (package pgchat runs it against PostgreSQL).
func TestChatSuiteSQLite(t *testing.T) {
	var mu sync.Mutex
	paths := map[store.Chat]string{}
	open := func(t *testing.T, p string) store.Chat {
		s, err := store.OpenChat(context.Background(), p)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = s.Close() })
		mu.Lock()
		paths[s] = p
		mu.Unlock()
		return s
	}
	chattest.Run(t, chattest.Backend{
		Open: func(t *testing.T) store.Chat {
			return open(t, filepath.Join(t.TempDir(), "data", "sessions", "sessions.db"))
		},
		// A restart: the process ends and the next one opens the same file.
		Crash: func(t *testing.T, s store.Chat) store.Chat {
			_ = s.Close()
			mu.Lock()
			p := paths[s]
			mu.Unlock()
			return open(t, p)
		},
	})
}

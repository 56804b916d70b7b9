package pgchat_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/zeroclaw-go/zeroclaw/internal/pgdb"
	"github.com/zeroclaw-go/zeroclaw/internal/pgdb/pgtest"
	"github.com/zeroclaw-go/zeroclaw/internal/store"
	"github.com/zeroclaw-go/zeroclaw/internal/store/chattest"
	"github.com/zeroclaw-go/zeroclaw/internal/store/pgchat"
)

// daemon is one daemon's store on schema: a pool of its own and a holder id of its own.
func daemon(t *testing.T, dsn, schema string, ttl time.Duration) (*pgchat.Store, *pgdb.Pool) {
	t.Helper()
	p := pgtest.OpenSchema(t, dsn, schema)
	s, err := pgchat.Open(t.Context(), p, pgchat.Options{TurnTTL: ttl})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s, p
}

// The store.Chat suite against PostgreSQL (package store runs it against SQLite).
func TestChatSuitePostgres(t *testing.T) {
	dsn := pgtest.DSN(t)
	if dsn == "" {
		return
	}
	var mu sync.Mutex
	schemas := map[store.Chat]string{}
	chattest.Run(t, chattest.Backend{
		Open: func(t *testing.T) store.Chat {
			schema := pgtest.Schema(t, dsn)
			s, _ := daemon(t, dsn, schema, 0)
			mu.Lock()
			schemas[s] = schema
			mu.Unlock()
			return s
		},
		// A daemon that died: it stops renewing (Close does not release), and its leases are past their TTL,
		// which the lease row says by having expired. The next daemon is another pool with another holder id.
		Crash: func(t *testing.T, s store.Chat) store.Chat {
			_ = s.Close()
			mu.Lock()
			schema := schemas[s]
			mu.Unlock()
			next, p := daemon(t, dsn, schema, 0)
			if _, err := p.Exec(t.Context(), "UPDATE zc_leases SET expires_at = now() - interval '1 second'"); err != nil {
				t.Fatal(err)
			}
			return next
		},
	})
}

var t0 = chattest.T0

func mustBegin(t *testing.T, s *pgchat.Store, key, turn string) {
	t.Helper()
	if _, err := s.BeginTurn(t.Context(), key, "a", "", turn, t0, "prompt of "+turn); err != nil {
		t.Fatalf("BeginTurn(%s, %s): %v", key, turn, err)
	}
}

var _ = context.Background

// FuzzSearchQuery: whatever a user types, the query literal is one the server accepts, and searching with it
// never fails.
func FuzzSearchQuery(f *testing.F) {
	for _, seed := range []string{"", "hello", `"`, "a AND b", "x*", "(a OR b)", "col:x", "\x00", "日本 語", `'a':* & !b`, `\`, "a<->b", "ÀÉÎ"} {
		f.Add(seed)
	}
	dsn := pgtest.DSN(f)
	if dsn == "" {
		return
	}
	p := pgtest.OpenSchema(f, dsn, pgtest.Schema(f, dsn))
	s, err := pgchat.Open(f.Context(), p, pgchat.Options{})
	if err != nil {
		f.Fatal(err)
	}
	if _, err := s.Append(f.Context(), "k", "user", "hello world", t0); err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, q string) {
		if _, err := s.List(t.Context(), q, 5); err != nil {
			t.Fatalf("List(%q): %v", q, err)
		}
		if _, err := s.Append(t.Context(), "fuzz", "user", q, t0); err != nil {
			t.Fatalf("Append(%q): %v", q, err)
		}
	})
}

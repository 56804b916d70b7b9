package pgchat_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/zeroclaw-go/zeroclaw/internal/pgdb/pgtest"
	"github.com/zeroclaw-go/zeroclaw/internal/store"
	"github.com/zeroclaw-go/zeroclaw/internal/store/pgchat"
)

// BenchmarkTurn is one turn's writes (BeginTurn with its prompt, EndTurn with the answer) on SQLite and on
// PostgreSQL (with ZEROCLAW_TEST_PG_DSN), one session after another, and the same with 8 sessions at once.
func BenchmarkTurn(b *testing.B) {
	backends := map[string]func(b *testing.B) store.Chat{
		"sqlite": func(b *testing.B) store.Chat {
			s, err := store.OpenChat(context.Background(), filepath.Join(b.TempDir(), "sessions.db"))
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { _ = s.Close() })
			return s
		},
	}
	if dsn := pgtest.DSN(b); dsn != "" {
		backends["postgres"] = func(b *testing.B) store.Chat {
			p := pgtest.OpenSchema(b, dsn, pgtest.Schema(b, dsn))
			s, err := pgchat.Open(context.Background(), p, pgchat.Options{})
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { _ = s.Close() })
			return s
		}
	}
	for _, name := range []string{"sqlite", "postgres"} {
		open, ok := backends[name]
		if !ok {
			continue
		}
		b.Run(name+"/serial", func(b *testing.B) {
			s := open(b)
			ctx := context.Background()
			for i := 0; b.Loop(); i++ {
				key := fmt.Sprintf("s%d", i%8)
				if _, err := s.BeginTurn(ctx, key, "a", "", "t", t0, "a question of some forty bytes or so ok"); err != nil {
					b.Fatal(err)
				}
				if _, err := s.EndTurn(ctx, key, "assistant", "an answer of about the same length, more or less", t0, "idle"); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(name+"/8sessions", func(b *testing.B) {
			s := open(b)
			ctx := context.Background()
			b.SetParallelism(8)
			b.RunParallel(func(pb *testing.PB) {
				k := fmt.Sprintf("par-%p", pb) // a session per goroutine: turns of one session do not overlap
				for pb.Next() {
					if _, err := s.BeginTurn(ctx, k, "a", "", "t", t0, "q"); err != nil {
						b.Fatal(err)
					}
					if _, err := s.EndTurn(ctx, k, "assistant", "a", t0, "idle"); err != nil {
						b.Fatal(err)
					}
				}
			})
		})
	}
}

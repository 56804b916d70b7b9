package cronpg

import "github.com/zeroclaw-go/zeroclaw/internal/pgdb"

// PoolOf is s's pool, for tests that age claims.
func PoolOf(s *Store) *pgdb.Pool { return s.db }

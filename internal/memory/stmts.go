package memory

import (
	"context"
	"database/sql"
	"errors"
	"sync"
)

// stmtCache holds the read queries prepared on the reader pool, so a recall (one runs before every turn's
// request) parses its SQL once per process instead of on every call. database/sql re-prepares a cached
// statement on each pool connection it runs on and keeps a statement whose rows are still open alive until
// they close, so dropping the cache never disturbs a query in flight.
type stmtCache struct {
	db *sql.DB

	mu     sync.Mutex // guards the fields below
	m      map[string]*sql.Stmt
	closed bool
}

// maxCachedStmts bounds the cache (the IN lists of a recall make one query text per candidate count); past it
// the cache starts over.
const maxCachedStmts = 64

// stmt returns query prepared on the pool, preparing it on first use.
func (c *stmtCache) stmt(ctx context.Context, query string) (*sql.Stmt, error) {
	c.mu.Lock()
	st, ok := c.m[query]
	c.mu.Unlock()
	if ok {
		return st, nil
	}
	st, err := c.db.PrepareContext(ctx, query) // outside mu: it may wait for a pool connection
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		_ = st.Close()
		return nil, errors.New("memory: statement cache closed")
	}
	if prev, ok := c.m[query]; ok { // prepared meanwhile by another call
		_ = st.Close()
		return prev, nil
	}
	if c.m == nil || len(c.m) >= maxCachedStmts {
		for _, old := range c.m {
			_ = old.Close()
		}
		c.m = make(map[string]*sql.Stmt)
	}
	c.m[query] = st
	return st, nil
}

// QueryContext is db.QueryContext through the cache.
func (c *stmtCache) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	st, err := c.stmt(ctx, query)
	if err != nil {
		return nil, err
	}
	return st.QueryContext(ctx, args...)
}

// QueryRowContext is db.QueryRowContext through the cache; a failed prepare is reported by Scan.
func (c *stmtCache) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	st, err := c.stmt(ctx, query)
	if err != nil {
		return c.db.QueryRowContext(ctx, query, args...) // reports the same error from Scan
	}
	return st.QueryRowContext(ctx, args...)
}

// close closes the cached statements; later calls fail.
func (c *stmtCache) close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, st := range c.m {
		_ = st.Close()
	}
	c.m, c.closed = nil, true
}

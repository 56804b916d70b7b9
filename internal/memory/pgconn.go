package memory

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
)

// The PostgreSQL backend talks to the server through pgconn, pgx's wire-protocol layer, and not through pgx
// itself: pgx's type system (pgtype, and encoding/xml it pulls in) was ~3 MB of the daemon's binary, for queries
// whose parameters and results are a few strings, times, numbers and text arrays. Parameters go as text with
// their types left to the server, which infers them from the statement as it did for pgx's prepared statements,
// and results come back as text.

// pgPoolSize is the most connections a backend holds open at once.
const pgPoolSize = 8

// pgPool lends connections, opening them on demand, up to pgPoolSize at once.
type pgPool struct {
	cfg   *pgconn.Config
	slots chan struct{} // one token per connection lent

	mu     sync.Mutex // guards the fields below
	idle   []*pgconn.PgConn
	closed bool
}

func newPGPool(cfg *pgconn.Config) *pgPool {
	return &pgPool{cfg: cfg, slots: make(chan struct{}, pgPoolSize)}
}

var errPGClosed = errors.New("memory: postgres: backend closed")

func (p *pgPool) acquire(ctx context.Context) (*pgconn.PgConn, error) {
	select {
	case p.slots <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		<-p.slots
		return nil, errPGClosed
	}
	if n := len(p.idle); n > 0 {
		c := p.idle[n-1]
		p.idle = p.idle[:n-1]
		p.mu.Unlock()
		return c, nil
	}
	p.mu.Unlock()
	c, err := pgconn.ConnectConfig(ctx, p.cfg)
	if err != nil {
		<-p.slots
		return nil, err
	}
	return c, nil
}

// release takes back a connection; one that is closed, busy or inside a transaction is closed instead.
func (p *pgPool) release(c *pgconn.PgConn) {
	defer func() { <-p.slots }()
	p.mu.Lock()
	if !p.closed && !c.IsClosed() && !c.IsBusy() && c.TxStatus() == 'I' {
		p.idle = append(p.idle, c)
		p.mu.Unlock()
		return
	}
	p.mu.Unlock()
	closeCtx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	_ = c.Close(closeCtx)
}

// close closes the idle connections; those lent are closed as they come back.
func (p *pgPool) close() {
	p.mu.Lock()
	idle := p.idle
	p.idle, p.closed = nil, true
	p.mu.Unlock()
	closeCtx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	for _, c := range idle {
		_ = c.Close(closeCtx)
	}
}

// pgRow is one result row: each column's text, nil for NULL.
type pgRow [][]byte

// pgRunner runs statements: the pool (each statement on a connection it lends) or a transaction.
type pgRunner interface {
	query(ctx context.Context, sql string, args ...any) ([]pgRow, error)
	exec(ctx context.Context, sql string, args ...any) (int64, error)
}

func (p *pgPool) query(ctx context.Context, sql string, args ...any) ([]pgRow, error) {
	c, err := p.acquire(ctx)
	if err != nil {
		return nil, err
	}
	defer p.release(c)
	return pgQuery(ctx, c, sql, args)
}

func (p *pgPool) exec(ctx context.Context, sql string, args ...any) (int64, error) {
	c, err := p.acquire(ctx)
	if err != nil {
		return 0, err
	}
	defer p.release(c)
	return pgExecOn(ctx, c, sql, args)
}

// begin starts a transaction on a connection of its own; end it with commit or rollback.
func (p *pgPool) begin(ctx context.Context) (*pgTx, error) {
	c, err := p.acquire(ctx)
	if err != nil {
		return nil, err
	}
	if _, err := c.Exec(ctx, "BEGIN").ReadAll(); err != nil {
		p.release(c)
		return nil, err
	}
	return &pgTx{p: p, c: c}, nil
}

type pgTx struct {
	p *pgPool
	c *pgconn.PgConn // nil once ended
}

func (tx *pgTx) query(ctx context.Context, sql string, args ...any) ([]pgRow, error) {
	return pgQuery(ctx, tx.c, sql, args)
}

func (tx *pgTx) exec(ctx context.Context, sql string, args ...any) (int64, error) {
	return pgExecOn(ctx, tx.c, sql, args)
}

// script runs statements without parameters, several at once (the simple query protocol).
func (tx *pgTx) script(ctx context.Context, sql string) error {
	_, err := tx.c.Exec(ctx, sql).ReadAll()
	return err
}

func (tx *pgTx) commit(ctx context.Context) error {
	_, err := tx.c.Exec(ctx, "COMMIT").ReadAll()
	tx.p.release(tx.c)
	tx.c = nil
	return err
}

// rollback ends the transaction unless commit did; it is safe to defer.
func (tx *pgTx) rollback(ctx context.Context) {
	if tx.c == nil {
		return
	}
	_, _ = tx.c.Exec(ctx, "ROLLBACK").ReadAll()
	tx.p.release(tx.c)
	tx.c = nil
}

func pgQuery(ctx context.Context, c *pgconn.PgConn, sql string, args []any) ([]pgRow, error) {
	params, err := pgParams(args)
	if err != nil {
		return nil, err
	}
	rr := c.ExecParams(ctx, sql, params, nil, nil, nil)
	var rows []pgRow
	for rr.NextRow() {
		vals := rr.Values() // valid until the next row: copied
		row := make(pgRow, len(vals))
		for i, v := range vals {
			if v != nil {
				row[i] = append([]byte{}, v...)
			}
		}
		rows = append(rows, row)
	}
	if _, err := rr.Close(); err != nil {
		return nil, err
	}
	return rows, nil
}

func pgExecOn(ctx context.Context, c *pgconn.PgConn, sql string, args []any) (int64, error) {
	params, err := pgParams(args)
	if err != nil {
		return 0, err
	}
	tag, err := c.ExecParams(ctx, sql, params, nil, nil, nil).Close()
	if err != nil {
		return 0, err
	}
	return tag.RowsAffected(), nil
}

// pgParams renders parameters in PostgreSQL's text input forms; nil is NULL.
func pgParams(args []any) ([][]byte, error) {
	out := make([][]byte, len(args))
	for i, a := range args {
		switch v := a.(type) {
		case nil:
		case string:
			out[i] = []byte(v)
		case *string:
			if v != nil {
				out[i] = []byte(*v)
			}
		case int:
			out[i] = strconv.AppendInt(nil, int64(v), 10)
		case int64:
			out[i] = strconv.AppendInt(nil, v, 10)
		case time.Time:
			out[i] = v.AppendFormat(nil, time.RFC3339Nano)
		case []string:
			out[i] = pgArrayLiteral(v)
		default:
			return nil, fmt.Errorf("memory: postgres: parameter %d of type %T", i+1, a)
		}
	}
	return out, nil
}

// pgArrayLiteral is a text[] in PostgreSQL's array input form, every element quoted.
func pgArrayLiteral(ss []string) []byte {
	b := []byte{'{'}
	for i, s := range ss {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, '"')
		for j := 0; j < len(s); j++ {
			if s[j] == '"' || s[j] == '\\' {
				b = append(b, '\\')
			}
			b = append(b, s[j])
		}
		b = append(b, '"')
	}
	return append(b, '}')
}

// pgParseArray reads a one-dimensional text[] in PostgreSQL's array output form.
func pgParseArray(v []byte) ([]string, error) {
	s := string(v)
	if len(s) < 2 || s[0] != '{' || s[len(s)-1] != '}' {
		return nil, fmt.Errorf("memory: postgres: not an array: %q", s)
	}
	s = s[1 : len(s)-1]
	out := []string{}
	for len(s) > 0 {
		var elem strings.Builder
		if s[0] == '"' {
			i := 1
			for ; i < len(s) && s[i] != '"'; i++ {
				if s[i] == '\\' && i+1 < len(s) {
					i++
				}
				elem.WriteByte(s[i])
			}
			if i >= len(s) {
				return nil, fmt.Errorf("memory: postgres: unterminated array element in %q", v)
			}
			s = s[i+1:]
		} else {
			end := strings.IndexByte(s, ',')
			if end < 0 {
				end = len(s)
			}
			elem.WriteString(s[:end])
			s = s[end:]
		}
		out = append(out, elem.String())
		if len(s) > 0 {
			if s[0] != ',' {
				return nil, fmt.Errorf("memory: postgres: malformed array %q", v)
			}
			s = s[1:]
		}
	}
	return out, nil
}

// pgTimeLayout reads timestamptz output with DateStyle ISO (the connection sets it, and TimeZone UTC).
const pgTimeLayout = "2006-01-02 15:04:05.999999999Z07"

func pgParseTime(v []byte) (time.Time, error) {
	t, err := time.Parse(pgTimeLayout, string(v))
	if err != nil {
		return time.Time{}, fmt.Errorf("memory: postgres: timestamp %q: %w", v, err)
	}
	return t, nil
}

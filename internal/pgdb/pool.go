package pgdb

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
)

// ErrInvalid marks a bad connection URL or option: something only the owner's config can fix.
var ErrInvalid = errors.New("pgdb: invalid")

// ErrClosed is the error of a call on a closed pool.
var ErrClosed = errors.New("pgdb: pool closed")

// DefaultSize is the most connections a pool holds open at once unless Options says otherwise.
const DefaultSize = 8

// connectTimeout bounds a connection attempt when the URL sets no connect_timeout.
const connectTimeout = 10 * time.Second

// Options tunes Open.
type Options struct {
	// Size is the most connections open at once (0: DefaultSize).
	Size int
	// AppName is sent as application_name (pg_stat_activity shows it); "" leaves the URL's.
	AppName string
	// Schema, when set, is the schema the pool's tables live in: Open creates it if it is missing and every
	// connection has it first on its search_path. It must be a plain identifier (ASCII letters, digits,
	// underscores, not starting with a digit).
	Schema string
}

// ValidIdent reports whether id is a plain SQL identifier we accept for schema and table names.
func ValidIdent(id string) bool {
	if id == "" || len(id) > 63 {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		switch {
		case c == '_', c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z':
		case c >= '0' && c <= '9' && i > 0:
		default:
			return false
		}
	}
	return true
}

// Pool lends connections, opening them on demand, up to its size at once. It is safe for concurrent use.
type Pool struct {
	cfg   *pgconn.Config
	slots chan struct{} // one token per connection lent

	mu     sync.Mutex // guards the fields below
	idle   []*pgconn.PgConn
	closed bool
}

// ParseURL checks a connection URL (postgres://… or the key=value form) without connecting. Its error never
// quotes the URL.
func ParseURL(url string) (*pgconn.Config, error) {
	if strings.TrimSpace(url) == "" {
		return nil, fmt.Errorf("%w: db_url is empty", ErrInvalid)
	}
	cfg, err := pgconn.ParseConfig(url)
	if err != nil {
		// The parser's message may quote the URL (and so a password): say only what is wrong.
		return nil, fmt.Errorf("%w: db_url is not a PostgreSQL connection URL (postgres://user:password@host:port/database or key=value form)", ErrInvalid)
	}
	if cfg.ConnectTimeout == 0 {
		cfg.ConnectTimeout = connectTimeout
	}
	// Results are read as text: timestamps in the ISO style and in UTC, whatever the server's defaults.
	cfg.RuntimeParams["datestyle"] = "ISO"
	cfg.RuntimeParams["timezone"] = "UTC"
	return cfg, nil
}

// New is a pool for cfg (from ParseURL); it connects on first use.
func New(cfg *pgconn.Config, o Options) *Pool {
	size := o.Size
	if size <= 0 {
		size = DefaultSize
	}
	if o.AppName != "" {
		cfg.RuntimeParams["application_name"] = o.AppName
	}
	if o.Schema != "" {
		cfg.RuntimeParams["search_path"] = Quote(o.Schema)
	}
	return &Pool{cfg: cfg, slots: make(chan struct{}, size)}
}

// Open parses url, makes a pool and checks that the server answers.
func Open(ctx context.Context, url string, o Options) (*Pool, error) {
	if o.Schema != "" && !ValidIdent(o.Schema) {
		return nil, fmt.Errorf("%w: schema %q: use ASCII letters, digits and underscores, not starting with a digit", ErrInvalid, o.Schema)
	}
	cfg, err := ParseURL(url)
	if err != nil {
		return nil, err
	}
	p := New(cfg, o)
	check := "SELECT 1"
	if o.Schema != "" {
		check = "CREATE SCHEMA IF NOT EXISTS " + Quote(o.Schema)
	}
	if _, err := p.Exec(ctx, check); err != nil && Code(err) != "23505" && Code(err) != "42P06" {
		// 23505/42P06: another daemon created the schema at the same moment; it exists, which is all we need.
		p.Close()
		return nil, fmt.Errorf("pgdb: connect: %w", err)
	}
	return p, nil
}

func (p *Pool) acquire(ctx context.Context) (*pgconn.PgConn, error) {
	select {
	case p.slots <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		<-p.slots
		return nil, ErrClosed
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
func (p *Pool) release(c *pgconn.PgConn) {
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

// Close closes the idle connections; those lent are closed as they come back.
func (p *Pool) Close() {
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

// Runner runs statements: the pool (each statement on a connection it lends) or a transaction.
type Runner interface {
	Query(ctx context.Context, sql string, args ...any) ([]Row, error)
	Exec(ctx context.Context, sql string, args ...any) (int64, error)
}

var _ Runner = (*Pool)(nil)
var _ Runner = (*Tx)(nil)

// Query runs one statement and returns its rows.
func (p *Pool) Query(ctx context.Context, sql string, args ...any) ([]Row, error) {
	c, err := p.acquire(ctx)
	if err != nil {
		return nil, err
	}
	defer p.release(c)
	return query(ctx, c, sql, args)
}

// Exec runs one statement and returns the number of rows it affected.
func (p *Pool) Exec(ctx context.Context, sql string, args ...any) (int64, error) {
	c, err := p.acquire(ctx)
	if err != nil {
		return 0, err
	}
	defer p.release(c)
	return exec(ctx, c, sql, args)
}

// Begin starts a transaction on a connection of its own; end it with Commit or Rollback.
func (p *Pool) Begin(ctx context.Context) (*Tx, error) {
	c, err := p.acquire(ctx)
	if err != nil {
		return nil, err
	}
	if _, err := c.Exec(ctx, "BEGIN").ReadAll(); err != nil {
		p.release(c)
		return nil, err
	}
	return &Tx{p: p, c: c}, nil
}

// InTx runs fn in a transaction, committed when fn returns nil and rolled back otherwise.
func (p *Pool) InTx(ctx context.Context, fn func(tx *Tx) error) error {
	tx, err := p.Begin(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback(context.WithoutCancel(ctx))
	if err := fn(tx); err != nil {
		return err
	}
	return tx.Commit(ctx)
}

// Tx is one transaction on one connection. It is not safe for concurrent use.
type Tx struct {
	p *Pool
	c *pgconn.PgConn // nil once ended
}

// Query runs one statement in the transaction.
func (tx *Tx) Query(ctx context.Context, sql string, args ...any) ([]Row, error) {
	return query(ctx, tx.c, sql, args)
}

// Exec runs one statement in the transaction.
func (tx *Tx) Exec(ctx context.Context, sql string, args ...any) (int64, error) {
	return exec(ctx, tx.c, sql, args)
}

// Script runs statements without parameters, several at once (the simple query protocol).
func (tx *Tx) Script(ctx context.Context, sql string) error {
	_, err := tx.c.Exec(ctx, sql).ReadAll()
	return err
}

// Commit ends the transaction, keeping its writes.
func (tx *Tx) Commit(ctx context.Context) error {
	if tx.c == nil {
		return errors.New("pgdb: commit of an ended transaction")
	}
	_, err := tx.c.Exec(ctx, "COMMIT").ReadAll()
	tx.p.release(tx.c)
	tx.c = nil
	return err
}

// Rollback ends the transaction unless Commit did; it is safe to defer.
func (tx *Tx) Rollback(ctx context.Context) {
	if tx.c == nil {
		return
	}
	_, _ = tx.c.Exec(ctx, "ROLLBACK").ReadAll()
	tx.p.release(tx.c)
	tx.c = nil
}

func query(ctx context.Context, c *pgconn.PgConn, sql string, args []any) ([]Row, error) {
	params, err := Params(args)
	if err != nil {
		return nil, err
	}
	rr := c.ExecParams(ctx, sql, params, nil, nil, nil)
	var rows []Row
	for rr.NextRow() {
		vals := rr.Values() // valid until the next row: copied
		row := make(Row, len(vals))
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

func exec(ctx context.Context, c *pgconn.PgConn, sql string, args []any) (int64, error) {
	params, err := Params(args)
	if err != nil {
		return 0, err
	}
	tag, err := c.ExecParams(ctx, sql, params, nil, nil, nil).Close()
	if err != nil {
		return 0, err
	}
	return tag.RowsAffected(), nil
}

// Quote is id as a quoted identifier; id must already be checked (ASCII letters, digits, underscores).
func Quote(id string) string { return `"` + strings.ReplaceAll(id, `"`, `""`) + `"` }

// Code is the SQLSTATE of a server error ("" for any other error): "40001" serialization failure, "23505"
// unique violation, and so on.
func Code(err error) string {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return pe.Code
	}
	return ""
}

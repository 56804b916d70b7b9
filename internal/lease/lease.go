package lease

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/zeroclaw-go/zeroclaw/internal/pgdb"
)

// ErrLost is the error of an operation on a lease or slot this daemon no longer holds: it expired and another
// daemon took it, or it was never held with that token.
var ErrLost = errors.New("lease: lost (expired and taken by another daemon, or not held)")

// migrations is the package's schema (component "lease").
var migrations = []pgdb.Migration{{Version: 1, Name: "leases, work slots and peers", SQL: `
CREATE TABLE zc_leases (
    name        TEXT PRIMARY KEY,
    holder      TEXT NOT NULL,
    token       BIGINT NOT NULL,
    expires_at  TIMESTAMPTZ NOT NULL,
    acquired_at TIMESTAMPTZ NOT NULL
);
CREATE TABLE zc_work (
    kind        TEXT NOT NULL,
    slot        TEXT NOT NULL,
    holder      TEXT NOT NULL,
    token       BIGINT NOT NULL,
    state       TEXT NOT NULL CHECK (state IN ('running', 'done', 'interrupted')),
    claimed_at  TIMESTAMPTZ NOT NULL,
    lease_until TIMESTAMPTZ NOT NULL,
    finished_at TIMESTAMPTZ,
    outcome     TEXT NOT NULL DEFAULT '',
    PRIMARY KEY (kind, slot)
);
CREATE INDEX zc_work_running ON zc_work (lease_until) WHERE state = 'running';
CREATE TABLE zc_peers (
    holder     TEXT PRIMARY KEY,
    host       TEXT NOT NULL,
    pid        INTEGER NOT NULL,
    version    TEXT NOT NULL,
    started_at TIMESTAMPTZ NOT NULL,
    seen_at    TIMESTAMPTZ NOT NULL
);`}}

// maxName bounds lease names, slot kinds and slot keys (they come from config and job ids).
const maxName = 512

// Store is one daemon's view of the leases and slots in a database. It is safe for concurrent use.
type Store struct {
	db     *pgdb.Pool
	holder string
}

// NewHolderID is a daemon id unique among the daemons sharing a database: host, pid and 48 random bits.
func NewHolderID() string {
	host, _ := os.Hostname()
	if host == "" {
		host = "unknown"
	}
	var b [6]byte
	_, _ = rand.Read(b[:])
	return fmt.Sprintf("%s:%d:%s", host, os.Getpid(), hex.EncodeToString(b[:]))
}

// Open brings the schema up to date (under the migration lock) and returns the store of holder.
func Open(ctx context.Context, db *pgdb.Pool, holder string) (*Store, error) {
	if holder == "" || len(holder) > maxName {
		return nil, fmt.Errorf("lease: holder id must be 1..%d bytes", maxName)
	}
	if _, err := pgdb.Migrate(ctx, db, "lease", migrations); err != nil {
		return nil, err
	}
	return &Store{db: db, holder: holder}, nil
}

// Holder is this store's daemon id.
func (s *Store) Holder() string { return s.holder }

// Lease is a held lease: who, with which fencing token, until when (the server's time).
type Lease struct {
	Name    string
	Holder  string
	Token   int64
	Expires time.Time
}

func checkName(what, v string) error {
	if v == "" || len(v) > maxName {
		return fmt.Errorf("lease: %s must be 1..%d bytes", what, maxName)
	}
	return nil
}

func ms(d time.Duration) (int64, error) {
	if d < time.Millisecond {
		return 0, fmt.Errorf("lease: ttl %v is under a millisecond", d)
	}
	return d.Milliseconds(), nil
}

// Acquire takes the lease name for ttl if it is free or expired (the token then grows by one), or extends it if
// this daemon already holds it (same token). When another daemon holds it, ok is false and l describes that
// holder's lease.
func (s *Store) Acquire(ctx context.Context, name string, ttl time.Duration) (l Lease, ok bool, err error) {
	if err := checkName("lease name", name); err != nil {
		return Lease{}, false, err
	}
	t, err := ms(ttl)
	if err != nil {
		return Lease{}, false, err
	}
	rows, err := s.db.Query(ctx, `
INSERT INTO zc_leases AS l (name, holder, token, expires_at, acquired_at)
VALUES ($1, $2, 1, now() + $3::bigint * interval '1 millisecond', now())
ON CONFLICT (name) DO UPDATE SET
    token = CASE WHEN l.holder = EXCLUDED.holder AND l.expires_at >= now() THEN l.token ELSE l.token + 1 END,
    acquired_at = CASE WHEN l.holder = EXCLUDED.holder AND l.expires_at >= now() THEN l.acquired_at ELSE now() END,
    holder = EXCLUDED.holder,
    expires_at = EXCLUDED.expires_at
WHERE l.expires_at < now() OR l.holder = EXCLUDED.holder
RETURNING token, expires_at`, name, s.holder, t)
	if err != nil {
		return Lease{}, false, fmt.Errorf("lease: acquire %s: %w", name, err)
	}
	if len(rows) == 1 {
		l, err := leaseFrom(name, s.holder, rows[0])
		return l, err == nil, err
	}
	rows, err = s.db.Query(ctx, "SELECT token, expires_at, holder FROM zc_leases WHERE name = $1", name)
	if err != nil {
		return Lease{}, false, fmt.Errorf("lease: acquire %s: %w", name, err)
	}
	if len(rows) != 1 {
		return Lease{}, false, fmt.Errorf("lease: acquire %s: no row after a refused take", name)
	}
	l, err = leaseFrom(name, rows[0].String(2), rows[0])
	return l, false, err
}

func leaseFrom(name, holder string, r pgdb.Row) (Lease, error) {
	tok, err := r.Int64(0)
	if err != nil {
		return Lease{}, err
	}
	exp, err := r.Time(1)
	if err != nil {
		return Lease{}, err
	}
	return Lease{Name: name, Holder: holder, Token: tok, Expires: exp}, nil
}

// Renew extends a held lease by ttl from now; ErrLost when it expired (even if nobody took it: a lapse means
// another daemon may have acted, so the holder must acquire again and see a new token).
func (s *Store) Renew(ctx context.Context, l Lease, ttl time.Duration) (Lease, error) {
	t, err := ms(ttl)
	if err != nil {
		return l, err
	}
	rows, err := s.db.Query(ctx, `UPDATE zc_leases SET expires_at = now() + $4::bigint * interval '1 millisecond'
WHERE name = $1 AND holder = $2 AND token = $3 AND expires_at >= now() RETURNING token, expires_at`, l.Name, s.holder, l.Token, t)
	if err != nil {
		return l, fmt.Errorf("lease: renew %s: %w", l.Name, err)
	}
	if len(rows) != 1 {
		return l, fmt.Errorf("lease %s token %d: %w", l.Name, l.Token, ErrLost)
	}
	return leaseFrom(l.Name, s.holder, rows[0])
}

// Release gives a held lease up at once. The row stays (expired) so the next holder's token is still higher.
// Releasing a lease already lost is not an error.
func (s *Store) Release(ctx context.Context, l Lease) error {
	_, err := s.db.Exec(ctx, `UPDATE zc_leases SET expires_at = 'epoch'
WHERE name = $1 AND holder = $2 AND token = $3`, l.Name, s.holder, l.Token)
	if err != nil {
		return fmt.Errorf("lease: release %s: %w", l.Name, err)
	}
	return nil
}

// Check, inside a transaction, verifies that l is still held with its token and locks the lease's row until the
// transaction ends, so no other daemon can take it over before the transaction's writes commit. A write made
// on a lease's behalf runs Check first in the same transaction: that is the fence.
func Check(ctx context.Context, tx *pgdb.Tx, l Lease) error {
	rows, err := tx.Query(ctx, `SELECT 1 FROM zc_leases WHERE name = $1 AND holder = $2 AND token = $3 AND expires_at >= now() FOR SHARE`,
		l.Name, l.Holder, l.Token)
	if err != nil {
		return fmt.Errorf("lease: check %s: %w", l.Name, err)
	}
	if len(rows) != 1 {
		return fmt.Errorf("lease %s token %d: %w", l.Name, l.Token, ErrLost)
	}
	return nil
}

// Held lists the live leases (every holder's), for status and doctor.
func (s *Store) Held(ctx context.Context) ([]Lease, error) {
	rows, err := s.db.Query(ctx, "SELECT token, expires_at, holder, name FROM zc_leases WHERE expires_at >= now() ORDER BY name")
	if err != nil {
		return nil, fmt.Errorf("lease: list: %w", err)
	}
	out := make([]Lease, 0, len(rows))
	for _, r := range rows {
		l, err := leaseFrom(r.String(3), r.String(2), r)
		if err != nil {
			return nil, err
		}
		out = append(out, l)
	}
	return out, nil
}

package runstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/zeroclaw-go/zeroclaw/internal/store"
)

// FileName is the database's name inside the run state directory.
const FileName = "runs.db"

// schema is upstream's store/sqlite.rs SCHEMA, statement for statement, so upstream can open our file and we
// can open its. No user_version is set: versioning lives in the JSON envelope.
const schema = `
PRAGMA journal_mode = WAL;
PRAGMA synchronous = NORMAL;
PRAGMA busy_timeout = 5000;
CREATE TABLE IF NOT EXISTS sop_runs (run_id TEXT PRIMARY KEY, revision INTEGER NOT NULL,
  terminal INTEGER NOT NULL DEFAULT 0, last_progress_at TEXT, json TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS idx_sop_runs_terminal ON sop_runs(terminal);
CREATE TABLE IF NOT EXISTS sop_events (seq INTEGER PRIMARY KEY AUTOINCREMENT, run_id TEXT NOT NULL,
  ts TEXT NOT NULL, kind TEXT NOT NULL, actor TEXT, reason TEXT, payload TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS idx_sop_events_run ON sop_events(run_id);
CREATE TABLE IF NOT EXISTS sop_claims (run_id TEXT PRIMARY KEY, sop_name TEXT NOT NULL,
  lease_expires TEXT NOT NULL, json TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS idx_sop_claims_sop ON sop_claims(sop_name);
CREATE TABLE IF NOT EXISTS sop_proposals (id TEXT PRIMARY KEY, status TEXT NOT NULL, json TEXT NOT NULL);
`

// SQLite is the durable backend.
type SQLite struct {
	c      *store.Conns
	holder string
}

// OpenSQLite opens (creating if needed) dir/runs.db with store.OpenSQLite and applies the schema. The step
// ledger is written with synchronous=FULL after upstream's pragmas: a step acknowledged is on disk.
func OpenSQLite(ctx context.Context, dir string) (*SQLite, error) {
	path := filepath.Join(dir, FileName)
	c, err := store.OpenSQLite(ctx, path, "")
	if err != nil {
		return nil, fmt.Errorf("runstore: %w", err)
	}
	if _, err := c.W.ExecContext(ctx, schema+"PRAGMA synchronous = FULL;"); err != nil {
		_ = c.Close()
		return nil, fmt.Errorf("runstore: schema %s: %w", path, err)
	}
	return &SQLite{c: c, holder: fmt.Sprintf("pid-%d", os.Getpid())}, nil
}

// Backend implements Store.
func (s *SQLite) Backend() string { return "sqlite" }

// Close implements Store.
func (s *SQLite) Close() error { return s.c.Close() }

func (s *SQLite) tx(ctx context.Context, fn func(*sql.Tx) error) error {
	tx, err := s.c.W.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("runstore: begin: %w", err)
	}
	if err := fn(tx); err != nil {
		_ = tx.Rollback()
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("runstore: commit: %w", err)
	}
	return nil
}

func (s *SQLite) put(ctx context.Context, tx *sql.Tx, r Record, terminal bool) error {
	var rev uint64
	var js string
	err := tx.QueryRowContext(ctx, `SELECT revision, json FROM sop_runs WHERE run_id=?`, r.RunID).Scan(&rev, &js)
	switch {
	case errors.Is(err, sql.ErrNoRows):
	case err != nil:
		return fmt.Errorf("runstore: read %s: %w", r.RunID, err)
	default:
		if err := guard(r.RunID, rev, []byte(js), r); err != nil {
			return err
		}
	}
	t := 0
	if terminal {
		t = 1
	}
	_, err = tx.ExecContext(ctx, `INSERT INTO sop_runs (run_id, revision, terminal, last_progress_at, json)
		VALUES (?, ?, ?, ?, ?) ON CONFLICT(run_id) DO UPDATE SET revision=excluded.revision,
		terminal=excluded.terminal, last_progress_at=excluded.last_progress_at, json=excluded.json`,
		r.RunID, int64(r.Revision), t, r.LastProgressAt, string(r.JSON))
	if err != nil {
		return fmt.Errorf("runstore: write %s: %w", r.RunID, err)
	}
	return nil
}

func appendTx(ctx context.Context, tx *sql.Tx, evs []Event) error {
	for _, e := range evs {
		p := e.Payload
		if len(p) == 0 {
			p = []byte("{}")
		}
		if !json.Valid(p) {
			return fmt.Errorf("runstore: event %s of %s: payload is not JSON", e.Kind, e.RunID)
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO sop_events (run_id, ts, kind, actor, reason, payload)
			VALUES (?, ?, ?, ?, ?, ?)`, e.RunID, e.TS, e.Kind, nullable(e.Actor), nullable(e.Reason), string(p)); err != nil {
			return fmt.Errorf("runstore: append %s: %w", e.Kind, err)
		}
	}
	return nil
}

func nullable(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// Save implements Store.
func (s *SQLite) Save(ctx context.Context, r Record, evs ...Event) error {
	return s.tx(ctx, func(tx *sql.Tx) error {
		var term int
		err := tx.QueryRowContext(ctx, `SELECT terminal FROM sop_runs WHERE run_id=?`, r.RunID).Scan(&term)
		if err == nil && term == 1 {
			return fmt.Errorf("%w: run %s is already terminal", ErrStaleRevision, r.RunID)
		}
		if err := s.put(ctx, tx, r, false); err != nil {
			return err
		}
		return appendTx(ctx, tx, evs)
	})
}

// Finish implements Store.
func (s *SQLite) Finish(ctx context.Context, r Record, evs ...Event) error {
	return s.tx(ctx, func(tx *sql.Tx) error {
		if err := s.put(ctx, tx, r, true); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM sop_claims WHERE run_id=?`, r.RunID); err != nil {
			return fmt.Errorf("runstore: release %s: %w", r.RunID, err)
		}
		return appendTx(ctx, tx, evs)
	})
}

// Append implements Store.
func (s *SQLite) Append(ctx context.Context, evs ...Event) error {
	return s.tx(ctx, func(tx *sql.Tx) error { return appendTx(ctx, tx, evs) })
}

func (s *SQLite) query(ctx context.Context, q string, args ...any) ([]Record, error) {
	rows, err := s.c.R.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("runstore: query: %w", err)
	}
	defer rows.Close()
	var out []Record
	for rows.Next() {
		var r Record
		var rev int64
		var term int
		var lp sql.NullString
		var js string
		if err := rows.Scan(&r.RunID, &rev, &term, &lp, &js); err != nil {
			return nil, fmt.Errorf("runstore: scan: %w", err)
		}
		r.Revision, r.Terminal, r.LastProgressAt, r.JSON = uint64(rev), term == 1, lp.String, []byte(js)
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("runstore: query: %w", err)
	}
	return out, nil
}

const cols = `run_id, revision, terminal, last_progress_at, json`

// Active implements Store.
func (s *SQLite) Active(ctx context.Context) ([]Record, error) {
	return s.query(ctx, `SELECT `+cols+` FROM sop_runs WHERE terminal=0 ORDER BY rowid`)
}

// Terminal implements Store.
func (s *SQLite) Terminal(ctx context.Context, limit int) ([]Record, error) {
	if limit <= 0 {
		limit = -1
	}
	return s.query(ctx, `SELECT `+cols+` FROM sop_runs WHERE terminal=1 ORDER BY last_progress_at DESC, rowid DESC LIMIT ?`, limit)
}

// Load implements Store.
func (s *SQLite) Load(ctx context.Context, runID string) (Record, error) {
	rs, err := s.query(ctx, `SELECT `+cols+` FROM sop_runs WHERE run_id=?`, runID)
	if err != nil {
		return Record{}, err
	}
	if len(rs) == 0 {
		return Record{}, fmt.Errorf("%w: %s", ErrNotFound, runID)
	}
	return rs[0], nil
}

// Events implements Store.
func (s *SQLite) Events(ctx context.Context, runID string) ([]Event, error) {
	rows, err := s.c.R.QueryContext(ctx, `SELECT seq, run_id, ts, kind, actor, reason, payload FROM sop_events
		WHERE run_id=? ORDER BY seq`, runID)
	if err != nil {
		return nil, fmt.Errorf("runstore: events %s: %w", runID, err)
	}
	defer rows.Close()
	var out []Event
	for rows.Next() {
		var e Event
		var actor, reason sql.NullString
		var p string
		if err := rows.Scan(&e.Seq, &e.RunID, &e.TS, &e.Kind, &actor, &reason, &p); err != nil {
			return nil, fmt.Errorf("runstore: events %s: %w", runID, err)
		}
		e.Actor, e.Reason, e.Payload = actor.String, reason.String, []byte(p)
		out = append(out, e)
	}
	return out, rows.Err()
}

// Claim implements Store. The counts and the insert run in one IMMEDIATE transaction, so two claims cannot
// both pass a cap.
func (s *SQLite) Claim(ctx context.Context, runID, sopName string, perSOP, total int, now time.Time) (Claim, bool, error) {
	var c Claim
	ok := false
	err := s.tx(ctx, func(tx *sql.Tx) error {
		var n int
		if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM sop_runs WHERE run_id=? AND terminal=1`, runID).Scan(&n); err != nil {
			return fmt.Errorf("runstore: claim %s: %w", runID, err)
		}
		if n > 0 {
			return nil
		}
		if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM sop_claims WHERE run_id=?`, runID).Scan(&n); err != nil {
			return fmt.Errorf("runstore: claim %s: %w", runID, err)
		}
		if n > 0 {
			return nil
		}
		var per, all int
		if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM sop_claims WHERE sop_name=?`, sopName).Scan(&per); err != nil {
			return fmt.Errorf("runstore: claim %s: %w", runID, err)
		}
		if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM sop_claims`).Scan(&all); err != nil {
			return fmt.Errorf("runstore: claim %s: %w", runID, err)
		}
		if per >= perSOP || all >= total {
			return nil
		}
		c = leaseClaim(runID, sopName, s.holder, now)
		if err := s.putClaim(ctx, tx, c); err != nil {
			return err
		}
		ok = true
		return nil
	})
	return c, ok, err
}

func (s *SQLite) putClaim(ctx context.Context, tx *sql.Tx, c Claim) error {
	js, _ := json.Marshal(c)
	_, err := tx.ExecContext(ctx, `INSERT INTO sop_claims (run_id, sop_name, lease_expires, json) VALUES (?, ?, ?, ?)
		ON CONFLICT(run_id) DO UPDATE SET lease_expires=excluded.lease_expires, json=excluded.json`,
		c.RunID, c.SopName, c.LeaseExpires, string(js))
	if err != nil {
		return fmt.Errorf("runstore: claim %s: %w", c.RunID, err)
	}
	return nil
}

// Renew implements Store.
func (s *SQLite) Renew(ctx context.Context, runID, sopName string, now time.Time) error {
	return s.tx(ctx, func(tx *sql.Tx) error { return s.putClaim(ctx, tx, leaseClaim(runID, sopName, s.holder, now)) })
}

// Release implements Store.
func (s *SQLite) Release(ctx context.Context, runID string) error {
	if _, err := s.c.W.ExecContext(ctx, `DELETE FROM sop_claims WHERE run_id=?`, runID); err != nil {
		return fmt.Errorf("runstore: release %s: %w", runID, err)
	}
	return nil
}

// ClaimCounts implements Store.
func (s *SQLite) ClaimCounts(ctx context.Context, sopName string) (int, int, error) {
	var per, all int
	err := s.c.R.QueryRowContext(ctx, `SELECT (SELECT COUNT(*) FROM sop_claims WHERE sop_name=?), (SELECT COUNT(*) FROM sop_claims)`,
		sopName).Scan(&per, &all)
	if err != nil {
		return 0, 0, fmt.Errorf("runstore: claim counts: %w", err)
	}
	return per, all, nil
}

// ReapExpired implements Store. Lease times are UTC RFC 3339 with whole seconds, so they order as text.
func (s *SQLite) ReapExpired(ctx context.Context, now time.Time) ([]Claim, error) {
	cut := now.UTC().Format(time.RFC3339)
	var out []Claim
	err := s.tx(ctx, func(tx *sql.Tx) error {
		rows, err := tx.QueryContext(ctx, `SELECT json FROM sop_claims WHERE lease_expires < ?`, cut)
		if err != nil {
			return fmt.Errorf("runstore: reap: %w", err)
		}
		for rows.Next() {
			var js string
			var c Claim
			if err := rows.Scan(&js); err == nil && json.Unmarshal([]byte(js), &c) == nil {
				out = append(out, c)
			}
		}
		rows.Close()
		if _, err := tx.ExecContext(ctx, `DELETE FROM sop_claims WHERE lease_expires < ?`, cut); err != nil {
			return fmt.Errorf("runstore: reap: %w", err)
		}
		return nil
	})
	return out, err
}

// Prune implements Store.
func (s *SQLite) Prune(ctx context.Context, keep int) (int, error) {
	if keep <= 0 {
		return 0, nil
	}
	n := 0
	err := s.tx(ctx, func(tx *sql.Tx) error {
		const victims = `SELECT run_id FROM sop_runs WHERE terminal=1 ORDER BY last_progress_at DESC, rowid DESC LIMIT -1 OFFSET ?`
		if _, err := tx.ExecContext(ctx, `DELETE FROM sop_events WHERE run_id IN (`+victims+`)`, keep); err != nil {
			return fmt.Errorf("runstore: prune: %w", err)
		}
		res, err := tx.ExecContext(ctx, `DELETE FROM sop_runs WHERE run_id IN (`+victims+`)`, keep)
		if err != nil {
			return fmt.Errorf("runstore: prune: %w", err)
		}
		m, _ := res.RowsAffected()
		n = int(m)
		return nil
	})
	return n, err
}

// Claims implements Store.
func (s *SQLite) Claims(ctx context.Context) ([]Claim, error) {
	rows, err := s.c.R.QueryContext(ctx, `SELECT json FROM sop_claims ORDER BY run_id`)
	if err != nil {
		return nil, fmt.Errorf("runstore: claims: %w", err)
	}
	defer rows.Close()
	var out []Claim
	for rows.Next() {
		var js string
		var c Claim
		if err := rows.Scan(&js); err != nil {
			return nil, fmt.Errorf("runstore: claims: %w", err)
		}
		if json.Unmarshal([]byte(js), &c) == nil {
			out = append(out, c)
		}
	}
	return out, rows.Err()
}

package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync"
	"time"
)

// Heartbeat run statuses. ok and error are upstream's; skipped (a slot with nothing to run: no task, or phase
// 1 chose none), missed (a slot that came while the daemon was down) and running (written when a task starts,
// so a run cut by the end of the process is found and closed as error at the next start) are ours.
const (
	HeartbeatOK      = "ok"
	HeartbeatError   = "error"
	HeartbeatSkipped = "skipped"
	HeartbeatMissed  = "missed"
	HeartbeatRunning = "running"
)

// MaxHeartbeatOutputBytes caps heartbeat_runs.output (upstream's 16 KiB, then CronTruncatedMarker).
const MaxHeartbeatOutputBytes = 16 * 1024

// HeartbeatRun is one heartbeat_runs row: the outcome of one task (or of a whole slot when nothing ran) in
// one scheduled slot.
type HeartbeatRun struct {
	ID           int64
	SlotAt       time.Time // the scheduled slot this row is the outcome of
	TaskText     string
	TaskPriority string // high | medium | low; "" for a row of the whole slot
	StartedAt    time.Time
	FinishedAt   time.Time
	Status       string
	Output       string
	DurationMS   int64
}

// HeartbeatSchedule is the one heartbeat_schedule row: the next slot and the interval it was planned with,
// the last good tick (ok or skipped) and when the current dead-man episode was alerted (zero: none).
type HeartbeatSchedule struct {
	NextSlotAt  time.Time
	Interval    time.Duration
	LastOKAt    time.Time
	AlertSentAt time.Time
}

// HeartbeatStore is data/heartbeat/history.db (upstream's <data_dir>/heartbeat/history.db), opened at the
// first use. Row count is bounded by the keep argument of every insert (max_run_history).
type HeartbeatStore struct {
	path string

	mu     sync.Mutex // guards the fields below
	d      *db
	closed bool
}

// OpenHeartbeat returns the store for the database at path. It touches nothing on disk.
func OpenHeartbeat(path string) *HeartbeatStore { return &HeartbeatStore{path: path} }

// Path is the database file.
func (s *HeartbeatStore) Path() string { return s.path }

// Close closes the database if it was opened; it is idempotent.
func (s *HeartbeatStore) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil
	}
	s.closed = true
	if s.d == nil {
		return nil
	}
	return s.d.close()
}

func (s *HeartbeatStore) open(ctx context.Context) (*db, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, fmt.Errorf("store: heartbeat: %w", ErrClosed)
	}
	if s.d != nil {
		return s.d, nil
	}
	d, err := openDB(ctx, s.path, "heartbeat", map[int]func(context.Context, *sql.Tx) error{
		2: func(ctx context.Context, tx *sql.Tx) error {
			return ensureColumns(ctx, tx, "heartbeat_runs", [][2]string{{"slot_at", "TEXT"}})
		},
	})
	if err != nil {
		return nil, err
	}
	s.d = d
	return d, nil
}

func heartbeatOutput(s string) string {
	if len(s) <= MaxHeartbeatOutputBytes {
		return s
	}
	cut := MaxHeartbeatOutputBytes
	for cut > 0 && s[cut]&0xC0 == 0x80 { // keep whole UTF-8 characters
		cut--
	}
	return s[:cut] + CronTruncatedMarker
}

// Insert writes r (its ID is ignored) and prunes the history to the keep newest rows (at least 1, upstream's
// one global cap), in one transaction. It returns the new row's id.
func (s *HeartbeatStore) Insert(ctx context.Context, r HeartbeatRun, keep int) (int64, error) {
	d, err := s.open(ctx)
	if err != nil {
		return 0, err
	}
	var id int64
	err = d.withTx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `INSERT INTO heartbeat_runs (task_text, task_priority, started_at, finished_at,
			status, output, duration_ms, slot_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`, r.TaskText, r.TaskPriority,
			cronTime(r.StartedAt), cronTime(r.FinishedAt), r.Status, optText(heartbeatOutput(r.Output)), r.DurationMS,
			cronTime(r.SlotAt))
		if err != nil {
			return err
		}
		if id, err = res.LastInsertId(); err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, `DELETE FROM heartbeat_runs WHERE id NOT IN (SELECT id FROM heartbeat_runs
			ORDER BY started_at DESC, id DESC LIMIT ?)`, max(keep, 1))
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("store: heartbeat insert: %w", err)
	}
	return id, nil
}

// Finish closes the running row id with its outcome. A row that is no longer running (closed by a recovery,
// or pruned) is left alone.
func (s *HeartbeatStore) Finish(ctx context.Context, id int64, status, output string, finished time.Time, durationMS int64) error {
	d, err := s.open(ctx)
	if err != nil {
		return err
	}
	if _, err := d.w.ExecContext(ctx, `UPDATE heartbeat_runs SET status = ?, output = ?, finished_at = ?, duration_ms = ?
		WHERE id = ? AND status = ?`, status, optText(heartbeatOutput(output)), cronTime(finished), durationMS, id,
		HeartbeatRunning); err != nil {
		return fmt.Errorf("store: heartbeat finish %d: %w", id, err)
	}
	return nil
}

// CloseRunning marks every running row (a run the previous process did not finish) error with note, at now.
// It returns how many it closed.
func (s *HeartbeatStore) CloseRunning(ctx context.Context, note string, now time.Time) (int, error) {
	d, err := s.open(ctx)
	if err != nil {
		return 0, err
	}
	res, err := d.w.ExecContext(ctx, `UPDATE heartbeat_runs SET status = ?, output = ?, finished_at = ? WHERE status = ?`,
		HeartbeatError, note, cronTime(now), HeartbeatRunning)
	if err != nil {
		return 0, fmt.Errorf("store: heartbeat close running: %w", err)
	}
	n, _ := res.RowsAffected()
	return int(n), nil
}

// HasSlot reports whether any row is the outcome of slot.
func (s *HeartbeatStore) HasSlot(ctx context.Context, slot time.Time) (bool, error) {
	d, err := s.open(ctx)
	if err != nil {
		return false, err
	}
	var n int
	if err := d.r.QueryRowContext(ctx, "SELECT COUNT(*) FROM heartbeat_runs WHERE slot_at = ?", cronTime(slot)).Scan(&n); err != nil {
		return false, fmt.Errorf("store: heartbeat slot: %w", err)
	}
	return n > 0, nil
}

// Runs returns up to limit rows, newest first (limit <= 0: all).
func (s *HeartbeatStore) Runs(ctx context.Context, limit int) ([]HeartbeatRun, error) {
	d, err := s.open(ctx)
	if err != nil {
		return nil, err
	}
	if limit <= 0 {
		limit = -1
	}
	rows, err := d.r.QueryContext(ctx, `SELECT id, COALESCE(slot_at, started_at), task_text, task_priority, started_at,
		finished_at, status, COALESCE(output, ''), COALESCE(duration_ms, 0) FROM heartbeat_runs
		ORDER BY started_at DESC, id DESC LIMIT ?`, limit)
	if err != nil {
		return nil, fmt.Errorf("store: heartbeat runs: %w", err)
	}
	defer rows.Close()
	var out []HeartbeatRun
	for rows.Next() {
		var r HeartbeatRun
		var slot, started, finished string
		if err := rows.Scan(&r.ID, &slot, &r.TaskText, &r.TaskPriority, &started, &finished, &r.Status, &r.Output,
			&r.DurationMS); err != nil {
			return nil, fmt.Errorf("store: heartbeat runs: %w", err)
		}
		var errs [3]error
		r.SlotAt, errs[0] = parseTime(slot)
		r.StartedAt, errs[1] = parseTime(started)
		r.FinishedAt, errs[2] = parseTime(finished)
		if err := errors.Join(errs[:]...); err != nil {
			return nil, fmt.Errorf("store: heartbeat runs: row %d: %w", r.ID, err)
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: heartbeat runs: %w", err)
	}
	return out, nil
}

// Schedule returns the schedule row; ok is false when none was written yet.
func (s *HeartbeatStore) Schedule(ctx context.Context) (sch HeartbeatSchedule, ok bool, err error) {
	d, err := s.open(ctx)
	if err != nil {
		return sch, false, err
	}
	var next string
	var ms int64
	var lastOK, alerted sql.NullString
	err = d.r.QueryRowContext(ctx, `SELECT next_slot_at, interval_ms, last_ok_at, alert_sent_at FROM heartbeat_schedule
		WHERE id = 1`).Scan(&next, &ms, &lastOK, &alerted)
	if errors.Is(err, sql.ErrNoRows) {
		return sch, false, nil
	}
	if err != nil {
		return sch, false, fmt.Errorf("store: heartbeat schedule: %w", err)
	}
	sch.Interval = time.Duration(ms) * time.Millisecond
	var errs [3]error
	sch.NextSlotAt, errs[0] = parseTime(next)
	if lastOK.Valid {
		sch.LastOKAt, errs[1] = parseTime(lastOK.String)
	}
	if alerted.Valid {
		sch.AlertSentAt, errs[2] = parseTime(alerted.String)
	}
	if err := errors.Join(errs[:]...); err != nil {
		return sch, false, fmt.Errorf("store: heartbeat schedule: %w", err)
	}
	return sch, true, nil
}

// SetSchedule writes the schedule row.
func (s *HeartbeatStore) SetSchedule(ctx context.Context, sch HeartbeatSchedule) error {
	d, err := s.open(ctx)
	if err != nil {
		return err
	}
	opt := func(t time.Time) any {
		if t.IsZero() {
			return nil
		}
		return cronTime(t)
	}
	if _, err := d.w.ExecContext(ctx, `INSERT INTO heartbeat_schedule (id, next_slot_at, interval_ms, last_ok_at, alert_sent_at)
		VALUES (1, ?, ?, ?, ?) ON CONFLICT (id) DO UPDATE SET next_slot_at = excluded.next_slot_at,
		interval_ms = excluded.interval_ms, last_ok_at = excluded.last_ok_at, alert_sent_at = excluded.alert_sent_at`,
		cronTime(sch.NextSlotAt), sch.Interval.Milliseconds(), opt(sch.LastOKAt), opt(sch.AlertSentAt)); err != nil {
		return fmt.Errorf("store: heartbeat schedule: %w", err)
	}
	return nil
}

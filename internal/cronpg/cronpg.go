// Package cronpg is the cron store of installs whose [storage] backend is PostgreSQL: the jobs and their runs
// in one database shared by several daemons, each run a lease work slot (internal/lease) claimed by exactly one
// of them. It implements cron.Store as store.CronStore does for jobs.db, and cron.Shared: a run's record is
// written in a transaction fenced on its slot's claim, and the run of a daemon that died is settled (recorded
// lost, its job moved on) by another once the claim expires, never run again.
package cronpg

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/zeroclaw-go/zeroclaw/internal/cron"
	"github.com/zeroclaw-go/zeroclaw/internal/lease"
	"github.com/zeroclaw-go/zeroclaw/internal/pgdb"
	"github.com/zeroclaw-go/zeroclaw/internal/store"
)

// slotKind is the lease work-slot kind of cron runs.
const slotKind = "cron"

// migrations is the schema (component "cron"): jobs.db's tables with native types, plus the slot of each run
// (unique: one run recorded per slot) and the slot holding a job's lock.
var migrations = []pgdb.Migration{{Version: 1, Name: "cron jobs and runs", SQL: `
CREATE TABLE cron_jobs (
    id                  TEXT PRIMARY KEY,
    expression          TEXT NOT NULL DEFAULT '',
    command             TEXT NOT NULL DEFAULT '',
    schedule            TEXT,
    job_type            TEXT NOT NULL DEFAULT 'shell',
    prompt              TEXT,
    name                TEXT,
    session_target      TEXT NOT NULL DEFAULT 'isolated',
    model               TEXT,
    enabled             BOOLEAN NOT NULL DEFAULT true,
    delivery            TEXT,
    delete_after_run    BOOLEAN NOT NULL DEFAULT false,
    allowed_tools       TEXT,
    created_at          TIMESTAMPTZ NOT NULL,
    next_run            TIMESTAMPTZ NOT NULL,
    last_run            TIMESTAMPTZ,
    last_status         TEXT,
    last_output         TEXT,
    source              TEXT NOT NULL DEFAULT 'imperative',
    uses_memory         BOOLEAN NOT NULL DEFAULT true,
    agent_alias         TEXT NOT NULL DEFAULT '',
    locked_at           TIMESTAMPTZ,
    locked_slot         TEXT,
    shell_output_format TEXT NOT NULL DEFAULT 'wrapped'
);
CREATE INDEX cron_jobs_next_run_id ON cron_jobs (next_run, id);
CREATE TABLE cron_runs (
    id          BIGSERIAL PRIMARY KEY,
    job_id      TEXT NOT NULL REFERENCES cron_jobs (id) ON DELETE CASCADE,
    started_at  TIMESTAMPTZ NOT NULL,
    finished_at TIMESTAMPTZ NOT NULL,
    status      TEXT NOT NULL,
    output      TEXT,
    duration_ms BIGINT,
    slot        TEXT
);
CREATE INDEX cron_runs_job ON cron_runs (job_id, started_at DESC, id DESC);
CREATE UNIQUE INDEX cron_runs_slot ON cron_runs (slot) WHERE slot IS NOT NULL;`}}

// Store is the cron store on one database, for one daemon (its lease holder id). Safe for concurrent use.
type Store struct {
	db     *pgdb.Pool
	leases *lease.Store

	mu     sync.Mutex
	claims map[string]lease.Claim // this daemon's live slot claims, by slot key
}

var (
	_ cron.Store  = (*Store)(nil)
	_ cron.Shared = (*Store)(nil)
)

// Open brings the cron schema up to date (under the migration lock) and returns the store; leases is this
// daemon's lease store on the same database.
func Open(ctx context.Context, db *pgdb.Pool, leases *lease.Store) (*Store, error) {
	if _, err := pgdb.Migrate(ctx, db, "cron", migrations); err != nil {
		return nil, err
	}
	return &Store{db: db, leases: leases, claims: map[string]lease.Claim{}}, nil
}

// Close does nothing: the pool is the daemon's.
func (s *Store) Close() error { return nil }

const jobSelect = `SELECT id, expression, command, schedule, job_type, prompt, name, session_target, model,
	enabled, delivery, delete_after_run, allowed_tools, created_at, next_run, last_run, last_status, last_output,
	source, uses_memory, agent_alias, locked_at, shell_output_format FROM cron_jobs`

func opt(r pgdb.Row, i int) *string {
	if r.Null(i) {
		return nil
	}
	v := r.String(i)
	return &v
}

func scanJob(r pgdb.Row) (store.CronJob, error) {
	j := store.CronJob{ID: r.String(0), Expression: r.String(1), Command: r.String(2), Schedule: r.String(3),
		JobType: r.String(4), Prompt: opt(r, 5), Name: opt(r, 6), SessionTarget: r.String(7), Model: opt(r, 8),
		Enabled: r.Bool(9), Delivery: r.String(10), DeleteAfterRun: r.Bool(11), AllowedTools: r.String(12),
		LastStatus: opt(r, 16), LastOutput: opt(r, 17), Source: r.String(18), UsesMemory: r.Bool(19),
		AgentAlias: strings.TrimSpace(r.String(20)), ShellOutputFormat: r.String(22)}
	if j.Source == "" {
		j.Source = store.CronSourceImperative
	}
	var err error
	if j.CreatedAt, err = r.Time(13); err != nil {
		return j, err
	}
	if j.NextRun, err = r.Time(14); err != nil {
		return j, err
	}
	for _, f := range []struct {
		i   int
		dst **time.Time
	}{{15, &j.LastRun}, {21, &j.LockedAt}} {
		if !r.Null(f.i) {
			t, err := r.Time(f.i)
			if err != nil {
				return j, err
			}
			*f.dst = &t
		}
	}
	return j, nil
}

func (s *Store) jobs(ctx context.Context, op, q string, args ...any) ([]store.CronJob, error) {
	rows, err := s.db.Query(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("cronpg: %s: %w", op, err)
	}
	out := make([]store.CronJob, 0, len(rows))
	for _, r := range rows {
		j, err := scanJob(r)
		if err != nil {
			return nil, fmt.Errorf("cronpg: %s: %w", op, err)
		}
		out = append(out, j)
	}
	return out, nil
}

// List returns every job, soonest next_run first.
func (s *Store) List(ctx context.Context) ([]store.CronJob, error) {
	return s.jobs(ctx, "list", jobSelect+" ORDER BY next_run ASC, id ASC")
}

// ListPage is store.CronStore.ListPage.
func (s *Store) ListPage(ctx context.Context, agents []string, offset, limit int) ([]store.CronJob, error) {
	if agents != nil && len(agents) == 0 {
		return nil, nil
	}
	if agents == nil {
		return s.jobs(ctx, "list page", jobSelect+" ORDER BY next_run ASC, id ASC LIMIT $1 OFFSET $2", limit, max(offset, 0))
	}
	return s.jobs(ctx, "list page", jobSelect+` WHERE btrim(agent_alias, E' \t\n\v\f\r') = ANY($1::text[])
		ORDER BY next_run ASC, id ASC LIMIT $2 OFFSET $3`, agents, limit, max(offset, 0))
}

// Due returns the enabled, unclaimed jobs due at now, soonest first.
func (s *Store) Due(ctx context.Context, now time.Time) ([]store.CronJob, error) {
	return s.jobs(ctx, "due", jobSelect+" WHERE enabled AND next_run <= $1 AND locked_at IS NULL ORDER BY next_run ASC, id ASC", now)
}

// NextDue returns the earliest next_run of the enabled, unclaimed jobs.
func (s *Store) NextDue(ctx context.Context) (time.Time, bool, error) {
	rows, err := s.db.Query(ctx, "SELECT min(next_run) FROM cron_jobs WHERE enabled AND locked_at IS NULL")
	if err != nil {
		return time.Time{}, false, fmt.Errorf("cronpg: next due: %w", err)
	}
	if rows[0].Null(0) {
		return time.Time{}, false, nil
	}
	t, err := rows[0].Time(0)
	return t, err == nil, err
}

// Get returns job id, or an error wrapping store.ErrNotFound.
func (s *Store) Get(ctx context.Context, id string) (store.CronJob, error) {
	jobs, err := s.jobs(ctx, "get "+id, jobSelect+" WHERE id = $1", id)
	if err != nil {
		return store.CronJob{}, err
	}
	if len(jobs) == 0 {
		return store.CronJob{}, fmt.Errorf("cronpg: cron job %s: %w", id, store.ErrNotFound)
	}
	return jobs[0], nil
}

func text(s string) any {
	if s == "" {
		return nil
	}
	return s
}

func ptr(p *string) any {
	if p == nil {
		return nil
	}
	return *p
}

func tptr(t *time.Time) any {
	if t == nil {
		return nil
	}
	return *t
}

// Add inserts job j; an existing id is an error.
func (s *Store) Add(ctx context.Context, j store.CronJob) error {
	if j.ID == "" {
		return fmt.Errorf("cronpg: add: empty id: %w", store.ErrInvalid)
	}
	if j.Source == "" {
		j.Source = store.CronSourceImperative
	}
	_, err := s.db.Exec(ctx, `INSERT INTO cron_jobs (id, expression, command, schedule, job_type, prompt, name,
		session_target, model, enabled, delivery, delete_after_run, allowed_tools, created_at, next_run, last_run,
		last_status, last_output, source, uses_memory, agent_alias, locked_at, shell_output_format)
		VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11,$12,$13,$14,$15,$16,$17,$18,$19,$20,$21,$22,$23)`,
		j.ID, j.Expression, j.Command, text(j.Schedule), j.JobType, ptr(j.Prompt), ptr(j.Name), j.SessionTarget,
		ptr(j.Model), j.Enabled, text(j.Delivery), j.DeleteAfterRun, text(j.AllowedTools), j.CreatedAt, j.NextRun,
		tptr(j.LastRun), ptr(j.LastStatus), ptr(j.LastOutput), j.Source, j.UsesMemory, j.AgentAlias, tptr(j.LockedAt),
		j.ShellOutputFormat)
	if err != nil {
		return fmt.Errorf("cronpg: add %s: %w", j.ID, err)
	}
	return nil
}

// Update rewrites job j.ID's definition (not its run state); keepFormat leaves shell_output_format as stored.
func (s *Store) Update(ctx context.Context, j store.CronJob, keepFormat bool) error {
	q := `UPDATE cron_jobs SET expression=$2, command=$3, schedule=$4, job_type=$5, prompt=$6, name=$7,
		session_target=$8, model=$9, enabled=$10, delivery=$11, delete_after_run=$12, allowed_tools=$13, next_run=$14,
		uses_memory=$15, agent_alias=$16, source=$17`
	args := []any{j.ID, j.Expression, j.Command, text(j.Schedule), j.JobType, ptr(j.Prompt), ptr(j.Name),
		j.SessionTarget, ptr(j.Model), j.Enabled, text(j.Delivery), j.DeleteAfterRun, text(j.AllowedTools), j.NextRun,
		j.UsesMemory, j.AgentAlias, j.Source}
	if !keepFormat {
		q += ", shell_output_format=$18"
		args = append(args, j.ShellOutputFormat)
	}
	n, err := s.db.Exec(ctx, q+" WHERE id=$1", args...)
	if err != nil {
		return fmt.Errorf("cronpg: update %s: %w", j.ID, err)
	}
	if n == 0 {
		return fmt.Errorf("cronpg: update %s: %w", j.ID, store.ErrNotFound)
	}
	return nil
}

// Delete removes job id and its runs.
func (s *Store) Delete(ctx context.Context, id string) (bool, error) {
	n, err := s.db.Exec(ctx, "DELETE FROM cron_jobs WHERE id = $1", id)
	if err != nil {
		return false, fmt.Errorf("cronpg: delete %s: %w", id, err)
	}
	return n > 0, nil
}

// ClearLocks releases every claim. Daemons sharing the store never call it (their runs are live); it is here
// for a lone daemon's recovery and the shared test suite.
func (s *Store) ClearLocks(ctx context.Context) (int, error) {
	n, err := s.db.Exec(ctx, "UPDATE cron_jobs SET locked_at = NULL, locked_slot = NULL WHERE locked_at IS NOT NULL")
	if err != nil {
		return 0, fmt.Errorf("cronpg: clear locks: %w", err)
	}
	return int(n), nil
}

func (s *Store) claim(slot string) (lease.Claim, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.claims[slot]
	return c, ok
}

func (s *Store) forget(slot string) {
	s.mu.Lock()
	delete(s.claims, slot)
	s.mu.Unlock()
}

// fence checks, in tx, that slot is still this daemon's live claim ("" is no slot: nothing to check).
func (s *Store) fence(ctx context.Context, tx *pgdb.Tx, slot string) (lease.Claim, error) {
	if slot == "" {
		return lease.Claim{}, nil
	}
	c, ok := s.claim(slot)
	if !ok {
		return c, fmt.Errorf("slot %s: %w", slot, cron.ErrSlotLost)
	}
	if err := lease.CheckSlot(ctx, tx, c); err != nil {
		if errors.Is(err, lease.ErrLost) {
			return c, fmt.Errorf("%w (%v)", cron.ErrSlotLost, err)
		}
		return c, err
	}
	return c, nil
}

// ClaimRun locks the job and records a running run in one transaction, fenced on c.Slot's claim when set.
func (s *Store) ClaimRun(ctx context.Context, c store.Claim) (int64, bool, error) {
	var runID int64
	claimed := false
	err := s.db.InTx(ctx, func(tx *pgdb.Tx) error {
		if _, err := s.fence(ctx, tx, c.Slot); err != nil {
			return err
		}
		q := "UPDATE cron_jobs SET locked_at = $2, locked_slot = $3 WHERE id = $1 AND locked_at IS NULL"
		args := []any{c.JobID, c.Now, text(c.Slot)}
		if c.Due {
			q += " AND enabled AND next_run <= $2"
			if c.DueAt != nil {
				q += " AND next_run = $4"
				args = append(args, *c.DueAt)
			}
		}
		n, err := tx.Exec(ctx, q, args...)
		if err != nil || n != 1 {
			return err
		}
		claimed = true
		if c.NextRun != nil {
			if _, err := tx.Exec(ctx, "UPDATE cron_jobs SET next_run = $2 WHERE id = $1", c.JobID, *c.NextRun); err != nil {
				return err
			}
		}
		rows, err := tx.Query(ctx, `INSERT INTO cron_runs (job_id, started_at, finished_at, status, slot)
			VALUES ($1, $2, $2, $3, $4) RETURNING id`, c.JobID, c.Now, store.CronStatusRunning, text(c.Slot))
		if err != nil {
			return err
		}
		if runID, err = rows[0].Int64(0); err != nil {
			return err
		}
		return pruneRuns(ctx, tx, c.JobID, c.KeepRuns)
	})
	if err != nil {
		return 0, false, fmt.Errorf("cronpg: claim %s: %w", c.JobID, err)
	}
	return runID, claimed, nil
}

// Release drops the claim on job id.
func (s *Store) Release(ctx context.Context, id string) error {
	_, err := s.db.Exec(ctx, "UPDATE cron_jobs SET locked_at = NULL, locked_slot = NULL WHERE id = $1", id)
	return err
}

func pruneRuns(ctx context.Context, tx *pgdb.Tx, jobID string, keep int) error {
	_, err := tx.Exec(ctx, `DELETE FROM cron_runs WHERE job_id = $1 AND id NOT IN (
		SELECT id FROM cron_runs WHERE job_id = $1 ORDER BY started_at DESC, id DESC LIMIT $2)`, jobID, max(keep, 1))
	return err
}

// FinishRun records the run's end and the job's new state in one transaction, which with a slot also records
// the slot done and is fenced on its claim: a daemon whose claim was taken over writes nothing (the run was
// recorded lost by the daemon that took it) and gets an error wrapping cron.ErrSlotLost.
func (s *Store) FinishRun(ctx context.Context, f store.Finish) error {
	out := store.CapCronOutput(f.Output)
	err := s.db.InTx(ctx, func(tx *pgdb.Tx) error {
		if err := s.complete(ctx, tx, f.Slot, f.Status); err != nil {
			return err
		}
		n, err := tx.Exec(ctx, "UPDATE cron_runs SET finished_at=$2, status=$3, output=$4, duration_ms=$5 WHERE id=$1",
			f.RunID, f.FinishedAt, f.Status, out, f.DurationMS)
		if err != nil {
			return err
		}
		if n == 0 {
			// The running row is gone: its job was deleted (nothing left to record) or the row was pruned.
			rows, err := tx.Query(ctx, "SELECT 1 FROM cron_jobs WHERE id = $1", f.JobID)
			if err != nil || len(rows) == 0 {
				return err
			}
			if _, err := tx.Exec(ctx, `INSERT INTO cron_runs (job_id, started_at, finished_at, status, output, duration_ms, slot)
				VALUES ($1, $2, $3, $4, $5, $6, $7)`, f.JobID, f.FinishedAt.Add(-time.Duration(f.DurationMS)*time.Millisecond),
				f.FinishedAt, f.Status, out, f.DurationMS, text(f.Slot)); err != nil {
				return err
			}
		}
		if err := pruneRuns(ctx, tx, f.JobID, f.KeepRuns); err != nil {
			return err
		}
		return applyCompletion(ctx, tx, f, f.Action, out)
	})
	if err == nil {
		s.forget(f.Slot)
		return nil
	}
	if errors.Is(err, cron.ErrSlotLost) {
		s.forget(f.Slot)
		return fmt.Errorf("cronpg: finish %s: %w", f.JobID, err)
	}
	// As jobs.db does: the job's state alone, so it never stays due because its history could not be written.
	action := f.Action
	if action == store.CompleteDelete {
		action = store.CompleteDisable
	}
	err2 := s.db.InTx(ctx, func(tx *pgdb.Tx) error {
		if err := s.complete(ctx, tx, f.Slot, f.Status); err != nil {
			return err
		}
		return applyCompletion(ctx, tx, f, action, out)
	})
	s.forget(f.Slot)
	return fmt.Errorf("cronpg: finish %s: %w", f.JobID, errors.Join(err, err2))
}

// complete records slot done in tx, fenced on this daemon's claim ("" is no slot).
func (s *Store) complete(ctx context.Context, tx *pgdb.Tx, slot, status string) error {
	c, err := s.fence(ctx, tx, slot)
	if err != nil || slot == "" {
		return err
	}
	if err := s.leases.Complete(ctx, tx, c, status); err != nil {
		if errors.Is(err, lease.ErrLost) {
			return fmt.Errorf("%w (%v)", cron.ErrSlotLost, err)
		}
		return err
	}
	return nil
}

func applyCompletion(ctx context.Context, tx *pgdb.Tx, f store.Finish, action store.Completion, out string) error {
	var err error
	switch action {
	case store.CompleteDelete:
		_, err = tx.Exec(ctx, "DELETE FROM cron_jobs WHERE id = $1", f.JobID)
	case store.CompleteDisable:
		_, err = tx.Exec(ctx, `UPDATE cron_jobs SET enabled=false, last_run=$2, last_status=$3, last_output=$4,
			locked_at=NULL, locked_slot=NULL WHERE id=$1`, f.JobID, f.FinishedAt, f.Status, out)
	case store.CompleteReschedule:
		_, err = tx.Exec(ctx, `UPDATE cron_jobs SET next_run=$5, last_run=$2, last_status=$3, last_output=$4,
			locked_at=NULL, locked_slot=NULL WHERE id=$1`, f.JobID, f.FinishedAt, f.Status, out, f.NextRun)
	default:
		_, err = tx.Exec(ctx, `UPDATE cron_jobs SET last_run=$2, last_status=$3, last_output=$4, locked_at=NULL,
			locked_slot=NULL WHERE id=$1`, f.JobID, f.FinishedAt, f.Status, out)
	}
	return err
}

// MarkRunLost marks run id lost and notes it on the job; disable also disables the job.
func (s *Store) MarkRunLost(ctx context.Context, runID int64, at time.Time, note string, disable bool) error {
	err := s.db.InTx(ctx, func(tx *pgdb.Tx) error {
		rows, err := tx.Query(ctx, `UPDATE cron_runs SET status=$2, finished_at=$3, output=$4,
			duration_ms=greatest(0, (extract(epoch FROM ($3::timestamptz - started_at)) * 1000)::bigint)
			WHERE id=$1 AND status=$5 RETURNING job_id`, runID, store.CronStatusLost, at, note, store.CronStatusRunning)
		if err != nil || len(rows) == 0 {
			return err
		}
		_, err = tx.Exec(ctx, `UPDATE cron_jobs SET last_run=$2, last_status=$3, last_output=$4,
			enabled = enabled AND NOT $5::boolean WHERE id=$1`, rows[0].String(0), at, store.CronStatusLost, note, disable)
		return err
	})
	if err != nil {
		return fmt.Errorf("cronpg: mark lost %d: %w", runID, err)
	}
	return nil
}

// RunningRuns returns the runs still marked running, oldest first.
func (s *Store) RunningRuns(ctx context.Context) ([]store.CronRun, error) {
	rows, err := s.db.Query(ctx, "SELECT id, job_id FROM cron_runs WHERE status = $1 ORDER BY id", store.CronStatusRunning)
	if err != nil {
		return nil, fmt.Errorf("cronpg: running runs: %w", err)
	}
	var out []store.CronRun
	for _, r := range rows {
		id, err := r.Int64(0)
		if err != nil {
			return nil, err
		}
		out = append(out, store.CronRun{ID: id, JobID: r.String(1), Status: store.CronStatusRunning})
	}
	return out, nil
}

// Runs returns the newest limit runs of job, newest first.
func (s *Store) Runs(ctx context.Context, jobID string, limit int) ([]store.CronRun, error) {
	rows, err := s.db.Query(ctx, `SELECT id, job_id, started_at, finished_at, status, output, duration_ms
		FROM cron_runs WHERE job_id = $1 ORDER BY started_at DESC, id DESC LIMIT $2`, jobID, max(limit, 1))
	if err != nil {
		return nil, fmt.Errorf("cronpg: runs %s: %w", jobID, err)
	}
	out := make([]store.CronRun, 0, len(rows))
	for _, r := range rows {
		run := store.CronRun{JobID: r.String(1), Status: r.String(4), Output: opt(r, 5)}
		if run.ID, err = r.Int64(0); err != nil {
			return nil, err
		}
		if run.StartedAt, err = r.Time(2); err != nil {
			return nil, err
		}
		if run.FinishedAt, err = r.Time(3); err != nil {
			return nil, err
		}
		if !r.Null(6) {
			d, err := r.Int64(6)
			if err != nil {
				return nil, err
			}
			run.DurationMS = &d
		}
		out = append(out, run)
	}
	return out, nil
}

// SkipMissed is store.CronStore.SkipMissed.
func (s *Store) SkipMissed(ctx context.Context, id string, now time.Time, nextRun *time.Time) error {
	var err error
	if nextRun != nil {
		_, err = s.db.Exec(ctx, "UPDATE cron_jobs SET next_run = $2 WHERE id = $1", id, *nextRun)
	} else {
		_, err = s.db.Exec(ctx, "UPDATE cron_jobs SET enabled=false, last_run=$2, last_status=$3, last_output=$4 WHERE id=$1",
			id, now, store.CronStatusSkipped, "skipped — catch_up_on_startup disabled")
	}
	if err != nil {
		return fmt.Errorf("cronpg: skip %s: %w", id, err)
	}
	return nil
}

// ClaimSlot claims slot for this daemon (see cron.Shared).
func (s *Store) ClaimSlot(ctx context.Context, slot string, ttl time.Duration) (cron.SlotResult, error) {
	c, res, err := s.leases.Claim(ctx, slotKind, slot, lease.ClaimOptions{TTL: ttl})
	if err != nil {
		return 0, err
	}
	switch res {
	case lease.Claimed:
		s.mu.Lock()
		s.claims[slot] = c
		s.mu.Unlock()
		return cron.SlotClaimed, nil
	case lease.Busy:
		return cron.SlotBusy, nil
	case lease.Interrupted:
		return cron.SlotInterrupted, nil
	}
	return cron.SlotFinished, nil
}

// ExtendSlot renews this daemon's claim on slot.
func (s *Store) ExtendSlot(ctx context.Context, slot string, ttl time.Duration) error {
	c, ok := s.claim(slot)
	if !ok {
		return fmt.Errorf("slot %s: %w", slot, cron.ErrSlotLost)
	}
	if err := s.leases.Extend(ctx, c, ttl); err != nil {
		if errors.Is(err, lease.ErrLost) {
			s.forget(slot)
			return fmt.Errorf("%w (%v)", cron.ErrSlotLost, err)
		}
		return err
	}
	return nil
}

// DropSlot ends a claimed slot that was not run, with outcome.
func (s *Store) DropSlot(ctx context.Context, slot, outcome string) error {
	c, ok := s.claim(slot)
	if !ok {
		return nil
	}
	defer s.forget(slot)
	return s.leases.Complete(ctx, nil, c, outcome)
}

// unsettledBatch bounds the interrupted slots without a run that one sweep hands back to be settled.
const unsettledBatch = 100

// SweepSlots records interrupted the cron slots whose claims expired, and returns them to be settled, with the
// interrupted slots no run was recorded for: a daemon killed between recording a slot interrupted (its own
// sweep, or a Claim that found the claim expired) and settling its run left one, and nobody would look at it
// again (its state is no longer running). A deleted job's slots are left out (its runs went with it). Settling
// is idempotent, so two daemons settling one slot is harmless.
func (s *Store) SweepSlots(ctx context.Context) ([]string, error) {
	swept, err := s.leases.Sweep(ctx, slotKind, 0)
	if err != nil {
		return nil, err
	}
	out := make([]string, 0, len(swept))
	for _, c := range swept {
		out = append(out, c.Slot)
	}
	rows, err := s.db.Query(ctx, `SELECT w.slot FROM zc_work w WHERE w.kind = $1 AND w.state = $2
AND NOT EXISTS (SELECT 1 FROM cron_runs r WHERE r.slot = w.slot)
AND EXISTS (SELECT 1 FROM cron_jobs j WHERE j.id = left(w.slot, length(w.slot) - strpos(reverse(w.slot), '@')))
ORDER BY w.slot LIMIT $3`, slotKind, lease.StateInterrupted, unsettledBatch)
	if err != nil {
		return out, fmt.Errorf("cronpg: unsettled slots: %w", err)
	}
	for _, r := range rows {
		if slot := r.String(0); !slices.Contains(out, slot) {
			out = append(out, slot)
		}
	}
	return out, nil
}

// SettleSlot records an interrupted slot's run lost (writing a lost run when its daemon died before recording
// one), releases the job's lock when that slot held it, and moves the job past the slot's occurrence.
func (s *Store) SettleSlot(ctx context.Context, st cron.Settle) error {
	err := s.db.InTx(ctx, func(tx *pgdb.Tx) error {
		rows, err := tx.Query(ctx, "SELECT 1 FROM cron_jobs WHERE id = $1 FOR UPDATE", st.JobID)
		if err != nil || len(rows) == 0 {
			return err // the job is gone, and its runs with it
		}
		n, err := tx.Exec(ctx, `UPDATE cron_runs SET status=$2, finished_at=$3, output=$4,
			duration_ms=greatest(0, (extract(epoch FROM ($3::timestamptz - started_at)) * 1000)::bigint)
			WHERE slot=$1 AND status=$5`, st.Slot, store.CronStatusLost, st.At, st.Note, store.CronStatusRunning)
		if err != nil {
			return err
		}
		if n == 0 {
			// No running row: the daemon died before recording its run (or the run has its end already).
			if _, err := tx.Exec(ctx, `INSERT INTO cron_runs (job_id, started_at, finished_at, status, output, duration_ms, slot)
				VALUES ($1, $2, $2, $3, $4, 0, $5) ON CONFLICT (slot) WHERE slot IS NOT NULL DO NOTHING`,
				st.JobID, st.At, store.CronStatusLost, st.Note, st.Slot); err != nil {
				return err
			}
		}
		if _, err := tx.Exec(ctx, `UPDATE cron_jobs SET last_run=$2, last_status=$3, last_output=$4,
			locked_at = CASE WHEN locked_slot = $5 THEN NULL ELSE locked_at END,
			locked_slot = CASE WHEN locked_slot = $5 THEN NULL ELSE locked_slot END,
			enabled = enabled AND NOT $6::boolean WHERE id=$1`, st.JobID, st.At, store.CronStatusLost, st.Note, st.Slot, st.Disable); err != nil {
			return err
		}
		if st.DueAt == nil {
			return nil
		}
		if st.NextRun != nil {
			_, err = tx.Exec(ctx, "UPDATE cron_jobs SET next_run = $3 WHERE id = $1 AND next_run = $2", st.JobID, *st.DueAt, *st.NextRun)
		} else {
			_, err = tx.Exec(ctx, "UPDATE cron_jobs SET enabled = false WHERE id = $1 AND next_run = $2", st.JobID, *st.DueAt)
		}
		return err
	})
	if err != nil {
		return fmt.Errorf("cronpg: settle %s: %w", st.Slot, err)
	}
	return nil
}

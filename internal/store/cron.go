package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Cron run statuses. ok, error, degraded and skipped are upstream's; running and lost are ours: a run row is
// written when the run starts, so a run cut by the end of the process is seen as lost, not as missing.
const (
	CronStatusOK      = "ok"
	CronStatusError   = "error"
	CronStatusSkipped = "skipped"
	CronStatusRunning = "running"
	CronStatusLost    = "lost"
)

// Cron job sources.
const (
	CronSourceImperative  = "imperative"
	CronSourceDeclarative = "declarative"
)

// MaxCronOutputBytes caps last_output and cron_runs.output (upstream's 16 KiB); a longer output keeps its
// beginning and ends with CronTruncatedMarker.
const (
	MaxCronOutputBytes  = 16 * 1024
	CronTruncatedMarker = "\n...[truncated]"
)

// cronJobColumns are the cron_jobs columns upstream added with ALTER TABLE over time, in its order.
var cronJobColumns = [][2]string{
	{"schedule", "TEXT"},
	{"job_type", "TEXT NOT NULL DEFAULT 'shell'"},
	{"prompt", "TEXT"},
	{"name", "TEXT"},
	{"session_target", "TEXT NOT NULL DEFAULT 'isolated'"},
	{"model", "TEXT"},
	{"enabled", "INTEGER NOT NULL DEFAULT 1"},
	{"delivery", "TEXT"},
	{"delete_after_run", "INTEGER NOT NULL DEFAULT 0"},
	{"allowed_tools", "TEXT"},
	{"source", "TEXT DEFAULT 'imperative'"},
	{"uses_memory", "INTEGER NOT NULL DEFAULT 1"},
	{"agent_alias", "TEXT NOT NULL DEFAULT ''"},
	{"locked_at", "TEXT"},
	{"shell_output_format", "TEXT NOT NULL DEFAULT 'wrapped'"},
}

// CronJob is one cron_jobs row. The JSON columns (Schedule, Delivery, AllowedTools) are kept as text: their
// meaning belongs to the cron package. A nil pointer or "" JSON text stands for NULL.
type CronJob struct {
	ID                string
	Expression        string // the cron expression of a cron schedule, "" otherwise
	Command           string
	Schedule          string // JSON, e.g. {"kind":"every","every_ms":60000}; "" for a legacy row (Expression is it)
	JobType           string // shell | agent
	Prompt            *string
	Name              *string
	SessionTarget     string
	Model             *string
	Enabled           bool
	Delivery          string // JSON
	DeleteAfterRun    bool
	AllowedTools      string // JSON array
	CreatedAt         time.Time
	NextRun           time.Time
	LastRun           *time.Time
	LastStatus        *string
	LastOutput        *string
	Source            string
	UsesMemory        bool
	AgentAlias        string
	LockedAt          *time.Time
	ShellOutputFormat string
}

// CronRun is one cron_runs row. FinishedAt equals StartedAt and DurationMS is nil while Status is running.
type CronRun struct {
	ID         int64
	JobID      string
	StartedAt  time.Time
	FinishedAt time.Time
	Status     string
	Output     *string
	DurationMS *int64
}

// CronStore is the scheduled-jobs database data/cron/jobs.db (state.md §7). The file is created by the first
// write only: reads on an install without it answer as if it were empty and leave nothing on disk. Several
// processes may share the file (claims are atomic UPDATEs); each store keeps one writer connection.
type CronStore struct {
	path string

	// mu guards the fields below. d is opened at the first write, or at the first read once the file exists.
	mu     sync.Mutex
	d      *db
	closed bool
}

// OpenCron returns the store for the database at path. It touches nothing on disk.
func OpenCron(path string) *CronStore { return &CronStore{path: path} }

// Path is the database file.
func (s *CronStore) Path() string { return s.path }

// Close closes the database if it was opened. Calls after Close return ErrClosed; Close is idempotent.
func (s *CronStore) Close() error {
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

// open returns the database, opening it when needed. Without create, a missing file gives (nil, nil).
func (s *CronStore) open(ctx context.Context, create bool) (*db, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, fmt.Errorf("store: cron: %w", ErrClosed)
	}
	if s.d != nil {
		return s.d, nil
	}
	if !create {
		if _, err := os.Stat(s.path); errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
	}
	d, err := openDB(ctx, s.path, "cron", map[int]func(context.Context, *sql.Tx) error{
		2: func(ctx context.Context, tx *sql.Tx) error {
			return ensureColumns(ctx, tx, "cron_jobs", cronJobColumns)
		},
	})
	if err != nil {
		return nil, err
	}
	s.d = d
	return d, nil
}

const cronJobSelect = `SELECT id, expression, command, schedule, job_type, prompt, name, session_target, model,
	enabled, delivery, delete_after_run, allowed_tools, created_at, next_run, last_run, last_status, last_output,
	source, uses_memory, agent_alias, locked_at, shell_output_format FROM cron_jobs`

// List returns every job, soonest next_run first.
func (s *CronStore) List(ctx context.Context) ([]CronJob, error) {
	return s.queryJobs(ctx, "list", cronJobSelect+" ORDER BY next_run ASC, id ASC")
}

// ListPage returns at most limit jobs (limit > 0) from offset on, in List's order, read off the
// idx_cron_jobs_next_run_id index. A non-nil agents keeps only the jobs whose agent_alias it lists (none when
// it is empty), and offset counts those.
func (s *CronStore) ListPage(ctx context.Context, agents []string, offset, limit int) ([]CronJob, error) {
	if agents != nil && len(agents) == 0 {
		return nil, nil
	}
	q, args := cronJobSelect, []any{}
	if agents != nil {
		// scanCronJob trims the alias it reads, so the filter compares the trimmed column too.
		q += " WHERE trim(agent_alias, ' '||char(9,10,11,12,13)) IN (?" + strings.Repeat(",?", len(agents)-1) + ")"
		for _, a := range agents {
			args = append(args, a)
		}
	}
	args = append(args, limit, max(offset, 0))
	return s.queryJobs(ctx, "list page", q+listCronOrder+" LIMIT ? OFFSET ?", args...)
}

// listCronOrder is cron/list's order; idx_cron_jobs_next_run_id (cron migration 0003) holds it.
const listCronOrder = " ORDER BY next_run ASC, id ASC"

// Due returns the enabled, unclaimed jobs whose next_run is at or before now, soonest first (upstream's due
// query: timestamps compare as text).
func (s *CronStore) Due(ctx context.Context, now time.Time) ([]CronJob, error) {
	return s.queryJobs(ctx, "due", cronJobSelect+
		" WHERE enabled = 1 AND next_run <= ? AND locked_at IS NULL ORDER BY next_run ASC, id ASC", cronTime(now))
}

// NextDue returns the earliest next_run of the enabled, unclaimed jobs, and false when there is none.
func (s *CronStore) NextDue(ctx context.Context) (time.Time, bool, error) {
	d, err := s.open(ctx, false)
	if d == nil || err != nil {
		return time.Time{}, false, err
	}
	var v sql.NullString
	err = d.r.QueryRowContext(ctx, "SELECT MIN(next_run) FROM cron_jobs WHERE enabled = 1 AND locked_at IS NULL").Scan(&v)
	if err != nil {
		return time.Time{}, false, fmt.Errorf("store: cron next due: %w", err)
	}
	if !v.Valid {
		return time.Time{}, false, nil
	}
	t, err := parseTime(v.String)
	if err != nil {
		return time.Time{}, false, fmt.Errorf("store: cron next due: %w", err)
	}
	return t, true, nil
}

// Get returns job id, or an error wrapping ErrNotFound.
func (s *CronStore) Get(ctx context.Context, id string) (CronJob, error) {
	jobs, err := s.queryJobs(ctx, "get "+id, cronJobSelect+" WHERE id = ?", id)
	if err != nil {
		return CronJob{}, err
	}
	if len(jobs) == 0 {
		return CronJob{}, fmt.Errorf("store: cron job %s: %w", id, ErrNotFound)
	}
	return jobs[0], nil
}

func (s *CronStore) queryJobs(ctx context.Context, op, q string, args ...any) ([]CronJob, error) {
	d, err := s.open(ctx, false)
	if d == nil || err != nil {
		return nil, err
	}
	return queryCronJobs(ctx, d.r, op, q, args...)
}

// queryCronJobs runs q (a cronJobSelect) on db and scans every row; op names the query in errors. The store and
// the read-only listing without a daemon (ReadCronJobs) both read jobs through it.
func queryCronJobs(ctx context.Context, db *sql.DB, op, q string, args ...any) ([]CronJob, error) {
	rows, err := db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("store: cron %s: %w", op, err)
	}
	defer rows.Close()
	var out []CronJob
	for rows.Next() {
		j, err := scanCronJob(rows)
		if err != nil {
			return nil, fmt.Errorf("store: cron %s: %w", op, err)
		}
		out = append(out, j)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: cron %s: %w", op, err)
	}
	return out, nil
}

func scanCronJob(rows *sql.Rows) (CronJob, error) {
	var (
		j                                             CronJob
		schedule, delivery, allowed, source, lockedAt sql.NullString
		prompt, name, model, lastRun, lastStatus      sql.NullString
		lastOutput, sessionTarget, jobType, format    sql.NullString
		agentAlias                                    sql.NullString
		createdAt, nextRun                            string
		usesMemory                                    sql.NullInt64
	)
	err := rows.Scan(&j.ID, &j.Expression, &j.Command, &schedule, &jobType, &prompt, &name, &sessionTarget, &model,
		&j.Enabled, &delivery, &j.DeleteAfterRun, &allowed, &createdAt, &nextRun, &lastRun, &lastStatus, &lastOutput,
		&source, &usesMemory, &agentAlias, &lockedAt, &format)
	if err != nil {
		return j, err
	}
	j.Schedule, j.Delivery, j.AllowedTools = schedule.String, delivery.String, allowed.String
	j.JobType, j.SessionTarget, j.ShellOutputFormat = jobType.String, sessionTarget.String, format.String
	j.Prompt, j.Name, j.Model = nullable(prompt), nullable(name), nullable(model)
	j.LastStatus, j.LastOutput = nullable(lastStatus), nullable(lastOutput)
	j.Source = source.String
	if j.Source == "" {
		j.Source = CronSourceImperative
	}
	j.UsesMemory = !usesMemory.Valid || usesMemory.Int64 != 0
	j.AgentAlias = strings.TrimSpace(agentAlias.String)
	if j.CreatedAt, err = parseTime(createdAt); err != nil {
		return j, fmt.Errorf("job %s created_at: %w", j.ID, err)
	}
	if j.NextRun, err = parseTime(nextRun); err != nil {
		return j, fmt.Errorf("job %s next_run: %w", j.ID, err)
	}
	for _, f := range []struct {
		src sql.NullString
		dst **time.Time
	}{{lastRun, &j.LastRun}, {lockedAt, &j.LockedAt}} {
		if f.src.Valid {
			t, err := parseTime(f.src.String)
			if err != nil {
				return j, fmt.Errorf("job %s: %w", j.ID, err)
			}
			*f.dst = &t
		}
	}
	return j, nil
}

func nullable(v sql.NullString) *string {
	if !v.Valid {
		return nil
	}
	return &v.String
}

func nullStr(p *string) any {
	if p == nil {
		return nil
	}
	return *p
}

func nullText(s string) any {
	if s == "" {
		return nil
	}
	return s
}

func nullTime(t *time.Time) any {
	if t == nil {
		return nil
	}
	return cronTime(*t)
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// Add inserts job (creating the database if needed). An existing id is an error.
func (s *CronStore) Add(ctx context.Context, j CronJob) error {
	if j.ID == "" {
		return fmt.Errorf("store: cron add: empty id: %w", ErrInvalid)
	}
	d, err := s.open(ctx, true)
	if err != nil {
		return err
	}
	if j.Source == "" {
		j.Source = CronSourceImperative
	}
	_, err = d.w.ExecContext(ctx, `INSERT INTO cron_jobs (id, expression, command, schedule, job_type, prompt, name,
		session_target, model, enabled, delivery, delete_after_run, allowed_tools, created_at, next_run, last_run,
		last_status, last_output, source, uses_memory, agent_alias, locked_at, shell_output_format)
		VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)`,
		j.ID, j.Expression, j.Command, nullText(j.Schedule), j.JobType, nullStr(j.Prompt), nullStr(j.Name),
		j.SessionTarget, nullStr(j.Model), boolInt(j.Enabled), nullText(j.Delivery), boolInt(j.DeleteAfterRun),
		nullText(j.AllowedTools), cronTime(j.CreatedAt), cronTime(j.NextRun), nullTime(j.LastRun),
		nullStr(j.LastStatus), nullStr(j.LastOutput), j.Source, boolInt(j.UsesMemory), j.AgentAlias,
		nullTime(j.LockedAt), j.ShellOutputFormat)
	if err != nil {
		return fmt.Errorf("store: cron add %s: %w", j.ID, err)
	}
	return nil
}

// Update rewrites the definition of job j.ID (not its run state: last_*, locked_at). keepFormat leaves
// shell_output_format as stored (a declarative job's format belongs to config). An unknown id wraps
// ErrNotFound.
func (s *CronStore) Update(ctx context.Context, j CronJob, keepFormat bool) error {
	d, err := s.open(ctx, true)
	if err != nil {
		return err
	}
	q := `UPDATE cron_jobs SET expression=?, command=?, schedule=?, job_type=?, prompt=?, name=?, session_target=?,
		model=?, enabled=?, delivery=?, delete_after_run=?, allowed_tools=?, next_run=?, uses_memory=?, agent_alias=?,
		source=?`
	args := []any{j.Expression, j.Command, nullText(j.Schedule), j.JobType, nullStr(j.Prompt), nullStr(j.Name),
		j.SessionTarget, nullStr(j.Model), boolInt(j.Enabled), nullText(j.Delivery), boolInt(j.DeleteAfterRun),
		nullText(j.AllowedTools), cronTime(j.NextRun), boolInt(j.UsesMemory), j.AgentAlias, j.Source}
	if !keepFormat {
		q += ", shell_output_format=?"
		args = append(args, j.ShellOutputFormat)
	}
	res, err := d.w.ExecContext(ctx, q+" WHERE id=?", append(args, j.ID)...)
	if err != nil {
		return fmt.Errorf("store: cron update %s: %w", j.ID, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("store: cron update %s: %w", j.ID, ErrNotFound)
	}
	return nil
}

// Delete removes job id and, by cascade, its runs. It reports whether a row was deleted; a missing database
// is not created.
func (s *CronStore) Delete(ctx context.Context, id string) (bool, error) {
	d, err := s.open(ctx, false)
	if d == nil || err != nil {
		return false, err
	}
	res, err := d.w.ExecContext(ctx, "DELETE FROM cron_jobs WHERE id = ?", id)
	if err != nil {
		return false, fmt.Errorf("store: cron delete %s: %w", id, err)
	}
	n, _ := res.RowsAffected()
	return n > 0, nil
}

// ClearLocks releases every claim (scheduler start: a claim left by a previous process is stale). A missing
// database is not created.
func (s *CronStore) ClearLocks(ctx context.Context) (int, error) {
	d, err := s.open(ctx, false)
	if d == nil || err != nil {
		return 0, err
	}
	res, err := d.w.ExecContext(ctx, "UPDATE cron_jobs SET locked_at = NULL WHERE locked_at IS NOT NULL")
	if err != nil {
		return 0, fmt.Errorf("store: cron clear locks: %w", err)
	}
	n, _ := res.RowsAffected()
	return int(n), nil
}

// Claim is the start of one run of a job.
type Claim struct {
	JobID string
	Now   time.Time
	// NextRun, when set, becomes the job's next_run in the same transaction as the claim, so a run cut by the
	// end of the process resumes at the following occurrence instead of repeating this one.
	NextRun *time.Time
	// KeepRuns bounds the job's run history (upstream's max_run_history); below 1 means 1.
	KeepRuns int
	// Due, when set, makes the claim succeed only if the job is still enabled and due at Now (a scheduled run;
	// a manual trigger leaves it unset).
	Due bool
	// DueAt, when set with Due, makes the claim succeed only if the job's next_run is still exactly DueAt: the
	// occurrence the caller read is the one it runs.
	DueAt *time.Time
	// Slot, on a store several daemons share, is the work slot this run was claimed under (the claim is fenced
	// on it); "" on a store of one install.
	Slot string
}

// ClaimRun claims the job (upstream's UPDATE ... SET locked_at=now WHERE id=? AND locked_at IS NULL) and, in the
// same transaction, records a running cron_runs row. It returns the run id and true, or false when another
// run (of this or another process) holds the claim or the job is gone.
func (s *CronStore) ClaimRun(ctx context.Context, c Claim) (int64, bool, error) {
	d, err := s.open(ctx, false)
	if d == nil || err != nil {
		return 0, false, err
	}
	var runID int64
	claimed := false
	err = d.withTx(ctx, func(tx *sql.Tx) error {
		q := "UPDATE cron_jobs SET locked_at = ? WHERE id = ? AND locked_at IS NULL"
		args := []any{cronTime(c.Now), c.JobID}
		if c.Due {
			q += " AND enabled = 1 AND next_run <= ?"
			args = append(args, cronTime(c.Now))
			if c.DueAt != nil {
				q += " AND next_run = ?"
				args = append(args, cronTime(*c.DueAt))
			}
		}
		res, err := tx.ExecContext(ctx, q, args...)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n != 1 {
			return nil
		}
		claimed = true
		if c.NextRun != nil {
			if _, err := tx.ExecContext(ctx, "UPDATE cron_jobs SET next_run = ? WHERE id = ?", cronTime(*c.NextRun), c.JobID); err != nil {
				return err
			}
		}
		res, err = tx.ExecContext(ctx, `INSERT INTO cron_runs (job_id, started_at, finished_at, status, output, duration_ms)
			VALUES (?, ?, ?, ?, NULL, NULL)`, c.JobID, cronTime(c.Now), cronTime(c.Now), CronStatusRunning)
		if err != nil {
			return err
		}
		if runID, err = res.LastInsertId(); err != nil {
			return err
		}
		return pruneRuns(ctx, tx, c.JobID, c.KeepRuns)
	})
	if err != nil {
		return 0, false, fmt.Errorf("store: cron claim %s: %w", c.JobID, err)
	}
	return runID, claimed, nil
}

// Release drops the claim on job id.
func (s *CronStore) Release(ctx context.Context, id string) error {
	d, err := s.open(ctx, false)
	if d == nil || err != nil {
		return err
	}
	if _, err := d.w.ExecContext(ctx, "UPDATE cron_jobs SET locked_at = NULL WHERE id = ?", id); err != nil {
		return fmt.Errorf("store: cron release %s: %w", id, err)
	}
	return nil
}

// Completion says what happens to a job after a run.
type Completion int

// Completions (upstream's RunCompletionAction, plus Record for a manual run, which leaves the schedule alone).
const (
	CompleteRecord     Completion = iota // last_* only
	CompleteReschedule                   // next_run = NextRun, last_*
	CompleteDisable                      // enabled = 0, last_*
	CompleteDelete                       // the job and its runs are deleted
)

// Finish is the end of one run.
type Finish struct {
	JobID      string
	RunID      int64
	FinishedAt time.Time
	Status     string
	Output     string
	DurationMS int64
	Action     Completion
	NextRun    time.Time // for CompleteReschedule
	KeepRuns   int
	Slot       string // the run's Claim.Slot
}

// FinishRun records the run's end and the job's new state in one transaction and releases the claim. When
// that fails, the job's state alone is applied (a delete falls back to disabling), as upstream does, so a job
// never stays due because its history could not be written. The output is capped (CapCronOutput).
func (s *CronStore) FinishRun(ctx context.Context, f Finish) error {
	d, err := s.open(ctx, true)
	if err != nil {
		return err
	}
	out := CapCronOutput(f.Output)
	err = d.withTx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, "UPDATE cron_runs SET finished_at=?, status=?, output=?, duration_ms=? WHERE id=?",
			cronTime(f.FinishedAt), f.Status, out, f.DurationMS, f.RunID)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			// The running row is gone: the job was deleted during the run (nothing left to record), or the row
			// was pruned by a burst of manual runs (keep the history anyway).
			var one int
			err := tx.QueryRowContext(ctx, "SELECT 1 FROM cron_jobs WHERE id = ?", f.JobID).Scan(&one)
			if errors.Is(err, sql.ErrNoRows) {
				return nil
			}
			if err != nil {
				return err
			}
			if _, err := tx.ExecContext(ctx, `INSERT INTO cron_runs (job_id, started_at, finished_at, status, output, duration_ms)
				VALUES (?, ?, ?, ?, ?, ?)`, f.JobID, cronTime(f.FinishedAt.Add(-time.Duration(f.DurationMS)*time.Millisecond)),
				cronTime(f.FinishedAt), f.Status, out, f.DurationMS); err != nil {
				return err
			}
		}
		if err := pruneRuns(ctx, tx, f.JobID, f.KeepRuns); err != nil {
			return err
		}
		return applyCompletion(ctx, tx, f, f.Action, out)
	})
	if err == nil {
		return nil
	}
	action := f.Action
	if action == CompleteDelete {
		action = CompleteDisable
	}
	err2 := d.withTx(ctx, func(tx *sql.Tx) error { return applyCompletion(ctx, tx, f, action, out) })
	return fmt.Errorf("store: cron finish %s: %w", f.JobID, errors.Join(err, err2))
}

func applyCompletion(ctx context.Context, tx *sql.Tx, f Finish, action Completion, out string) error {
	var err error
	switch action {
	case CompleteDelete:
		_, err = tx.ExecContext(ctx, "DELETE FROM cron_jobs WHERE id = ?", f.JobID)
		return err
	case CompleteDisable:
		_, err = tx.ExecContext(ctx, "UPDATE cron_jobs SET enabled=0, last_run=?, last_status=?, last_output=?, locked_at=NULL WHERE id=?",
			cronTime(f.FinishedAt), f.Status, out, f.JobID)
	case CompleteReschedule:
		_, err = tx.ExecContext(ctx, "UPDATE cron_jobs SET next_run=?, last_run=?, last_status=?, last_output=?, locked_at=NULL WHERE id=?",
			cronTime(f.NextRun), cronTime(f.FinishedAt), f.Status, out, f.JobID)
	default:
		_, err = tx.ExecContext(ctx, "UPDATE cron_jobs SET last_run=?, last_status=?, last_output=?, locked_at=NULL WHERE id=?",
			cronTime(f.FinishedAt), f.Status, out, f.JobID)
	}
	return err
}

// pruneRuns keeps the newest keep runs of job (upstream's order: started_at DESC, id DESC).
func pruneRuns(ctx context.Context, tx *sql.Tx, jobID string, keep int) error {
	_, err := tx.ExecContext(ctx, `DELETE FROM cron_runs WHERE job_id = ?1 AND id NOT IN (
		SELECT id FROM cron_runs WHERE job_id = ?1 ORDER BY started_at DESC, id DESC LIMIT ?2)`, jobID, max(keep, 1))
	return err
}

// MarkRunLost marks run id lost (its process ended during the run) and notes it on the job; disable also
// disables the job (a one-shot whose run was cut is not run again).
func (s *CronStore) MarkRunLost(ctx context.Context, runID int64, at time.Time, note string, disable bool) error {
	d, err := s.open(ctx, false)
	if d == nil || err != nil {
		return err
	}
	err = d.withTx(ctx, func(tx *sql.Tx) error {
		var jobID, started string
		err := tx.QueryRowContext(ctx, "SELECT job_id, started_at FROM cron_runs WHERE id = ? AND status = ?", runID, CronStatusRunning).Scan(&jobID, &started)
		if errors.Is(err, sql.ErrNoRows) {
			return nil
		}
		if err != nil {
			return err
		}
		dur := int64(0)
		if st, err := parseTime(started); err == nil && at.After(st) {
			dur = at.Sub(st).Milliseconds()
		}
		if _, err := tx.ExecContext(ctx, "UPDATE cron_runs SET status=?, finished_at=?, output=?, duration_ms=? WHERE id=?",
			CronStatusLost, cronTime(at), note, dur, runID); err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, "UPDATE cron_jobs SET last_run=?, last_status=?, last_output=?, enabled = enabled AND ? WHERE id=?",
			cronTime(at), CronStatusLost, note, boolInt(!disable), jobID)
		return err
	})
	if err != nil {
		return fmt.Errorf("store: cron mark lost %d: %w", runID, err)
	}
	return nil
}

// RunningRuns returns the runs still marked running, oldest first.
func (s *CronStore) RunningRuns(ctx context.Context) ([]CronRun, error) {
	d, err := s.open(ctx, false)
	if d == nil || err != nil {
		return nil, err
	}
	rows, err := d.r.QueryContext(ctx, "SELECT id, job_id FROM cron_runs WHERE status = ? ORDER BY id", CronStatusRunning)
	if err != nil {
		return nil, fmt.Errorf("store: cron running runs: %w", err)
	}
	defer rows.Close()
	var out []CronRun
	for rows.Next() {
		r := CronRun{Status: CronStatusRunning}
		if err := rows.Scan(&r.ID, &r.JobID); err != nil {
			return nil, fmt.Errorf("store: cron running runs: %w", err)
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// Runs returns the newest limit runs of job (limit below 1 means 1), newest first.
func (s *CronStore) Runs(ctx context.Context, jobID string, limit int) ([]CronRun, error) {
	d, err := s.open(ctx, false)
	if d == nil || err != nil {
		return nil, err
	}
	rows, err := d.r.QueryContext(ctx, `SELECT id, job_id, started_at, finished_at, status, output, duration_ms
		FROM cron_runs WHERE job_id = ? ORDER BY started_at DESC, id DESC LIMIT ?`, jobID, max(limit, 1))
	if err != nil {
		return nil, fmt.Errorf("store: cron runs %s: %w", jobID, err)
	}
	defer rows.Close()
	var out []CronRun
	for rows.Next() {
		var (
			r              CronRun
			started, ended string
			output         sql.NullString
			durationMS     sql.NullInt64
		)
		if err := rows.Scan(&r.ID, &r.JobID, &started, &ended, &r.Status, &output, &durationMS); err != nil {
			return nil, fmt.Errorf("store: cron runs %s: %w", jobID, err)
		}
		if r.StartedAt, err = parseTime(started); err != nil {
			return nil, fmt.Errorf("store: cron runs %s: %w", jobID, err)
		}
		if r.FinishedAt, err = parseTime(ended); err != nil {
			return nil, fmt.Errorf("store: cron runs %s: %w", jobID, err)
		}
		r.Output = nullable(output)
		if durationMS.Valid {
			r.DurationMS = &durationMS.Int64
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// SkipMissed applies upstream's catch_up_on_startup=false rule to one overdue job: a recurring job moves to
// nextRun without running; a one-shot (nextRun nil) is disabled with last_status skipped.
func (s *CronStore) SkipMissed(ctx context.Context, id string, now time.Time, nextRun *time.Time) error {
	d, err := s.open(ctx, false)
	if d == nil || err != nil {
		return err
	}
	if nextRun != nil {
		_, err = d.w.ExecContext(ctx, "UPDATE cron_jobs SET next_run = ? WHERE id = ?", cronTime(*nextRun), id)
	} else {
		_, err = d.w.ExecContext(ctx, "UPDATE cron_jobs SET enabled=0, last_run=?, last_status=?, last_output=? WHERE id=?",
			cronTime(now), CronStatusSkipped, "skipped — catch_up_on_startup disabled", id)
	}
	if err != nil {
		return fmt.Errorf("store: cron skip %s: %w", id, err)
	}
	return nil
}

// CapCronOutput truncates output to MaxCronOutputBytes on a UTF-8 boundary, ending with CronTruncatedMarker.
func CapCronOutput(output string) string {
	if len(output) <= MaxCronOutputBytes {
		return output
	}
	cut := MaxCronOutputBytes - len(CronTruncatedMarker)
	for cut > 0 && output[cut]&0xC0 == 0x80 {
		cut--
	}
	return output[:cut] + CronTruncatedMarker
}

// cronTime formats t as upstream's jobs.db does (chrono's to_rfc3339): UTC with "+00:00" and a fraction of
// 0, 3, 6 or 9 digits. Timestamps of one width class compare as text in time order, which the due query needs.
func cronTime(t time.Time) string {
	t = t.UTC()
	base := t.Format("2006-01-02T15:04:05")
	ns := t.Nanosecond()
	switch {
	case ns == 0:
	case ns%1_000_000 == 0:
		base += "." + pad(ns/1_000_000, 3)
	case ns%1_000 == 0:
		base += "." + pad(ns/1_000, 6)
	default:
		base += "." + pad(ns, 9)
	}
	return base + "+00:00"
}

func pad(v, width int) string {
	s := strconv.Itoa(v)
	for len(s) < width {
		s = "0" + s
	}
	return s
}

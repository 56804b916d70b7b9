package store

import (
	"context"
	"database/sql"
	"fmt"
	"sync"
	"time"
)

// Task statuses of the control plane (state.md §7). The last five are terminal.
const (
	TaskRunning   = "running"
	TaskPaused    = "paused"
	TaskCompleted = "completed"
	TaskFailed    = "failed"
	TaskCancelled = "cancelled"
	TaskLost      = "lost"
	TaskTimedOut  = "timed_out"
)

// controlPlaneDDL is upstream's tasks table (task_store_sqlite.rs). The database's user_version belongs to
// upstream's goal-table migrations, so this store leaves it alone and applies only this idempotent DDL: an
// upstream database is used as it is, and upstream can later open one made here and add its goal tables.
const controlPlaneDDL = `
CREATE TABLE IF NOT EXISTS tasks (
    id              TEXT PRIMARY KEY,
    kind            TEXT NOT NULL,
    agent           TEXT NOT NULL,
    status          TEXT NOT NULL,
    owner_pid       INTEGER NOT NULL DEFAULT 0,
    owner_boot_id   TEXT NOT NULL DEFAULT '',
    heartbeat_at    TEXT,
    depth           INTEGER NOT NULL DEFAULT 0,
    parent_id       TEXT,
    originator_route TEXT,
    delivered       INTEGER NOT NULL DEFAULT 0,
    idem_key        TEXT,
    principal_id    TEXT,
    started_at      TEXT NOT NULL,
    finished_at     TEXT,
    output          TEXT,
    error           TEXT
);
CREATE INDEX IF NOT EXISTS idx_tasks_status ON tasks(status);
CREATE INDEX IF NOT EXISTS idx_tasks_agent  ON tasks(agent);
CREATE INDEX IF NOT EXISTS idx_tasks_agent_kind_started ON tasks(agent, kind, started_at DESC);
`

// Task is one row of tasks. Optional columns are "" / nil when NULL.
type Task struct {
	ID, Kind, Agent, Status string
	OwnerPID                int
	OwnerBootID             string
	HeartbeatAt             *time.Time
	Depth                   int
	ParentID                string
	IdemKey                 string // ours: what the task runs, e.g. "cron:<job>#<run>"
	StartedAt               time.Time
	FinishedAt              *time.Time
	Output, Error           string
}

// TaskStore is data/control_plane.db: supervised background tasks. It is safe for concurrent use.
type TaskStore struct {
	d *db

	mu     sync.Mutex // guards closed
	closed bool
}

// OpenControlPlane opens or creates the control-plane database at path.
func OpenControlPlane(ctx context.Context, path string) (*TaskStore, error) {
	d, err := openDB(ctx, path, "", nil)
	if err != nil {
		return nil, err
	}
	if _, err := d.w.ExecContext(ctx, controlPlaneDDL); err != nil {
		_ = d.close()
		return nil, fmt.Errorf("store: control plane %s: %w", path, err)
	}
	return &TaskStore{d: d}, nil
}

// Close closes the database; it is idempotent.
func (s *TaskStore) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil
	}
	s.closed = true
	return s.d.close()
}

func optText(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// CreateTask registers t; an existing id is left untouched (upstream's idempotent create).
func (s *TaskStore) CreateTask(ctx context.Context, t Task) error {
	_, err := s.d.w.ExecContext(ctx, `INSERT INTO tasks (id, kind, agent, status, owner_pid, owner_boot_id, heartbeat_at,
		depth, parent_id, idem_key, started_at, finished_at, output, error) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)
		ON CONFLICT(id) DO NOTHING`,
		t.ID, t.Kind, t.Agent, t.Status, t.OwnerPID, t.OwnerBootID, nullTime(t.HeartbeatAt), t.Depth, optText(t.ParentID),
		optText(t.IdemKey), cronTime(t.StartedAt), nullTime(t.FinishedAt), optText(t.Output), optText(t.Error))
	if err != nil {
		return fmt.Errorf("store: create task %s: %w", t.ID, err)
	}
	return nil
}

// FinishTask moves a task that is not terminal to status (stamping finished_at when status is terminal) and
// records output and error when given. It reports whether the task changed.
func (s *TaskStore) FinishTask(ctx context.Context, id, status, output, errText string, at time.Time) (bool, error) {
	var finished any
	if terminal(status) {
		finished = cronTime(at)
	}
	res, err := s.d.w.ExecContext(ctx, `UPDATE tasks SET status = ?, output = COALESCE(?, output), error = COALESCE(?, error),
		finished_at = COALESCE(?, finished_at) WHERE id = ? AND status NOT IN ('completed','failed','cancelled','lost','timed_out')`,
		status, optText(output), optText(errText), finished, id)
	if err != nil {
		return false, fmt.Errorf("store: finish task %s: %w", id, err)
	}
	n, _ := res.RowsAffected()
	return n > 0, nil
}

func terminal(status string) bool {
	switch status {
	case TaskCompleted, TaskFailed, TaskCancelled, TaskLost, TaskTimedOut:
		return true
	}
	return false
}

// Heartbeat stamps a liveness beat on task id, only for its owning boot.
func (s *TaskStore) Heartbeat(ctx context.Context, id, bootID string, at time.Time) error {
	if _, err := s.d.w.ExecContext(ctx, "UPDATE tasks SET heartbeat_at = ? WHERE id = ? AND owner_boot_id = ?", cronTime(at), id, bootID); err != nil {
		return fmt.Errorf("store: heartbeat task %s: %w", id, err)
	}
	return nil
}

const taskSelect = `SELECT id, kind, agent, status, owner_pid, owner_boot_id, heartbeat_at, depth, parent_id, idem_key,
	started_at, finished_at, output, error FROM tasks`

// Task returns task id, or an error wrapping ErrNotFound.
func (s *TaskStore) Task(ctx context.Context, id string) (Task, error) {
	ts, err := s.queryTasks(ctx, taskSelect+" WHERE id = ?", id)
	if err != nil {
		return Task{}, err
	}
	if len(ts) == 0 {
		return Task{}, fmt.Errorf("store: task %s: %w", id, ErrNotFound)
	}
	return ts[0], nil
}

// RunningTasks returns the tasks whose status is running. Rows that do not parse are skipped.
func (s *TaskStore) RunningTasks(ctx context.Context) ([]Task, error) {
	return s.queryTasks(ctx, taskSelect+" WHERE status = 'running' ORDER BY started_at")
}

func (s *TaskStore) queryTasks(ctx context.Context, q string, args ...any) ([]Task, error) {
	rows, err := s.d.r.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("store: tasks: %w", err)
	}
	defer rows.Close()
	var out []Task
	for rows.Next() {
		var (
			t                                             Task
			heartbeat, parent, idem, finished, out1, err1 sql.NullString
			started                                       string
		)
		if err := rows.Scan(&t.ID, &t.Kind, &t.Agent, &t.Status, &t.OwnerPID, &t.OwnerBootID, &heartbeat, &t.Depth,
			&parent, &idem, &started, &finished, &out1, &err1); err != nil {
			return nil, fmt.Errorf("store: tasks: %w", err)
		}
		t.ParentID, t.IdemKey, t.Output, t.Error = parent.String, idem.String, out1.String, err1.String
		st, perr := parseTime(started)
		if perr != nil {
			continue // an unreadable row is skipped, as upstream does
		}
		t.StartedAt = st
		for _, f := range []struct {
			src sql.NullString
			dst **time.Time
		}{{heartbeat, &t.HeartbeatAt}, {finished, &t.FinishedAt}} {
			if f.src.Valid {
				if v, err := parseTime(f.src.String); err == nil {
					*f.dst = &v
				}
			}
		}
		out = append(out, t)
	}
	return out, rows.Err()
}

// MarkLost moves a running task to lost (its owner is gone). It reports whether it did.
func (s *TaskStore) MarkLost(ctx context.Context, id string, at time.Time) (bool, error) {
	res, err := s.d.w.ExecContext(ctx, "UPDATE tasks SET status = 'lost', finished_at = ? WHERE id = ? AND status = 'running'", cronTime(at), id)
	if err != nil {
		return false, fmt.Errorf("store: mark task %s lost: %w", id, err)
	}
	n, _ := res.RowsAffected()
	return n > 0, nil
}

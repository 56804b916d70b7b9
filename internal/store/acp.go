package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"
)

// ACPStore is the durable ACP session database (data/sessions/acp-sessions.db, state.md §6): upstream's tables,
// unchanged, plus acp_checkpoints. A turn is written in one transaction once it has ended (AppendTurn); while it
// runs, its progress is recorded in the session's checkpoint row (BeginTurn). It is safe for concurrent use;
// writes are serialized on one connection, reads run concurrently on a snapshot.
type ACPStore struct {
	d *db

	mu     sync.Mutex // guards closed
	closed bool
}

// ErrExists reports a session id that is already stored.
var ErrExists = errors.New("store: already exists")

// Outcomes of a stored tool result (acp_tool_calls.outcome of an 'out' row). Upstream writes "unknown".
const (
	ACPOutcomeSuccess = "success"
	ACPOutcomeFailure = "failure"
	ACPOutcomeUnknown = "unknown"
)

// ACPSession is one acp_sessions row. Empty strings stand for NULL columns.
type ACPSession struct {
	UUID         string
	AgentAlias   string
	WorkspaceDir string
	TokenCount   int64
	KilledAt     *time.Time // the tombstone: a killed session is never made live again
	CreatedAt    time.Time
	LastActivity time.Time
	PlanJSON     string // the latest plan, a JSON array ("" when none was stored)
	Surface      string // interaction_surface (ours): the surface the session was created for
	MessageCount int    // acp_messages rows (filled by Session and List)
}

// ACPMessage is one acp_messages row with its tool-call rows. An assistant message that called tools carries the
// calls ('in' rows) and, once they ran, their results ('out' rows, attached to the same message as upstream does).
type ACPMessage struct {
	ID        int64 // assigned by AppendTurn; ignored on input
	Role      string
	Content   string
	Reasoning string // reasoning_content
	CreatedAt time.Time
	Calls     []ACPToolCall
	Results   []ACPToolResult
}

// ACPToolCall is an 'in' row: the call as the model asked for it. Arguments is the raw JSON text.
type ACPToolCall struct {
	ID, Name, Arguments string
}

// ACPToolResult is an 'out' row: what the call produced. Outcome is one of the ACPOutcome* values.
type ACPToolResult struct {
	ID, Name, Content, Outcome string
}

// ACPCheckpoint is a session's latest acp_checkpoints row.
type ACPCheckpoint struct {
	Generation int
	// Snapshot is the retained provider context (JSON array); nil when none was written (history is replayed).
	Snapshot          *string
	BoundaryMessageID int64
	// TurnID, TurnPrompt and TurnStartedAt describe the turn in progress; TurnID is "" when none is.
	TurnID        string
	TurnPrompt    string
	TurnStartedAt *time.Time
}

// acpSessionColumns are the acp_sessions columns an older database may lack: upstream added killed_at and
// plan_json after its first release; interaction_surface is ours.
var acpSessionColumns = [][2]string{
	{"killed_at", "TEXT"},
	{"plan_json", "TEXT"},
	{"interaction_surface", "TEXT"},
}

// OpenACP opens or creates the ACP database at path (parent directory created with mode 0700) and brings its
// schema up to date. A database the upstream daemon wrote (same tables, user_version 0) is adopted in place.
func OpenACP(ctx context.Context, path string) (*ACPStore, error) {
	d, err := openDB(ctx, path, "acp", map[int]func(context.Context, *sql.Tx) error{
		2: func(ctx context.Context, tx *sql.Tx) error {
			return ensureColumns(ctx, tx, "acp_sessions", acpSessionColumns)
		},
	})
	if err != nil {
		return nil, err
	}
	return &ACPStore{d: d}, nil
}

// Close closes the database. Calls after Close return ErrClosed; Close itself is idempotent.
func (s *ACPStore) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil
	}
	s.closed = true
	return s.d.close()
}

func (s *ACPStore) check(op, id string) error {
	s.mu.Lock()
	closed := s.closed
	s.mu.Unlock()
	if closed {
		return fmt.Errorf("store: acp %s %s: %w", op, id, ErrClosed)
	}
	if id == "" {
		return fmt.Errorf("store: acp %s: empty session id: %w", op, ErrInvalid)
	}
	return nil
}

// Create stores a new session row (token_count 0, created_at = last_activity = now). An id already stored,
// killed or not, is ErrExists.
func (s *ACPStore) Create(ctx context.Context, row ACPSession, now time.Time) error {
	if err := s.check("create", row.UUID); err != nil {
		return err
	}
	if row.AgentAlias == "" || row.WorkspaceDir == "" {
		return fmt.Errorf("store: acp create %s: agent alias and workspace are required: %w", row.UUID, ErrInvalid)
	}
	err := s.d.withTx(ctx, func(tx *sql.Tx) error {
		ts := formatTime(now)
		res, err := tx.ExecContext(ctx, `INSERT INTO acp_sessions
			(session_uuid, agent_alias, workspace_dir, token_count, created_at, last_activity, interaction_surface)
			VALUES (?, ?, ?, 0, ?, ?, ?) ON CONFLICT(session_uuid) DO NOTHING`,
			row.UUID, row.AgentAlias, row.WorkspaceDir, ts, ts, nullString(row.Surface))
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil {
			return err
		} else if n == 0 {
			return ErrExists
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("store: acp create %s: %w", row.UUID, err)
	}
	return nil
}

const acpSessionCols = `s.session_uuid, s.agent_alias, s.workspace_dir, s.token_count, s.killed_at, s.created_at,
	s.last_activity, s.plan_json, s.interaction_surface,
	(SELECT COUNT(*) FROM acp_messages m WHERE m.session_id = s.id)`

func scanACPSession(r rowScanner) (ACPSession, error) {
	var (
		a                      ACPSession
		created, last          string
		killed, plan, surface  sql.NullString
		tokens, count          sql.NullInt64
		alias, workspace, uuid string
	)
	if err := r.Scan(&uuid, &alias, &workspace, &tokens, &killed, &created, &last, &plan, &surface, &count); err != nil {
		return ACPSession{}, err
	}
	a.UUID, a.AgentAlias, a.WorkspaceDir = uuid, alias, workspace
	a.TokenCount, a.MessageCount = max(tokens.Int64, 0), int(count.Int64)
	a.PlanJSON, a.Surface = plan.String, surface.String
	var err error
	if a.CreatedAt, err = parseTime(created); err != nil {
		return ACPSession{}, fmt.Errorf("session %s created_at: %w", uuid, err)
	}
	if a.LastActivity, err = parseTime(last); err != nil {
		return ACPSession{}, fmt.Errorf("session %s last_activity: %w", uuid, err)
	}
	if killed.Valid {
		t, err := parseTime(killed.String)
		if err != nil {
			// The tombstone is what matters; an unreadable time must not revive the session.
			t = a.LastActivity
		}
		a.KilledAt = &t
	}
	return a, nil
}

// Session returns the session row id, killed or not, or ErrNotFound.
func (s *ACPStore) Session(ctx context.Context, id string) (ACPSession, error) {
	if err := s.check("session", id); err != nil {
		return ACPSession{}, err
	}
	a, err := scanACPSession(s.d.r.QueryRowContext(ctx, "SELECT "+acpSessionCols+" FROM acp_sessions s WHERE s.session_uuid = ?", id))
	if errors.Is(err, sql.ErrNoRows) {
		return ACPSession{}, fmt.Errorf("store: acp session %s: %w", id, ErrNotFound)
	}
	if err != nil {
		return ACPSession{}, fmt.Errorf("store: acp session %s: %w", id, err)
	}
	return a, nil
}

// List returns the sessions that are not killed, most recent activity first; limit <= 0 means all.
func (s *ACPStore) List(ctx context.Context, limit int) ([]ACPSession, error) {
	if err := s.check("list", "-"); err != nil {
		return nil, err
	}
	q := "SELECT " + acpSessionCols + " FROM acp_sessions s WHERE s.killed_at IS NULL ORDER BY s.last_activity DESC, s.id DESC"
	args := []any{}
	if limit > 0 {
		q += " LIMIT ?"
		args = append(args, limit)
	}
	rows, err := s.d.r.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("store: acp list: %w", err)
	}
	defer rows.Close()
	var out []ACPSession
	for rows.Next() {
		a, err := scanACPSession(rows)
		if err != nil {
			return nil, fmt.Errorf("store: acp list: %w", err)
		}
		out = append(out, a)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: acp list: %w", err)
	}
	return out, nil
}

// Messages returns session id's messages in order, each with its tool-call rows, or ErrNotFound for an unknown
// session. An 'out' row whose event_kind is neither 'in' nor 'out' is an error, as upstream treats it.
func (s *ACPStore) Messages(ctx context.Context, id string) ([]ACPMessage, error) {
	if err := s.check("messages", id); err != nil {
		return nil, err
	}
	var out []ACPMessage
	err := s.d.readTx(ctx, func(tx *sql.Tx) error {
		var sid int64
		if err := tx.QueryRowContext(ctx, "SELECT id FROM acp_sessions WHERE session_uuid = ?", id).Scan(&sid); err != nil {
			if errors.Is(err, sql.ErrNoRows) {
				return ErrNotFound
			}
			return err
		}
		rows, err := tx.QueryContext(ctx, `SELECT id, role, content, reasoning_content, created_at
			FROM acp_messages WHERE session_id = ? ORDER BY id`, sid)
		if err != nil {
			return err
		}
		byID := map[int64]int{}
		for rows.Next() {
			var (
				m         ACPMessage
				reasoning sql.NullString
				created   string
			)
			if err := rows.Scan(&m.ID, &m.Role, &m.Content, &reasoning, &created); err != nil {
				_ = rows.Close()
				return err
			}
			m.Reasoning = reasoning.String
			if m.CreatedAt, err = parseTime(created); err != nil {
				_ = rows.Close()
				return fmt.Errorf("message %d created_at: %w", m.ID, err)
			}
			byID[m.ID] = len(out)
			out = append(out, m)
		}
		if err := errors.Join(rows.Err(), rows.Close()); err != nil {
			return err
		}
		calls, err := tx.QueryContext(ctx, `SELECT c.message_id, c.tool_call_id, c.tool_name, c.event_kind, c.payload, c.outcome
			FROM acp_tool_calls c JOIN acp_messages m ON m.id = c.message_id
			WHERE m.session_id = ? ORDER BY c.id`, sid)
		if err != nil {
			return err
		}
		defer calls.Close()
		for calls.Next() {
			var (
				msgID                    int64
				callID, name, kind, load string
				outcome                  sql.NullString
			)
			if err := calls.Scan(&msgID, &callID, &name, &kind, &load, &outcome); err != nil {
				return err
			}
			i, ok := byID[msgID]
			if !ok {
				continue
			}
			switch kind {
			case "in":
				out[i].Calls = append(out[i].Calls, ACPToolCall{ID: callID, Name: name, Arguments: load})
			case "out":
				oc := outcome.String
				if oc == "" {
					oc = ACPOutcomeUnknown
				}
				out[i].Results = append(out[i].Results, ACPToolResult{ID: callID, Name: name, Content: load, Outcome: oc})
			default:
				return fmt.Errorf("unknown event_kind %q in acp_tool_calls for message %d", kind, msgID)
			}
		}
		return calls.Err()
	})
	if errors.Is(err, ErrNotFound) {
		return nil, fmt.Errorf("store: acp messages %s: %w", id, ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("store: acp messages %s: %w", id, err)
	}
	return out, nil
}

// sessionRowID returns the integer id of session uuid inside tx, or ErrNotFound.
func sessionRowID(ctx context.Context, tx *sql.Tx, uuid string) (int64, error) {
	var sid int64
	err := tx.QueryRowContext(ctx, "SELECT id FROM acp_sessions WHERE session_uuid = ?", uuid).Scan(&sid)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, ErrNotFound
	}
	return sid, err
}

// BeginTurn records in the session's checkpoint that turn turnID started with prompt. The row of generation 0 is
// created if the session has none. AppendTurn clears it; a row still holding a turn after a restart is a turn that
// the previous process never finished.
func (s *ACPStore) BeginTurn(ctx context.Context, id, turnID, prompt string, now time.Time) error {
	if err := s.check("begin turn", id); err != nil {
		return err
	}
	err := s.d.withTx(ctx, func(tx *sql.Tx) error {
		sid, err := sessionRowID(ctx, tx, id)
		if err != nil {
			return err
		}
		ts := formatTime(now)
		if _, err := tx.ExecContext(ctx, `INSERT INTO acp_checkpoints (session_id, generation, created_at, updated_at)
			SELECT ?, 0, ?, ? WHERE NOT EXISTS (SELECT 1 FROM acp_checkpoints WHERE session_id = ?)`, sid, ts, ts, sid); err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, `UPDATE acp_checkpoints SET turn_id = ?, turn_prompt = ?, turn_started_at = ?, updated_at = ?
			WHERE session_id = ? AND generation = (SELECT MAX(generation) FROM acp_checkpoints WHERE session_id = ?)`,
			turnID, prompt, ts, ts, sid, sid)
		return err
	})
	if err != nil {
		return fmt.Errorf("store: acp begin turn %s: %w", id, err)
	}
	return nil
}

// AppendTurn stores the messages of one ended turn, with their tool calls and results, updates last_activity and
// clears the turn in progress, all in one transaction: after a crash the turn is either wholly stored or not at
// all. The assigned ids are written back into msgs. A user or assistant message with an empty role is refused.
func (s *ACPStore) AppendTurn(ctx context.Context, id string, msgs []ACPMessage, now time.Time) error {
	if err := s.check("append turn", id); err != nil {
		return err
	}
	for i, m := range msgs {
		if m.Role == "" {
			return fmt.Errorf("store: acp append turn %s: message %d has no role: %w", id, i, ErrInvalid)
		}
	}
	err := s.d.withTx(ctx, func(tx *sql.Tx) error {
		sid, err := sessionRowID(ctx, tx, id)
		if err != nil {
			return err
		}
		ts := formatTime(now)
		for i := range msgs {
			m := &msgs[i]
			res, err := tx.ExecContext(ctx, `INSERT INTO acp_messages (session_id, role, content, reasoning_content, created_at)
				VALUES (?, ?, ?, ?, ?)`, sid, m.Role, m.Content, nullString(m.Reasoning), ts)
			if err != nil {
				return err
			}
			if m.ID, err = res.LastInsertId(); err != nil {
				return err
			}
			names := make(map[string]string, len(m.Calls))
			for _, c := range m.Calls {
				names[c.ID] = c.Name
				if _, err := tx.ExecContext(ctx, `INSERT INTO acp_tool_calls
					(message_id, tool_call_id, tool_name, event_kind, payload, outcome, created_at) VALUES (?, ?, ?, 'in', ?, NULL, ?)`,
					m.ID, c.ID, c.Name, c.Arguments, ts); err != nil {
					return err
				}
			}
			for _, r := range m.Results {
				name := r.Name
				if name == "" {
					name = names[r.ID]
				}
				if name == "" {
					name = "unknown"
				}
				outcome := r.Outcome
				if outcome == "" {
					outcome = ACPOutcomeUnknown
				}
				if _, err := tx.ExecContext(ctx, `INSERT INTO acp_tool_calls
					(message_id, tool_call_id, tool_name, event_kind, payload, outcome, created_at) VALUES (?, ?, ?, 'out', ?, ?, ?)`,
					m.ID, r.ID, name, r.Content, outcome, ts); err != nil {
					return err
				}
			}
		}
		if _, err := tx.ExecContext(ctx, "UPDATE acp_sessions SET last_activity = ? WHERE id = ?", ts, sid); err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, `UPDATE acp_checkpoints SET turn_id = NULL, turn_prompt = NULL, turn_started_at = NULL,
			updated_at = ? WHERE session_id = ? AND turn_id IS NOT NULL`, ts, sid)
		return err
	})
	if err != nil {
		return fmt.Errorf("store: acp append turn %s: %w", id, err)
	}
	return nil
}

// Checkpoint returns the session's latest checkpoint row; ok is false when it has none yet.
func (s *ACPStore) Checkpoint(ctx context.Context, id string) (cp ACPCheckpoint, ok bool, err error) {
	if err := s.check("checkpoint", id); err != nil {
		return ACPCheckpoint{}, false, err
	}
	var (
		snapshot, turnID, prompt, started sql.NullString
		boundary                          sql.NullInt64
	)
	err = s.d.r.QueryRowContext(ctx, `SELECT c.generation, c.snapshot_json, c.boundary_message_id, c.turn_id, c.turn_prompt,
		c.turn_started_at FROM acp_checkpoints c JOIN acp_sessions s ON s.id = c.session_id
		WHERE s.session_uuid = ? ORDER BY c.generation DESC LIMIT 1`, id).
		Scan(&cp.Generation, &snapshot, &boundary, &turnID, &prompt, &started)
	if errors.Is(err, sql.ErrNoRows) {
		return ACPCheckpoint{}, false, nil
	}
	if err != nil {
		return ACPCheckpoint{}, false, fmt.Errorf("store: acp checkpoint %s: %w", id, err)
	}
	if snapshot.Valid {
		cp.Snapshot = &snapshot.String
	}
	cp.BoundaryMessageID, cp.TurnID, cp.TurnPrompt = boundary.Int64, turnID.String, prompt.String
	if started.Valid {
		if t, err := parseTime(started.String); err == nil {
			cp.TurnStartedAt = &t
		}
	}
	return cp, true, nil
}

// SetTokenCount records the session's latest context size in tokens.
func (s *ACPStore) SetTokenCount(ctx context.Context, id string, n int64) error {
	return s.update(ctx, "set token count", id, "UPDATE acp_sessions SET token_count = ? WHERE session_uuid = ?", n, id)
}

// SetPlan stores the session's latest plan (a JSON array; "[]" is a cleared plan, distinct from none).
func (s *ACPStore) SetPlan(ctx context.Context, id, planJSON string) error {
	return s.update(ctx, "set plan", id, "UPDATE acp_sessions SET plan_json = ? WHERE session_uuid = ?", planJSON, id)
}

// Touch sets last_activity to now.
func (s *ACPStore) Touch(ctx context.Context, id string, now time.Time) error {
	return s.update(ctx, "touch", id, "UPDATE acp_sessions SET last_activity = ? WHERE session_uuid = ?", formatTime(now), id)
}

// update runs one UPDATE of session id's row; no such row is ErrNotFound.
func (s *ACPStore) update(ctx context.Context, op, id, q string, args ...any) error {
	if err := s.check(op, id); err != nil {
		return err
	}
	res, err := s.d.w.ExecContext(ctx, q, args...)
	if err == nil {
		var n int64
		if n, err = res.RowsAffected(); err == nil && n == 0 {
			err = ErrNotFound
		}
	}
	if err != nil {
		return fmt.Errorf("store: acp %s %s: %w", op, id, err)
	}
	return nil
}

// Kill tombstones the session: its history stays, but it is never made live again. The first killed_at is kept
// when it is killed twice. It reports whether the session exists.
func (s *ACPStore) Kill(ctx context.Context, id string, now time.Time) (bool, error) {
	err := s.update(ctx, "kill", id, `UPDATE acp_sessions SET killed_at = COALESCE(killed_at, ?), last_activity = ?
		WHERE session_uuid = ?`, formatTime(now), formatTime(now), id)
	if errors.Is(err, ErrNotFound) {
		return false, nil
	}
	return err == nil, err
}

// Delete removes the session with its messages, tool calls, events and checkpoints (ON DELETE CASCADE). It
// reports whether the session existed.
func (s *ACPStore) Delete(ctx context.Context, id string) (bool, error) {
	if err := s.check("delete", id); err != nil {
		return false, err
	}
	res, err := s.d.w.ExecContext(ctx, "DELETE FROM acp_sessions WHERE session_uuid = ?", id)
	if err != nil {
		return false, fmt.Errorf("store: acp delete %s: %w", id, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return false, fmt.Errorf("store: acp delete %s: %w", id, err)
	}
	return n > 0, nil
}

// AppendEvent records a lifecycle event of the session (acp_session_events). action and outcome are short
// lowercase words (upstream's Action and EventOutcome spellings); payload may be "" (NULL).
func (s *ACPStore) AppendEvent(ctx context.Context, id, action, outcome, payload string, now time.Time) error {
	if err := s.check("event", id); err != nil {
		return err
	}
	if strings.TrimSpace(action) == "" || strings.TrimSpace(outcome) == "" {
		return fmt.Errorf("store: acp event %s: action and outcome are required: %w", id, ErrInvalid)
	}
	err := s.d.withTx(ctx, func(tx *sql.Tx) error {
		sid, err := sessionRowID(ctx, tx, id)
		if err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, `INSERT INTO acp_session_events (session_id, action, outcome, payload, created_at)
			VALUES (?, ?, ?, ?, ?)`, sid, action, outcome, nullString(payload), formatTime(now))
		return err
	})
	if err != nil {
		return fmt.Errorf("store: acp event %s: %w", id, err)
	}
	return nil
}

// Backup writes a consistent copy of the database to dest (see db.backup).
func (s *ACPStore) Backup(ctx context.Context, dest string) error {
	if err := s.check("backup", "-"); err != nil {
		return err
	}
	return s.d.backup(ctx, dest)
}

package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"
)

// RoleInterruption is the role of the visible marker RecoverTurn appends for a turn the previous process never
// finished. It is not a provider role: nothing that rebuilds a model context sends it to a model.
const RoleInterruption = "interruption"

// RecoverTurn closes a turn that the session's checkpoint still holds as in progress (a crash mid-turn): in one
// transaction it appends the turn's user message (the prompt noted by BeginTurn) and one RoleInterruption message
// whose content is marker, and clears the turn in progress. It reports the recovered turn's id, "" when no turn
// was in progress, so a second call appends nothing. The caller must make sure no turn of this session is running
// in this process.
func (s *ACPStore) RecoverTurn(ctx context.Context, id, marker string, now time.Time) (turnID string, err error) {
	if err := s.check("recover turn", id); err != nil {
		return "", err
	}
	err = s.d.withTx(ctx, func(tx *sql.Tx) error {
		sid, err := sessionRowID(ctx, tx, id)
		if err != nil {
			return err
		}
		var (
			cpID         int64
			turn, prompt sql.NullString
		)
		err = tx.QueryRowContext(ctx, `SELECT id, turn_id, turn_prompt FROM acp_checkpoints WHERE session_id = ?
			ORDER BY generation DESC LIMIT 1`, sid).Scan(&cpID, &turn, &prompt)
		if errors.Is(err, sql.ErrNoRows) || (err == nil && !turn.Valid) {
			return nil
		}
		if err != nil {
			return err
		}
		ts := formatTime(now)
		if strings.TrimSpace(prompt.String) != "" {
			if _, err := tx.ExecContext(ctx, `INSERT INTO acp_messages (session_id, role, content, reasoning_content, created_at)
				VALUES (?, 'user', ?, NULL, ?)`, sid, prompt.String, ts); err != nil {
				return err
			}
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO acp_messages (session_id, role, content, reasoning_content, created_at)
			VALUES (?, ?, ?, NULL, ?)`, sid, RoleInterruption, marker, ts); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `UPDATE acp_checkpoints SET turn_id = NULL, turn_prompt = NULL, turn_started_at = NULL,
			updated_at = ? WHERE id = ?`, ts, cpID); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, "UPDATE acp_sessions SET last_activity = ? WHERE id = ?", ts, sid); err != nil {
			return err
		}
		turnID = turn.String
		return nil
	})
	if err != nil {
		return "", fmt.Errorf("store: acp recover turn %s: %w", id, err)
	}
	return turnID, nil
}

// Compact records a compaction of the session's model context: a new checkpoint generation holding snapshot (the
// retained provider context, a JSON array; "[]" is an explicitly empty context) and boundary, the last acp_messages
// id the snapshot covers, written in one transaction. The visible transcript is not touched. It returns the new
// generation. A boundary that is not one of the session's messages is ErrInvalid.
func (s *ACPStore) Compact(ctx context.Context, id, snapshot string, boundary int64, now time.Time) (int, error) {
	if err := s.check("compact", id); err != nil {
		return 0, err
	}
	if !strings.HasPrefix(strings.TrimSpace(snapshot), "[") {
		return 0, fmt.Errorf("store: acp compact %s: the snapshot must be a JSON array: %w", id, ErrInvalid)
	}
	var gen int
	err := s.d.withTx(ctx, func(tx *sql.Tx) error {
		sid, err := sessionRowID(ctx, tx, id)
		if err != nil {
			return err
		}
		var n int
		if err := tx.QueryRowContext(ctx, "SELECT COUNT(*) FROM acp_messages WHERE id = ? AND session_id = ?", boundary, sid).Scan(&n); err != nil {
			return err
		}
		if n == 0 {
			return fmt.Errorf("boundary message %d is not one of the session's messages: %w", boundary, ErrInvalid)
		}
		var last sql.NullInt64
		if err := tx.QueryRowContext(ctx, "SELECT MAX(generation) FROM acp_checkpoints WHERE session_id = ?", sid).Scan(&last); err != nil {
			return err
		}
		gen = 0
		if last.Valid {
			gen = int(last.Int64) + 1
		}
		ts := formatTime(now)
		_, err = tx.ExecContext(ctx, `INSERT INTO acp_checkpoints (session_id, generation, snapshot_json, boundary_message_id,
			created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)`, sid, gen, snapshot, boundary, ts, ts)
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("store: acp compact %s: %w", id, err)
	}
	return gen, nil
}

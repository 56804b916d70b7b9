package store

import (
	"context"
	"database/sql"
	"fmt"
)

// CountByAgent returns how many stored sessions each agent alias is attributed (sessions without an alias are
// not counted).
func (s *ChatStore) CountByAgent(ctx context.Context) (map[string]int, error) {
	if err := s.check("count by agent", "", false); err != nil {
		return nil, err
	}
	rows, err := s.d.r.QueryContext(ctx, `SELECT agent_alias, COUNT(*) FROM session_metadata
		WHERE agent_alias IS NOT NULL AND agent_alias != '' GROUP BY agent_alias`)
	if err != nil {
		return nil, fmt.Errorf("store: count by agent: %w", err)
	}
	defer rows.Close()
	out := map[string]int{}
	for rows.Next() {
		var alias string
		var n int
		if err := rows.Scan(&alias, &n); err != nil {
			return nil, fmt.Errorf("store: count by agent: %w", err)
		}
		out[alias] = n
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: count by agent: %w", err)
	}
	return out, nil
}

// RenameAgent attributes every session of agent from to agent to, in one transaction, and returns how many
// sessions moved.
func (s *ChatStore) RenameAgent(ctx context.Context, from, to string) (int, error) {
	if err := s.check("rename agent", from, true); err != nil {
		return 0, err
	}
	var n int64
	err := s.d.withTx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, "UPDATE session_metadata SET agent_alias = ? WHERE agent_alias = ?", to, from)
		if err != nil {
			return err
		}
		n, err = res.RowsAffected()
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("store: rename agent %s: %w", from, err)
	}
	return int(n), nil
}

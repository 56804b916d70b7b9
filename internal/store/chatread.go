package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"
)

// Page returns the newest messages of session key before index beforeIndex (beforeIndex < 0 means from the
// end), oldest first: at most limit of them (limit <= 0: no count limit), and no more than fit in maxBytes of
// content (maxBytes <= 0: no byte limit), though always at least one when the window is not empty. Rows are
// read newest first and reading stops at the first that does not fit, so a long history is never loaded
// whole. total is the session's message count, start the index of the first returned message.
func (s *ChatStore) Page(ctx context.Context, key string, limit, beforeIndex, maxBytes int) (msgs []Message, total, start int, err error) {
	if err := s.ready(ctx, "page", key, false); err != nil {
		return nil, 0, 0, err
	}
	err = s.d.readTx(ctx, func(tx *sql.Tx) error {
		if err := tx.QueryRowContext(ctx, "SELECT COUNT(*) FROM sessions WHERE session_key = ?", key).Scan(&total); err != nil {
			return err
		}
		end := total
		if beforeIndex >= 0 && beforeIndex < total {
			end = beforeIndex
		}
		n := end
		if limit > 0 && limit < n {
			n = limit
		}
		start = end
		if n <= 0 {
			return nil
		}
		rows, err := tx.QueryContext(ctx, `SELECT role, content, created_at FROM sessions
			WHERE session_key = ? ORDER BY id DESC LIMIT ? OFFSET ?`, key, n, total-end)
		if err != nil {
			return err
		}
		defer rows.Close()
		size := 0
		for i := end - 1; rows.Next(); i-- {
			var m Message
			var created string
			if err := rows.Scan(&m.Role, &m.Content, &created); err != nil {
				return err
			}
			if maxBytes > 0 && len(msgs) > 0 && size+len(m.Content) > maxBytes {
				break
			}
			if m.CreatedAt, err = parseTime(created); err != nil {
				return fmt.Errorf("message %d created_at: %w", i, err)
			}
			m.Index = i
			size += len(m.Content)
			msgs = append(msgs, m)
			start = i
		}
		return rows.Err()
	})
	if err != nil {
		return nil, 0, 0, fmt.Errorf("store: page %s: %w", key, err)
	}
	slices.Reverse(msgs)
	return msgs, total, start, nil
}

// Message returns message index of session key and the session's message count; an index with no message
// gives an error wrapping ErrNotFound (and still the count).
func (s *ChatStore) Message(ctx context.Context, key string, index int) (msg Message, total int, err error) {
	if err := s.ready(ctx, "message", key, false); err != nil {
		return Message{}, 0, err
	}
	var msgs []Message
	err = s.d.readTx(ctx, func(tx *sql.Tx) error {
		if err := tx.QueryRowContext(ctx, "SELECT COUNT(*) FROM sessions WHERE session_key = ?", key).Scan(&total); err != nil {
			return err
		}
		if index < 0 || index >= total {
			return nil
		}
		var err error
		msgs, err = queryMessages(ctx, tx, key, index, 1)
		return err
	})
	if err != nil {
		return Message{}, 0, fmt.Errorf("store: message %s %d: %w", key, index, err)
	}
	if len(msgs) == 0 {
		return Message{}, total, fmt.Errorf("store: message %s %d: %w", key, index, ErrNotFound)
	}
	return msgs[0], total, nil
}

// All returns every message of session key, oldest first (none for an unknown session).
func (s *ChatStore) All(ctx context.Context, key string) ([]Message, error) {
	if err := s.ready(ctx, "messages", key, false); err != nil {
		return nil, err
	}
	// The writer's data_version first: the cache holds only while no other connection committed (rowCounts).
	version, err := s.writerVersion(ctx)
	if err != nil {
		return nil, fmt.Errorf("store: messages %s: %w", key, err)
	}
	s.counts.mu.Lock()
	s.counts.seen(version)
	cached, ok := s.counts.hist[key]
	gen := s.counts.gen
	s.counts.mu.Unlock()
	if ok {
		return slices.Clone(cached), nil
	}
	var msgs []Message
	err = s.d.readTx(ctx, func(tx *sql.Tx) error {
		var err error
		msgs, err = queryMessages(ctx, tx, key, 0, -1)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("store: messages %s: %w", key, err)
	}
	// Kept only if nothing committed since the version was read: no write of ours (gen), none of another
	// connection's (a new version; one that committed after the read is seen by the next All).
	if version, err = s.writerVersion(ctx); err == nil {
		s.counts.mu.Lock()
		if s.counts.gen == gen && s.counts.dataVersion == version {
			s.counts.keep(key, slices.Clone(msgs))
		}
		s.counts.mu.Unlock()
	}
	return msgs, nil
}

// writerVersion reads PRAGMA data_version on the writer connection: it changes when another connection commits.
func (s *ChatStore) writerVersion(ctx context.Context) (int64, error) {
	var v int64
	err := s.d.stmts[sqlDataVersion].QueryRowContext(ctx).Scan(&v)
	return v, err
}

// queryMessages reads n messages (n < 0: all) of key starting at index start.
func queryMessages(ctx context.Context, tx *sql.Tx, key string, start, n int) ([]Message, error) {
	rows, err := tx.QueryContext(ctx, `SELECT role, content, created_at FROM sessions
		WHERE session_key = ? ORDER BY id LIMIT ? OFFSET ?`, key, n, start)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var msgs []Message
	for i := start; rows.Next(); i++ {
		var m Message
		var created string
		if err := rows.Scan(&m.Role, &m.Content, &created); err != nil {
			return nil, err
		}
		if m.CreatedAt, err = parseTime(created); err != nil {
			return nil, fmt.Errorf("message %d created_at: %w", i, err)
		}
		m.Index = i
		msgs = append(msgs, m)
	}
	return msgs, rows.Err()
}

// Meta returns the metadata of session key, or an error wrapping ErrNotFound.
func (s *ChatStore) Meta(ctx context.Context, key string) (SessionMeta, error) {
	if err := s.ready(ctx, "meta", key, false); err != nil {
		return SessionMeta{}, err
	}
	m, err := scanMeta(s.d.r.QueryRowContext(ctx, "SELECT "+metaCols+" FROM session_metadata WHERE session_key = ?", key))
	if errors.Is(err, sql.ErrNoRows) {
		return SessionMeta{}, fmt.Errorf("store: meta %s: %w", key, ErrNotFound)
	}
	if err != nil {
		return SessionMeta{}, fmt.Errorf("store: meta %s: %w", key, err)
	}
	return m, nil
}

// List returns session metadata, most recent activity first, at most limit rows (limit <= 0: no limit).
// A query that is not blank keeps only sessions with a message containing all of its words (full-text
// search; user input is never interpreted as FTS syntax, and a query with nothing searchable matches
// nothing).
func (s *ChatStore) List(ctx context.Context, query string, limit int) ([]SessionMeta, error) {
	return s.list(ctx, query, limit, "")
}

// attributed keeps the rows that name an agent or a channel.
const attributed = ` AND (COALESCE(agent_alias, '') != '' OR COALESCE(channel_id, '') != '')`

// ListAttributed is List without the rows that name neither an agent nor a channel, which upstream does not
// list either. The limit counts listed rows.
func (s *ChatStore) ListAttributed(ctx context.Context, query string, limit int) ([]SessionMeta, error) {
	return s.list(ctx, query, limit, attributed)
}

// listOrder is the order of List: julianday orders mixed timestamp spellings (ours, upstream's "+00:00") by
// instant. It is exactly idx_session_metadata_activity's, so a page walks that index (migration 0005).
const listOrder = " ORDER BY julianday(last_activity) DESC, last_activity DESC, session_key LIMIT ?"

// list is List with filter (" AND <condition>", or "") added to the WHERE clause.
func (s *ChatStore) list(ctx context.Context, query string, limit int, filter string) ([]SessionMeta, error) {
	if err := s.check("list", "", false); err != nil {
		return nil, err
	}
	if limit <= 0 {
		limit = -1
	}
	order := listOrder
	var (
		rows *sql.Rows
		err  error
	)
	if strings.TrimSpace(query) == "" {
		rows, err = s.d.r.QueryContext(ctx, "SELECT "+metaCols+" FROM session_metadata WHERE 1=1"+filter+order, limit)
	} else {
		fq := ftsQuery(query)
		if fq == "" {
			return nil, nil
		}
		rows, err = s.d.r.QueryContext(ctx, "SELECT "+metaCols+` FROM session_metadata
			WHERE session_key IN (SELECT session_key FROM sessions_fts WHERE sessions_fts MATCH ?)`+filter+order, fq, limit)
	}
	if err != nil {
		return nil, fmt.Errorf("store: list: %w", err)
	}
	defer rows.Close()
	var out []SessionMeta
	for rows.Next() {
		m, err := scanMeta(rows)
		if err != nil {
			return nil, fmt.Errorf("store: list: %w", err)
		}
		out = append(out, m)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: list: %w", err)
	}
	return out, nil
}

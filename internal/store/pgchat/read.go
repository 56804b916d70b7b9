package pgchat

import (
	"context"
	"fmt"

	"github.com/zeroclaw-go/zeroclaw/internal/pgdb"
	"github.com/zeroclaw-go/zeroclaw/internal/store"
)

// pageBatch is how many message sizes Page reads at a time while it finds where a byte budget ends.
const pageBatch = 256

// total is key's message count (0 for an unknown session).
func total(ctx context.Context, r pgdb.Runner, key string) (int, error) {
	rows, err := r.Query(ctx, "SELECT message_count FROM zc_chat_sessions WHERE session_key = $1", key)
	if err != nil || len(rows) == 0 {
		return 0, err
	}
	n, err := rows[0].Int64(0)
	return int(n), err
}

func scanMessages(rows []pgdb.Row) ([]store.Message, error) {
	msgs := make([]store.Message, 0, len(rows))
	for _, r := range rows {
		idx, err := r.Int64(0)
		if err != nil {
			return nil, err
		}
		content, err := decodeBytea(r[2])
		if err != nil {
			return nil, err
		}
		created, err := r.Time(3)
		if err != nil {
			return nil, fmt.Errorf("message %d created_at: %w", idx, err)
		}
		msgs = append(msgs, store.Message{Index: int(idx), Role: r.String(1), Content: content, CreatedAt: created})
	}
	return msgs, nil
}

const messageCols = "idx, role, content, created_at"

// Page returns the newest messages of key before index beforeIndex (< 0: from the end), oldest first, at most
// limit (<= 0: any number) and within maxBytes of content (<= 0: any size) though at least one when the window
// is not empty, exactly as store.ChatStore.Page. It reads the sizes first and then only the contents that fit,
// in one snapshot, so a long history is never loaded whole.
func (s *Store) Page(ctx context.Context, key string, limit, beforeIndex, maxBytes int) (msgs []store.Message, tot, start int, err error) {
	if err := s.check("page", key, false); err != nil {
		return nil, 0, 0, err
	}
	err = s.db.InTx(ctx, func(tx *pgdb.Tx) error {
		if _, err := tx.Exec(ctx, "SET TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY"); err != nil {
			return err
		}
		var err error
		if tot, err = total(ctx, tx, key); err != nil {
			return err
		}
		end := tot
		if beforeIndex >= 0 && beforeIndex < tot {
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
		count, size, cursor := 0, 0, end
	scan:
		for count < n {
			want := min(n-count, pageBatch)
			rows, err := tx.Query(ctx, `SELECT idx, octet_length(content) FROM zc_chat_messages
WHERE session_key = $1 AND idx < $2 ORDER BY idx DESC LIMIT $3`, key, cursor, want)
			if err != nil {
				return err
			}
			for _, r := range rows {
				idx, err := r.Int64(0)
				if err != nil {
					return err
				}
				l, err := r.Int64(1)
				if err != nil {
					return err
				}
				if maxBytes > 0 && count > 0 && size+int(l) > maxBytes {
					break scan
				}
				size += int(l)
				count++
				start, cursor = int(idx), int(idx)
			}
			if len(rows) < want {
				break
			}
		}
		if count == 0 {
			return nil
		}
		rows, err := tx.Query(ctx, "SELECT "+messageCols+` FROM zc_chat_messages
WHERE session_key = $1 AND idx >= $2 AND idx < $3 ORDER BY idx`, key, start, end)
		if err != nil {
			return err
		}
		msgs, err = scanMessages(rows)
		return err
	})
	if err != nil {
		return nil, 0, 0, fmt.Errorf("store: page %s: %w", key, err)
	}
	return msgs, tot, start, nil
}

// Message returns message index of key and the session's count; a missing index is store.ErrNotFound (with
// the count).
func (s *Store) Message(ctx context.Context, key string, index int) (store.Message, int, error) {
	if err := s.check("message", key, false); err != nil {
		return store.Message{}, 0, err
	}
	var (
		msgs []store.Message
		tot  int
	)
	err := s.db.InTx(ctx, func(tx *pgdb.Tx) error {
		var err error
		if tot, err = total(ctx, tx, key); err != nil || index < 0 || index >= tot {
			return err
		}
		rows, err := tx.Query(ctx, "SELECT "+messageCols+" FROM zc_chat_messages WHERE session_key = $1 AND idx = $2", key, index)
		if err != nil {
			return err
		}
		msgs, err = scanMessages(rows)
		return err
	})
	if err != nil {
		return store.Message{}, 0, fmt.Errorf("store: message %s %d: %w", key, index, err)
	}
	if len(msgs) == 0 {
		return store.Message{}, tot, fmt.Errorf("store: message %s %d: %w", key, index, store.ErrNotFound)
	}
	return msgs[0], tot, nil
}

// All returns every message of key, oldest first (none for an unknown session).
func (s *Store) All(ctx context.Context, key string) ([]store.Message, error) {
	if err := s.check("messages", key, false); err != nil {
		return nil, err
	}
	rows, err := s.db.Query(ctx, "SELECT "+messageCols+" FROM zc_chat_messages WHERE session_key = $1 ORDER BY idx", key)
	if err != nil {
		return nil, fmt.Errorf("store: messages %s: %w", key, err)
	}
	msgs, err := scanMessages(rows)
	if err != nil {
		return nil, fmt.Errorf("store: messages %s: %w", key, err)
	}
	if len(msgs) == 0 {
		return nil, nil
	}
	return msgs, nil
}

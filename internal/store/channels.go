package store

import (
	"context"
	"database/sql"
	"fmt"
	"time"
)

// Channel event states (channel_events.state).
const (
	ChanEventReceived = "received" // recorded, its turn not started
	ChanEventRunning  = "running"  // its turn started (a restart answers it with a notice instead of a second turn)
	ChanEventAnswered = "answered" // its replies are in channel_outbox
)

// Channel outbox states (channel_outbox.state).
const (
	ChanOutPending     = "pending"     // to be sent
	ChanOutSending     = "sending"     // handed to the platform; its answer not recorded yet
	ChanOutSent        = "sent"        // the platform took it (platform_message_id)
	ChanOutUnconfirmed = "unconfirmed" // was sending when the process ended and the platform cannot say: not resent
	ChanOutFailed      = "failed"      // given up (permanent error or retries spent)
)

// ChanEvent is one row of channel_events.
type ChanEvent struct {
	ID                                         int64
	ChannelID, PlatformEventID, Kind           string
	Sender, SenderName, ReplyTarget, Thread    string
	MessageID, Content, SessionKey, State, Err string
	ReceivedAt                                 time.Time
}

// ChanOut is one row of channel_outbox.
type ChanOut struct {
	ID, EventID                           int64
	ChannelID                             string
	Seq                                   int
	ReplyTarget, Thread, ReplyTo, Content string
	State                                 string
	Attempts                              int
	PlatformMessageID, Err                string
}

// RecordChannelEvent stores ev (State, when empty, is received) unless the channel already has an event with
// its platform id: then it returns the stored row and dup = true.
func (s *ChatStore) RecordChannelEvent(ctx context.Context, ev ChanEvent, now time.Time) (ChanEvent, bool, error) {
	if err := s.check("channel event", ev.ChannelID, true); err != nil {
		return ChanEvent{}, false, err
	}
	if ev.State == "" {
		ev.State = ChanEventReceived
	}
	var dup bool
	err := s.d.withTx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `INSERT INTO channel_events (channel_id, platform_event_id, kind, sender,
			sender_name, reply_target, thread, message_id, content, session_key, state, error, received_at)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT(channel_id, platform_event_id) DO NOTHING`,
			ev.ChannelID, ev.PlatformEventID, ev.Kind, ev.Sender, ev.SenderName, ev.ReplyTarget, ev.Thread,
			ev.MessageID, ev.Content, ev.SessionKey, ev.State, ev.Err, formatTime(now))
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 1 {
			ev.ID, err = res.LastInsertId()
			ev.ReceivedAt = now.UTC()
			return err
		}
		dup = true
		row := tx.QueryRowContext(ctx, `SELECT `+chanEventCols+` FROM channel_events WHERE channel_id = ? AND platform_event_id = ?`,
			ev.ChannelID, ev.PlatformEventID)
		ev, err = scanChanEvent(row)
		return err
	})
	if err != nil {
		return ChanEvent{}, false, fmt.Errorf("store: record channel event %s/%s: %w", ev.ChannelID, ev.PlatformEventID, err)
	}
	return ev, dup, nil
}

// SetChannelEventState changes an event's state (and its session key and error when not empty).
func (s *ChatStore) SetChannelEventState(ctx context.Context, id int64, state, sessionKey, errText string) error {
	if err := s.check("channel event state", "", false); err != nil {
		return err
	}
	err := s.d.withTx(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `UPDATE channel_events SET state = ?,
			session_key = CASE WHEN ? = '' THEN session_key ELSE ? END, error = ? WHERE id = ?`,
			state, sessionKey, sessionKey, errText, id)
		return err
	})
	if err != nil {
		return fmt.Errorf("store: channel event %d state: %w", id, err)
	}
	return nil
}

// AnswerChannelEvent records outs (state pending) and marks event id answered, in one transaction: a reply is
// queued exactly when its event stops being pending. id 0 queues outs alone (a notice that answers no event).
func (s *ChatStore) AnswerChannelEvent(ctx context.Context, id int64, outs []ChanOut, now time.Time) error {
	if err := s.check("channel answer", "", false); err != nil {
		return err
	}
	err := s.d.withTx(ctx, func(tx *sql.Tx) error {
		if id != 0 {
			res, err := tx.ExecContext(ctx, `UPDATE channel_events SET state = ? WHERE id = ? AND state IN (?, ?)`,
				ChanEventAnswered, id, ChanEventReceived, ChanEventRunning)
			if err != nil {
				return err
			}
			if n, _ := res.RowsAffected(); n != 1 {
				return fmt.Errorf("event %d is not pending: %w", id, ErrNotFound)
			}
		}
		for _, o := range outs {
			if _, err := tx.ExecContext(ctx, `INSERT INTO channel_outbox (channel_id, event_id, seq, reply_target,
				thread, reply_to, content, state, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
				o.ChannelID, id, o.Seq, o.ReplyTarget, o.Thread, o.ReplyTo, o.Content, ChanOutPending,
				formatTime(now), formatTime(now)); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("store: answer channel event %d: %w", id, err)
	}
	return nil
}

// PendingChannelEvents lists a channel's events still received or running, oldest first.
func (s *ChatStore) PendingChannelEvents(ctx context.Context, channelID string) ([]ChanEvent, error) {
	if err := s.check("pending channel events", channelID, true); err != nil {
		return nil, err
	}
	var out []ChanEvent
	err := s.d.readTx(ctx, func(tx *sql.Tx) error {
		rows, err := tx.QueryContext(ctx, `SELECT `+chanEventCols+` FROM channel_events
			WHERE channel_id = ? AND state IN (?, ?) ORDER BY id`, channelID, ChanEventReceived, ChanEventRunning)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			ev, err := scanChanEvent(rows)
			if err != nil {
				return err
			}
			out = append(out, ev)
		}
		return rows.Err()
	})
	if err != nil {
		return nil, fmt.Errorf("store: pending channel events %s: %w", channelID, err)
	}
	return out, nil
}

// ChannelOutbox lists a channel's outbox rows in state (pending, sending...), in send order.
func (s *ChatStore) ChannelOutbox(ctx context.Context, channelID, state string, limit int) ([]ChanOut, error) {
	if err := s.check("channel outbox", channelID, true); err != nil {
		return nil, err
	}
	var out []ChanOut
	err := s.d.readTx(ctx, func(tx *sql.Tx) error {
		rows, err := tx.QueryContext(ctx, `SELECT id, event_id, channel_id, seq, reply_target, thread, reply_to,
			content, state, attempts, platform_message_id, error FROM channel_outbox
			WHERE channel_id = ? AND state = ? ORDER BY id LIMIT ?`, channelID, state, limit)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var o ChanOut
			if err := rows.Scan(&o.ID, &o.EventID, &o.ChannelID, &o.Seq, &o.ReplyTarget, &o.Thread, &o.ReplyTo,
				&o.Content, &o.State, &o.Attempts, &o.PlatformMessageID, &o.Err); err != nil {
				return err
			}
			out = append(out, o)
		}
		return rows.Err()
	})
	if err != nil {
		return nil, fmt.Errorf("store: channel outbox %s: %w", channelID, err)
	}
	return out, nil
}

// SetChannelOut moves outbox row id from state from to state to (with the platform id and error when not
// empty; attempts counted up when bump). It reports false when the row was not in from.
func (s *ChatStore) SetChannelOut(ctx context.Context, id int64, from, to, platformID, errText string, bump bool, now time.Time) (bool, error) {
	if err := s.check("channel outbox state", "", false); err != nil {
		return false, err
	}
	inc := 0
	if bump {
		inc = 1
	}
	var ok bool
	err := s.d.withTx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE channel_outbox SET state = ?, attempts = attempts + ?,
			platform_message_id = CASE WHEN ? = '' THEN platform_message_id ELSE ? END, error = ?, updated_at = ?
			WHERE id = ? AND state = ?`, to, inc, platformID, platformID, errText, formatTime(now), id, from)
		if err != nil {
			return err
		}
		n, _ := res.RowsAffected()
		ok = n == 1
		return nil
	})
	if err != nil {
		return false, fmt.Errorf("store: channel outbox %d: %w", id, err)
	}
	return ok, nil
}

// ChannelCounts counts a channel's events and outbox rows by state ("event:<state>", "out:<state>").
func (s *ChatStore) ChannelCounts(ctx context.Context, channelID string) (map[string]int, error) {
	if err := s.check("channel counts", channelID, true); err != nil {
		return nil, err
	}
	out := map[string]int{}
	err := s.d.readTx(ctx, func(tx *sql.Tx) error {
		for _, q := range [][2]string{{"event:", `SELECT state, COUNT(*) FROM channel_events WHERE channel_id = ? GROUP BY state`},
			{"out:", `SELECT state, COUNT(*) FROM channel_outbox WHERE channel_id = ? GROUP BY state`}} {
			rows, err := tx.QueryContext(ctx, q[1], channelID)
			if err != nil {
				return err
			}
			for rows.Next() {
				var st string
				var n int
				if err := rows.Scan(&st, &n); err != nil {
					rows.Close()
					return err
				}
				out[q[0]+st] = n
			}
			rows.Close()
			if err := rows.Err(); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("store: channel counts %s: %w", channelID, err)
	}
	return out, nil
}

// StampChannelSession records a channel session's routing context in session_metadata (upstream's
// stamp_session_routing_context: the first non-empty value of each column wins).
func (s *ChatStore) StampChannelSession(ctx context.Context, key, channelID, roomID, senderID string, now time.Time) error {
	if err := s.check("stamp channel session", key, true); err != nil {
		return err
	}
	err := s.d.withTx(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `INSERT INTO session_metadata (session_key, created_at, last_activity, message_count)
			VALUES (?, ?, ?, 0) ON CONFLICT(session_key) DO NOTHING`, key, formatTime(now), formatTime(now)); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `UPDATE session_metadata SET channel_id = COALESCE(channel_id, ?),
			room_id = COALESCE(room_id, ?), sender_id = COALESCE(sender_id, ?) WHERE session_key = ?`,
			nullString(channelID), nullString(roomID), nullString(senderID), key)
		return err
	})
	if err != nil {
		return fmt.Errorf("store: stamp channel session %s: %w", key, err)
	}
	return nil
}

const chanEventCols = `id, channel_id, platform_event_id, kind, sender, sender_name, reply_target, thread, message_id,
	content, session_key, state, error, received_at`

func scanChanEvent(r rowScanner) (ChanEvent, error) {
	var ev ChanEvent
	var at string
	if err := r.Scan(&ev.ID, &ev.ChannelID, &ev.PlatformEventID, &ev.Kind, &ev.Sender, &ev.SenderName, &ev.ReplyTarget,
		&ev.Thread, &ev.MessageID, &ev.Content, &ev.SessionKey, &ev.State, &ev.Err, &at); err != nil {
		return ChanEvent{}, err
	}
	t, err := parseTime(at)
	if err != nil {
		return ChanEvent{}, err
	}
	ev.ReceivedAt = t
	return ev, nil
}

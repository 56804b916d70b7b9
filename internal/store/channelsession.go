package store

import (
	"context"
	"database/sql"
	"fmt"
)

// ChannelSession is one channel session as ChannelSessions finds it: its metadata and the room and sender
// StampChannelSession recorded.
type ChannelSession struct {
	Meta         SessionMeta
	Room, Sender string
}

// channelSessions is ChannelSessions's query: channel_id's sessions newest first (a walk of
// idx_session_metadata_channel_activity, migration 0007), those whose key has the prefix or whose room or
// sender is the peer.
const channelSessions = "SELECT " + metaCols + `, room_id, sender_id FROM session_metadata WHERE channel_id = ?
	AND ((session_key >= ? AND session_key < ?) OR room_id = ? OR sender_id = ?)
	ORDER BY julianday(last_activity) DESC, last_activity DESC, session_key LIMIT ?`

// ChannelSessions returns the most recently active sessions of the channel channelID ("<type>.<alias>") with
// peer, newest first, at most limit (1..1000): those whose key starts with keyPrefix ("" for none) or whose
// room or sender is peer. A sanitized key prefix can be shared by two peers' sessions, so the caller checks
// each row's room and sender before it uses one.
func (s *ChatStore) ChannelSessions(ctx context.Context, channelID, peer, keyPrefix string, limit int) ([]ChannelSession, error) {
	if err := s.check("channel sessions", channelID, true); err != nil {
		return nil, err
	}
	if peer == "" {
		return nil, fmt.Errorf("store: channel sessions %s: empty peer: %w", channelID, ErrInvalid)
	}
	limit = min(max(limit, 1), 1000)
	lo, hi := keyPrefix, prefixEnd(keyPrefix)
	if keyPrefix == "" { // no key range: an empty one
		lo, hi = "\x00", "\x00"
	}
	rows, err := s.d.r.QueryContext(ctx, channelSessions, channelID, lo, hi, peer, peer, limit)
	if err != nil {
		return nil, fmt.Errorf("store: channel sessions %s: %w", channelID, err)
	}
	defer rows.Close()
	var out []ChannelSession
	for rows.Next() {
		var c ChannelSession
		var room, sender sql.NullString
		var err error
		c.Meta, err = scanMeta(extraCols{rows, []any{&room, &sender}})
		if err != nil {
			return nil, fmt.Errorf("store: channel sessions %s: %w", channelID, err)
		}
		c.Room, c.Sender = room.String, sender.String
		out = append(out, c)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: channel sessions %s: %w", channelID, err)
	}
	return out, nil
}

// extraCols scans the columns after metaCols into extra.
type extraCols struct {
	r     rowScanner
	extra []any
}

func (e extraCols) Scan(dest ...any) error { return e.r.Scan(append(dest, e.extra...)...) }

// prefixEnd is the least string above every string with prefix p: p with its last byte below 0xff
// incremented and the bytes after it dropped (p all 0xff, which no ASCII session key prefix is: a bound above
// every key).
func prefixEnd(p string) string {
	b := []byte(p)
	for i := len(b) - 1; i >= 0; i-- {
		if b[i] < 0xff {
			b[i]++
			return string(b[:i+1])
		}
	}
	return "\xff"
}

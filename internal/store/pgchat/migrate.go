package pgchat

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/binary"
	"errors"
	"fmt"
	"hash"
	"strings"
	"time"

	"github.com/zeroclaw-go/zeroclaw/internal/pgdb"
	"github.com/zeroclaw-go/zeroclaw/internal/store"
)

// Copying chat sessions between the SQLite store and PostgreSQL (zeroclaw storage migrate). Each session is
// copied in one transaction of the destination, so a copy cut short (a kill, a network cut) leaves whole
// sessions behind and is resumed by running it again: a session the destination already holds with the same
// digest is skipped, one it holds with a different digest is a conflict (ErrConflict), never overwritten. At
// the end every session is verified on both sides: message count and a SHA-256 over its metadata and messages.
// The source is only read. Timestamps are kept to the microsecond (PostgreSQL's precision).

// ErrConflict is a copy's error when the destination holds a different session under a key being copied.
var ErrConflict = errors.New("pgchat: the destination holds a different session under the same key")

// CopyStats is what a copy did.
type CopyStats struct {
	Sessions, Messages int // in the source, all verified in the destination
	Copied, Skipped    int // sessions copied now, and found already copied
}

// sessionRow is a session's metadata with every column, NULL as nil.
type sessionRow struct {
	key                                               string
	created, last                                     time.Time
	name, state, turnID, alias, channel, room, sender *string
	started                                           *time.Time
	interrupted, owner                                *string
}

type msgRow struct {
	role, content string
	created       time.Time
}

// side is one end of a copy.
type side interface {
	keys(ctx context.Context) ([]string, error)
	// read returns the session (ok false when there is none).
	read(ctx context.Context, key string) (s sessionRow, msgs []msgRow, ok bool, err error)
	// write stores a session the side does not hold, in one transaction.
	write(ctx context.Context, s sessionRow, msgs []msgRow) error
}

func micro(t time.Time) time.Time { return t.UTC().Truncate(time.Microsecond) }

// digest is a session's checksum over what a copy must keep.
func digest(s sessionRow, msgs []msgRow) [32]byte {
	h := sha256.New()
	str := func(v string) {
		_ = binary.Write(h, binary.BigEndian, uint64(len(v)))
		h.Write([]byte(v))
	}
	opt := func(v *string) {
		if v == nil {
			h.Write([]byte{0})
			return
		}
		h.Write([]byte{1})
		str(*v)
	}
	tm := func(t time.Time) { _ = binary.Write(h, binary.BigEndian, micro(t).UnixMicro()) }
	str(s.key)
	tm(s.created)
	tm(s.last)
	for _, v := range []*string{s.name, s.state, s.turnID, s.alias, s.channel, s.room, s.sender, s.interrupted, s.owner} {
		opt(v)
	}
	if s.started != nil {
		h.Write([]byte{1})
		tm(*s.started)
	} else {
		h.Write([]byte{0})
	}
	writeMsgs(h, msgs, str, tm)
	var out [32]byte
	h.Sum(out[:0])
	return out
}

func writeMsgs(h hash.Hash, msgs []msgRow, str func(string), tm func(time.Time)) {
	_ = binary.Write(h, binary.BigEndian, uint64(len(msgs)))
	for _, m := range msgs {
		str(m.role)
		str(m.content)
		tm(m.created)
	}
}

// copySessions copies every session of src missing from dst, then verifies them all.
func copySessions(ctx context.Context, src, dst side, progress func(done, total int)) (CopyStats, error) {
	var st CopyStats
	keys, err := src.keys(ctx)
	if err != nil {
		return st, fmt.Errorf("pgchat: copy: list the source's sessions: %w", err)
	}
	for i, key := range keys {
		s, msgs, ok, err := src.read(ctx, key)
		if err != nil {
			return st, fmt.Errorf("pgchat: copy: read session %q: %w", key, err)
		}
		if !ok {
			continue
		}
		want := digest(s, msgs)
		d, dmsgs, have, err := dst.read(ctx, key)
		if err != nil {
			return st, fmt.Errorf("pgchat: copy: read session %q in the destination: %w", key, err)
		}
		switch {
		case have && digest(d, dmsgs) == want:
			st.Skipped++
		case have:
			return st, fmt.Errorf("%w: session %q (%d messages there, %d here): remove it there or copy into an empty database", ErrConflict, key, len(dmsgs), len(msgs))
		default:
			if err := dst.write(ctx, s, msgs); err != nil {
				return st, fmt.Errorf("pgchat: copy: write session %q: %w", key, err)
			}
			st.Copied++
		}
		if progress != nil {
			progress(i+1, len(keys))
		}
	}
	// Verification: every source session is in the destination with its count and digest.
	for _, key := range keys {
		s, msgs, ok, err := src.read(ctx, key)
		if err != nil || !ok {
			return st, fmt.Errorf("pgchat: verify: read session %q: %v", key, err)
		}
		d, dmsgs, have, err := dst.read(ctx, key)
		if err != nil {
			return st, fmt.Errorf("pgchat: verify: read session %q in the destination: %w", key, err)
		}
		if !have || len(dmsgs) != len(msgs) || digest(d, dmsgs) != digest(s, msgs) {
			return st, fmt.Errorf("pgchat: verify: session %q differs in the destination (%d messages there, %d here)", key, len(dmsgs), len(msgs))
		}
		st.Sessions++
		st.Messages += len(msgs)
	}
	return st, nil
}

// CopyToPostgres copies the chat sessions of the SQLite store src into dst (see the comment above).
func CopyToPostgres(ctx context.Context, src *store.ChatStore, dst *Store, progress func(done, total int)) (CopyStats, error) {
	return copySessions(ctx, sqliteSide{src.Seam()}, pgSide{dst}, progress)
}

// CopyToSQLite copies the chat sessions of src into the SQLite store dst.
func CopyToSQLite(ctx context.Context, src *Store, dst *store.ChatStore, progress func(done, total int)) (CopyStats, error) {
	return copySessions(ctx, pgSide{src}, sqliteSide{dst.Seam()}, progress)
}

// normalize makes the two stores' spellings of "no value" (NULL or ”) one, so digests compare what both keep.
// An interrupted turn's id is left alone: there NULL (none) and ” (a turn without an id) differ.
func normalize(s *sessionRow) {
	for _, p := range []**string{&s.name, &s.state, &s.turnID, &s.alias, &s.channel, &s.room, &s.sender, &s.owner} {
		if *p != nil && **p == "" {
			*p = nil
		}
	}
	if s.state == nil { // both read a missing state as idle
		idle := "idle"
		s.state = &idle
	}
}

// --- PostgreSQL ---

type pgSide struct{ s *Store }

func (p pgSide) keys(ctx context.Context) ([]string, error) {
	rows, err := p.s.db.Query(ctx, "SELECT session_key FROM zc_chat_sessions ORDER BY session_key")
	if err != nil {
		return nil, err
	}
	out := make([]string, len(rows))
	for i, r := range rows {
		out[i] = r.String(0)
	}
	return out, nil
}

func optText(r pgdb.Row, i int) *string {
	if r.Null(i) {
		return nil
	}
	v := r.String(i)
	return &v
}

func (p pgSide) read(ctx context.Context, key string) (sessionRow, []msgRow, bool, error) {
	var (
		s    sessionRow
		msgs []msgRow
		ok   bool
	)
	err := p.s.db.InTx(ctx, func(tx *pgdb.Tx) error {
		if _, err := tx.Exec(ctx, "SET TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY"); err != nil {
			return err
		}
		rows, err := tx.Query(ctx, `SELECT session_key, created_at, last_activity, name, state, turn_id, agent_alias, channel_id,
room_id, sender_id, turn_started_at, interrupted_turn_id, owner FROM zc_chat_sessions WHERE session_key = $1`, key)
		if err != nil || len(rows) == 0 {
			return err
		}
		r := rows[0]
		ok = true
		s.key = r.String(0)
		if s.created, err = r.Time(1); err != nil {
			return err
		}
		if s.last, err = r.Time(2); err != nil {
			return err
		}
		s.name, s.state, s.turnID, s.alias = optText(r, 3), optText(r, 4), optText(r, 5), optText(r, 6)
		s.channel, s.room, s.sender = optText(r, 7), optText(r, 8), optText(r, 9)
		if !r.Null(10) {
			t, err := r.Time(10)
			if err != nil {
				return err
			}
			s.started = &t
		}
		s.interrupted, s.owner = optText(r, 11), optText(r, 12)
		normalize(&s)
		rows, err = tx.Query(ctx, "SELECT "+messageCols+" FROM zc_chat_messages WHERE session_key = $1 ORDER BY idx", key)
		if err != nil {
			return err
		}
		ms, err := scanMessages(rows)
		for _, m := range ms {
			msgs = append(msgs, msgRow{role: m.Role, content: m.Content, created: m.CreatedAt})
		}
		return err
	})
	return s, msgs, ok, err
}

func ptr(v *string) any {
	if v == nil {
		return nil
	}
	return *v
}

func ptime(t *time.Time) any {
	if t == nil {
		return nil
	}
	return micro(*t)
}

// copyBatch is how many messages one INSERT of a copy carries.
const copyBatch = 100

func (p pgSide) write(ctx context.Context, s sessionRow, msgs []msgRow) error {
	if err := p.s.check("copy", s.key, true); err != nil {
		return err
	}
	for _, m := range msgs {
		if err := p.s.check("copy", s.key, true, m.role); err != nil {
			return err
		}
	}
	return p.s.db.InTx(ctx, func(tx *pgdb.Tx) error {
		n, err := tx.Exec(ctx, `INSERT INTO zc_chat_sessions (session_key, created_at, last_activity, message_count, name, state,
turn_id, agent_alias, channel_id, room_id, sender_id, turn_started_at, interrupted_turn_id, owner)
VALUES ($1, $2, $3, $4, $5, COALESCE($6, 'idle'), $7, $8, $9, $10, $11, $12, $13, $14) ON CONFLICT (session_key) DO NOTHING`,
			s.key, micro(s.created), micro(s.last), len(msgs), ptr(s.name), ptr(s.state), ptr(s.turnID), ptr(s.alias),
			ptr(s.channel), ptr(s.room), ptr(s.sender), ptime(s.started), ptr(s.interrupted), ptr(s.owner))
		if err != nil {
			return err
		}
		if n == 0 {
			return fmt.Errorf("%w: session %q appeared meanwhile", ErrConflict, s.key)
		}
		for start := 0; start < len(msgs); start += copyBatch {
			batch := msgs[start:min(start+copyBatch, len(msgs))]
			var b strings.Builder
			b.WriteString("INSERT INTO zc_chat_messages (session_key, idx, role, content, created_at, search) VALUES ")
			args := make([]any, 0, 6*len(batch))
			for i, m := range batch {
				if i > 0 {
					b.WriteString(", ")
				}
				k := len(args)
				fmt.Fprintf(&b, "($%d, $%d, $%d, $%d, $%d, $%d::tsvector)", k+1, k+2, k+3, k+4, k+5, k+6)
				args = append(args, s.key, start+i, m.role, []byte(m.content), micro(m.created), tsvector(m.content))
			}
			if _, err := tx.Exec(ctx, b.String(), args...); err != nil {
				return err
			}
		}
		return nil
	})
}

// --- SQLite ---

type sqliteSide struct{ sm store.Seam }

func (q sqliteSide) keys(ctx context.Context) ([]string, error) {
	if err := q.sm.Check("copy", "", false); err != nil {
		return nil, err
	}
	// Messages without a metadata row (an upstream orphan) are a session too.
	rows, err := q.sm.Reader().QueryContext(ctx, `SELECT session_key FROM session_metadata
UNION SELECT DISTINCT session_key FROM sessions ORDER BY 1`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var k string
		if err := rows.Scan(&k); err != nil {
			return nil, err
		}
		out = append(out, k)
	}
	return out, rows.Err()
}

func nullPtr(v sql.NullString) *string {
	if !v.Valid {
		return nil
	}
	return &v.String
}

func (q sqliteSide) read(ctx context.Context, key string) (sessionRow, []msgRow, bool, error) {
	var (
		s    sessionRow
		msgs []msgRow
		ok   bool
	)
	tx, err := q.sm.Reader().BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return s, nil, false, err
	}
	defer tx.Rollback()
	rows, err := tx.QueryContext(ctx, "SELECT role, content, created_at FROM sessions WHERE session_key = ? ORDER BY id", key)
	if err != nil {
		return s, nil, false, err
	}
	for rows.Next() {
		var m msgRow
		var created string
		if err := rows.Scan(&m.role, &m.content, &created); err != nil {
			rows.Close()
			return s, nil, false, err
		}
		if m.created, err = store.ParseTime(created); err != nil {
			rows.Close()
			return s, nil, false, fmt.Errorf("message %d created_at: %w", len(msgs), err)
		}
		m.created = micro(m.created)
		msgs = append(msgs, m)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return s, nil, false, err
	}
	var (
		created, last                                            sql.NullString
		name, state, turnID, alias, channel, room, sender, start sql.NullString
		interrupted, owner                                       sql.NullString
	)
	err = tx.QueryRowContext(ctx, `SELECT created_at, last_activity, name, state, turn_id, agent_alias, channel_id, room_id,
sender_id, turn_started_at, interrupted_turn_id, (SELECT principal FROM session_owners o WHERE o.session_key = m.session_key)
FROM session_metadata m WHERE session_key = ?`, key).Scan(&created, &last, &name, &state, &turnID, &alias, &channel, &room,
		&sender, &start, &interrupted, &owner)
	switch {
	case errors.Is(err, sql.ErrNoRows) && len(msgs) == 0:
		return s, nil, false, nil
	case errors.Is(err, sql.ErrNoRows):
		// An orphan's times are its messages'.
		s.key, s.created, s.last, ok = key, msgs[0].created, msgs[len(msgs)-1].created, true
		normalize(&s)
		return s, msgs, ok, nil
	case err != nil:
		return s, nil, false, err
	}
	s.key, ok = key, true
	if s.created, err = store.ParseTime(created.String); err != nil {
		return s, nil, false, fmt.Errorf("created_at: %w", err)
	}
	if s.last, err = store.ParseTime(last.String); err != nil {
		return s, nil, false, fmt.Errorf("last_activity: %w", err)
	}
	s.created, s.last = micro(s.created), micro(s.last)
	s.name, s.state, s.turnID, s.alias = nullPtr(name), nullPtr(state), nullPtr(turnID), nullPtr(alias)
	s.channel, s.room, s.sender = nullPtr(channel), nullPtr(room), nullPtr(sender)
	if start.Valid && start.String != "" {
		t, err := store.ParseTime(start.String)
		if err != nil {
			return s, nil, false, fmt.Errorf("turn_started_at: %w", err)
		}
		t = micro(t)
		s.started = &t
	}
	s.interrupted, s.owner = nullPtr(interrupted), nullPtr(owner)
	normalize(&s)
	return s, msgs, ok, nil
}

func sqlNull(v *string) sql.NullString {
	if v == nil {
		return sql.NullString{}
	}
	return sql.NullString{String: *v, Valid: true}
}

func (q sqliteSide) write(ctx context.Context, s sessionRow, msgs []msgRow) error {
	if err := q.sm.Check("copy", s.key, true); err != nil {
		return err
	}
	return q.sm.ImportTx(ctx, s.key, func(tx *sql.Tx) error {
		var n int
		if err := tx.QueryRowContext(ctx, `SELECT (SELECT COUNT(*) FROM session_metadata WHERE session_key = ?)
+ (SELECT COUNT(*) FROM sessions WHERE session_key = ?)`, s.key, s.key).Scan(&n); err != nil {
			return err
		}
		if n > 0 {
			return fmt.Errorf("%w: session %q appeared meanwhile", ErrConflict, s.key)
		}
		state := "idle"
		if s.state != nil {
			state = *s.state
		}
		var started sql.NullString
		if s.started != nil {
			started = sql.NullString{String: store.FormatTime(*s.started), Valid: true}
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO session_metadata (session_key, created_at, last_activity, message_count,
name, state, turn_id, agent_alias, channel_id, room_id, sender_id, turn_started_at, interrupted_turn_id)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, s.key, store.FormatTime(s.created), store.FormatTime(s.last), len(msgs),
			sqlNull(s.name), state, sqlNull(s.turnID), sqlNull(s.alias), sqlNull(s.channel), sqlNull(s.room), sqlNull(s.sender),
			started, sqlNull(s.interrupted)); err != nil {
			return err
		}
		if s.owner != nil {
			if _, err := tx.ExecContext(ctx, "INSERT INTO session_owners (session_key, principal) VALUES (?, ?)", s.key, *s.owner); err != nil {
				return err
			}
		}
		for _, m := range msgs {
			if _, err := tx.ExecContext(ctx, "INSERT INTO sessions (session_key, role, content, created_at) VALUES (?, ?, ?, ?)",
				s.key, m.role, m.content, store.FormatTime(m.created)); err != nil {
				return err
			}
		}
		return nil
	})
}

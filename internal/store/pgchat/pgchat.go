// Package pgchat is the chat-session store (store.Chat) on PostgreSQL, for installs where several daemons share
// one database: the same sessions, messages, paging, byte caps and search as the SQLite store, with a running
// turn owned by one daemon at a time (a lease row with a fencing token, package lease) and every append
// announced to the other daemons through LISTEN/NOTIFY (Listen).
package pgchat

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/zeroclaw-go/zeroclaw/internal/lease"
	"github.com/zeroclaw-go/zeroclaw/internal/pgdb"
	"github.com/zeroclaw-go/zeroclaw/internal/store"
)

// migrations is the chat schema (component "chat"). Message content is bytea: a message is stored byte for
// byte as on SQLite (text would refuse NUL and invalid UTF-8); its search entry is computed in Go (fts.go).
var migrations = []pgdb.Migration{{Version: 1, Name: "chat sessions, messages and their search index", SQL: `
CREATE TABLE zc_chat_sessions (
    session_key         TEXT PRIMARY KEY,
    created_at          TIMESTAMPTZ NOT NULL,
    last_activity       TIMESTAMPTZ NOT NULL,
    message_count       BIGINT NOT NULL DEFAULT 0,
    name                TEXT,
    state               TEXT NOT NULL DEFAULT 'idle',
    turn_id             TEXT,
    turn_started_at     TIMESTAMPTZ,
    agent_alias         TEXT,
    channel_id          TEXT,
    room_id             TEXT,
    sender_id           TEXT,
    interrupted_turn_id TEXT,
    owner               TEXT,
    turn_lease          TEXT -- the lease (zc_leases.name) of the running turn; see InterruptRunning
);
CREATE INDEX zc_chat_sessions_activity ON zc_chat_sessions (last_activity DESC, session_key);
CREATE INDEX zc_chat_sessions_agent ON zc_chat_sessions (agent_alias);
CREATE INDEX zc_chat_sessions_running ON zc_chat_sessions (session_key) WHERE state = 'running';
CREATE TABLE zc_chat_messages (
    session_key TEXT NOT NULL,
    idx         BIGINT NOT NULL,
    role        TEXT NOT NULL,
    content     BYTEA NOT NULL,
    created_at  TIMESTAMPTZ NOT NULL,
    search      TSVECTOR NOT NULL,
    PRIMARY KEY (session_key, idx)
);
CREATE INDEX zc_chat_messages_search ON zc_chat_messages USING GIN (search);`}}

// Options tunes Open.
type Options struct {
	// Holder is this daemon's id among those sharing the database (lease.NewHolderID when "").
	Holder string
	// TurnTTL is how long a running turn's lease lasts without renewal: a daemon that dies mid-turn keeps the
	// session busy for at most this long. The owner renews it every TurnTTL/3 while the turn runs. 0: 30s.
	TurnTTL time.Duration
}

// MaxKeyBytes is the longest session key the PostgreSQL store takes (a B-tree key must fit a third of a page).
const MaxKeyBytes = 2048

// DefaultTurnTTL is Options.TurnTTL's default.
const DefaultTurnTTL = 30 * time.Second

// Store is store.Chat on a PostgreSQL pool (the pool is the caller's; Close leaves it open). It is safe for
// concurrent use.
type Store struct {
	db     *pgdb.Pool
	leases *lease.Store
	ttl    time.Duration

	mu     sync.Mutex
	closed bool
	turns  map[string]*turn // the running turns this daemon owns, by session key
	bg     context.Context  // renewals; cancelled by Close
	stop   context.CancelFunc
	wg     sync.WaitGroup
}

var _ store.Chat = (*Store)(nil)

// Open brings the chat and lease schemas up to date (under the migration lock) and returns the store.
func Open(ctx context.Context, db *pgdb.Pool, o Options) (*Store, error) {
	if o.Holder == "" {
		o.Holder = lease.NewHolderID()
	}
	if o.TurnTTL <= 0 {
		o.TurnTTL = DefaultTurnTTL
	}
	if o.TurnTTL < 30*time.Millisecond {
		return nil, fmt.Errorf("pgchat: turn ttl %v is too short (at least 30ms)", o.TurnTTL)
	}
	ls, err := lease.Open(ctx, db, o.Holder)
	if err != nil {
		return nil, err
	}
	if _, err := pgdb.Migrate(ctx, db, "chat", migrations); err != nil {
		return nil, err
	}
	bg, stop := context.WithCancel(context.Background())
	return &Store{db: db, leases: ls, ttl: o.TurnTTL, turns: map[string]*turn{}, bg: bg, stop: stop}, nil
}

// Holder is this store's daemon id.
func (s *Store) Holder() string { return s.leases.Holder() }

// Close makes later calls fail with store.ErrClosed, stops renewing the leases of the turns still running and
// gives them up (best effort: if the database does not answer they lapse after the TTL, as a dead daemon's
// would), so another daemon's recovery can mark those turns interrupted at once. It is idempotent.
func (s *Store) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	s.stop()
	held := make([]*turn, 0, len(s.turns))
	for _, t := range s.turns {
		held = append(held, t)
	}
	clear(s.turns)
	s.mu.Unlock()
	s.wg.Wait()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for _, t := range held {
		_ = s.leases.Release(ctx, t.l)
	}
	return nil
}

// check refuses calls after Close, an empty key where one is needed, and text PostgreSQL cannot store.
func (s *Store) check(op, key string, needKey bool, texts ...string) error {
	s.mu.Lock()
	closed := s.closed
	s.mu.Unlock()
	if closed {
		return fmt.Errorf("store: %s %s: %w", op, key, store.ErrClosed)
	}
	if needKey && key == "" {
		return fmt.Errorf("store: %s: empty session key: %w", op, store.ErrInvalid)
	}
	if len(key) > MaxKeyBytes {
		return fmt.Errorf("store: %s: a session key of %d bytes (at most %d): %w", op, len(key), MaxKeyBytes, store.ErrInvalid)
	}
	for _, v := range append(texts, key) {
		if !utf8.ValidString(v) || strings.IndexByte(v, 0) >= 0 {
			return fmt.Errorf("store: %s: a key, role, alias or id that is not UTF-8 text without NUL: %w", op, store.ErrInvalid)
		}
	}
	return nil
}

func null(v string) any {
	if v == "" {
		return nil
	}
	return v
}

// metaCols are the columns scanMeta reads, in its order.
const metaCols = `session_key, created_at, last_activity, message_count, name, state, turn_id, turn_started_at,
	agent_alias, interrupted_turn_id, channel_id, owner`

func scanMeta(r pgdb.Row) (store.SessionMeta, error) {
	var m store.SessionMeta
	var err error
	m.Key = r.String(0)
	if m.CreatedAt, err = r.Time(1); err != nil {
		return m, err
	}
	if m.LastActivity, err = r.Time(2); err != nil {
		return m, err
	}
	n, err := r.Int64(3)
	if err != nil {
		return m, err
	}
	m.MessageCount = int(n)
	m.Name, m.State, m.TurnID = r.String(4), r.String(5), r.String(6)
	if !r.Null(7) {
		t, err := r.Time(7)
		if err != nil {
			return m, err
		}
		m.TurnStartedAt = &t
	}
	m.AgentAlias = r.String(8)
	m.Interrupted, m.InterruptedTurnID = !r.Null(9), r.String(9)
	m.ChannelID, m.Owner = r.String(10), r.String(11)
	if m.State == "" {
		m.State = "idle"
	}
	return m, nil
}

func scanMetas(rows []pgdb.Row) ([]store.SessionMeta, error) {
	var out []store.SessionMeta
	for _, r := range rows {
		m, err := scanMeta(r)
		if err != nil {
			return nil, err
		}
		out = append(out, m)
	}
	return out, nil
}

// ensureSQL is EnsureSession's upsert: a new row, or the existing one with its agent adopted when it names none
// and its owner recorded when it has none. inserted (xmax = 0) tells the two apart.
const ensureSQL = `INSERT INTO zc_chat_sessions AS s (session_key, created_at, last_activity, message_count, agent_alias, owner)
VALUES ($1, $2, $2, 0, $3, $4)
ON CONFLICT (session_key) DO UPDATE SET
    agent_alias = CASE WHEN COALESCE(s.agent_alias, '') = '' AND EXCLUDED.agent_alias IS NOT NULL THEN EXCLUDED.agent_alias ELSE s.agent_alias END,
    owner = COALESCE(NULLIF(s.owner, ''), EXCLUDED.owner)
RETURNING (xmax = 0), ` + metaCols

func ensureTx(ctx context.Context, r pgdb.Runner, key, agentAlias, owner string, now time.Time) (store.SessionMeta, bool, error) {
	rows, err := r.Query(ctx, ensureSQL, key, now, null(agentAlias), null(owner))
	if err != nil {
		return store.SessionMeta{}, false, err
	}
	m, err := scanMeta(rows[0][1:])
	return m, !rows[0].Bool(0), err
}

// EnsureSession inserts key's row if it is missing and returns the metadata and whether the row existed; an
// existing row only gains an agent or an owner it lacks (store.ChatStore.EnsureSession).
func (s *Store) EnsureSession(ctx context.Context, key, agentAlias, owner string, now time.Time) (store.SessionMeta, bool, error) {
	if err := s.check("ensure session", key, true, agentAlias, owner); err != nil {
		return store.SessionMeta{}, false, err
	}
	m, existed, err := ensureTx(ctx, s.db, key, agentAlias, owner, now)
	if err != nil {
		return store.SessionMeta{}, false, fmt.Errorf("store: ensure session %s: %w", key, err)
	}
	return m, existed, nil
}

// appendTx stores one message of key in tx and returns its index: the session row (created if missing) is
// locked by the update of its count, so concurrent appends of any daemon get distinct, contiguous indices.
func appendTx(ctx context.Context, tx *pgdb.Tx, origin, key, role, content string, now time.Time) (int, error) {
	rows, err := tx.Query(ctx, `INSERT INTO zc_chat_sessions AS s (session_key, created_at, last_activity, message_count)
VALUES ($1, $2, $2, 1)
ON CONFLICT (session_key) DO UPDATE SET last_activity = EXCLUDED.last_activity, message_count = s.message_count + 1
RETURNING message_count - 1`, key, now)
	if err != nil {
		return 0, err
	}
	idx, err := rows[0].Int64(0)
	if err != nil {
		return 0, err
	}
	if _, err := tx.Exec(ctx, `INSERT INTO zc_chat_messages (session_key, idx, role, content, created_at, search)
VALUES ($1, $2, $3, $4, $5, $6::tsvector)`, key, idx, role, []byte(content), now, tsvector(content)); err != nil {
		return 0, err
	}
	if err := notifyTx(ctx, tx, origin, key, int(idx)); err != nil {
		return 0, err
	}
	return int(idx), nil
}

// Append stores one message and bumps the session's count and activity (the row created if missing) in one
// transaction, and returns the message's index. If this daemon owns a running turn of key, the write is
// fenced by that turn's lease.
func (s *Store) Append(ctx context.Context, key, role, content string, now time.Time) (int, error) {
	if err := s.check("append", key, true, role); err != nil {
		return 0, err
	}
	if role == "" {
		return 0, fmt.Errorf("store: append %s: empty role: %w", key, store.ErrInvalid)
	}
	var idx int
	err := s.db.InTx(ctx, func(tx *pgdb.Tx) error {
		if err := s.fence(ctx, tx, key); err != nil {
			return err
		}
		var err error
		idx, err = appendTx(ctx, tx, s.Holder(), key, role, content, now)
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("store: append %s: %w", key, err)
	}
	return idx, nil
}

const setStateSQL = `UPDATE zc_chat_sessions SET state = $1, turn_id = $2, turn_started_at = $3, interrupted_turn_id = NULL,
    turn_lease = NULL WHERE session_key = $4`

// SetState records the session's turn state (store.ChatStore.SetState); an unknown session is ErrNotFound. A
// state other than running ends the turn this daemon owned on key, if any.
func (s *Store) SetState(ctx context.Context, key, state, turnID string, startedAt *time.Time) error {
	if err := s.check("set state", key, true, state, turnID); err != nil {
		return err
	}
	if state == "" {
		return fmt.Errorf("store: set state %s: empty state: %w", key, store.ErrInvalid)
	}
	var started any
	if startedAt != nil {
		started = *startedAt
	}
	var n int64
	var err error
	if state == "running" {
		// A running session is owned like a turn BeginTurn starts.
		_, err = s.runningTx(ctx, key, func(tx *pgdb.Tx, _ lease.Lease) (int, error) {
			var err error
			n, err = tx.Exec(ctx, setStateSQL, state, null(turnID), started, key)
			if err == nil && n == 0 {
				err = store.ErrNotFound
			}
			return 0, err
		})
	} else {
		err = s.db.InTx(ctx, func(tx *pgdb.Tx) error {
			if err := s.fence(ctx, tx, key); err != nil {
				return err
			}
			var err error
			n, err = tx.Exec(ctx, setStateSQL, state, null(turnID), started, key)
			return err
		})
	}
	if errors.Is(err, store.ErrNotFound) {
		return fmt.Errorf("store: set state %s: %w", key, store.ErrNotFound)
	}
	if err != nil {
		return fmt.Errorf("store: set state %s: %w", key, err)
	}
	if state != "running" {
		s.endTurn(key)
	}
	if n == 0 {
		return fmt.Errorf("store: set state %s: %w", key, store.ErrNotFound)
	}
	return nil
}

// Delete removes the session's messages and row in one transaction; an unknown session is not an error.
func (s *Store) Delete(ctx context.Context, key string) error {
	if err := s.check("delete", key, true); err != nil {
		return err
	}
	err := s.db.InTx(ctx, func(tx *pgdb.Tx) error {
		if _, err := tx.Exec(ctx, "DELETE FROM zc_chat_messages WHERE session_key = $1", key); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, "DELETE FROM zc_chat_sessions WHERE session_key = $1", key)
		return err
	})
	if err != nil {
		return fmt.Errorf("store: delete %s: %w", key, err)
	}
	return nil
}

// CountByAgent returns how many sessions each agent alias is attributed.
func (s *Store) CountByAgent(ctx context.Context) (map[string]int, error) {
	if err := s.check("count by agent", "", false); err != nil {
		return nil, err
	}
	rows, err := s.db.Query(ctx, `SELECT agent_alias, count(*) FROM zc_chat_sessions
WHERE agent_alias IS NOT NULL AND agent_alias <> '' GROUP BY agent_alias`)
	if err != nil {
		return nil, fmt.Errorf("store: count by agent: %w", err)
	}
	out := map[string]int{}
	for _, r := range rows {
		n, err := r.Int64(1)
		if err != nil {
			return nil, fmt.Errorf("store: count by agent: %w", err)
		}
		out[r.String(0)] = int(n)
	}
	return out, nil
}

// RenameAgent attributes every session of agent from to agent to and returns how many moved.
func (s *Store) RenameAgent(ctx context.Context, from, to string) (int, error) {
	if err := s.check("rename agent", from, true, to); err != nil {
		return 0, err
	}
	n, err := s.db.Exec(ctx, "UPDATE zc_chat_sessions SET agent_alias = $1 WHERE agent_alias = $2", to, from)
	if err != nil {
		return 0, fmt.Errorf("store: rename agent %s: %w", from, err)
	}
	return int(n), nil
}

// Meta returns the metadata of session key, or an error wrapping store.ErrNotFound.
func (s *Store) Meta(ctx context.Context, key string) (store.SessionMeta, error) {
	if err := s.check("meta", key, false); err != nil {
		return store.SessionMeta{}, err
	}
	rows, err := s.db.Query(ctx, "SELECT "+metaCols+" FROM zc_chat_sessions WHERE session_key = $1", key)
	if err != nil {
		return store.SessionMeta{}, fmt.Errorf("store: meta %s: %w", key, err)
	}
	if len(rows) == 0 {
		return store.SessionMeta{}, fmt.Errorf("store: meta %s: %w", key, store.ErrNotFound)
	}
	m, err := scanMeta(rows[0])
	if err != nil {
		return store.SessionMeta{}, fmt.Errorf("store: meta %s: %w", key, err)
	}
	return m, nil
}

// Resolve returns the first of the sessions keyed id, rpc_<id> and gw_<id> that exists (store.ChatStore.Resolve).
func (s *Store) Resolve(ctx context.Context, id string) (store.SessionMeta, error) {
	if err := s.check("resolve", id, false); err != nil {
		return store.SessionMeta{}, err
	}
	if id == "" {
		return store.SessionMeta{}, fmt.Errorf("store: resolve %q: %w", id, store.ErrNotFound)
	}
	rpc, gw := store.RPCKey(id), store.GatewayKeyPrefix+id
	rows, err := s.db.Query(ctx, "SELECT "+metaCols+` FROM zc_chat_sessions WHERE session_key IN ($1, $2, $3)
ORDER BY CASE session_key WHEN $1 THEN 0 WHEN $2 THEN 1 ELSE 2 END LIMIT 1`, id, rpc, gw)
	if err != nil {
		return store.SessionMeta{}, fmt.Errorf("store: resolve %s: %w", id, err)
	}
	if len(rows) == 0 {
		return store.SessionMeta{}, fmt.Errorf("store: resolve %s: %w", id, store.ErrNotFound)
	}
	m, err := scanMeta(rows[0])
	if err != nil {
		return store.SessionMeta{}, fmt.Errorf("store: resolve %s: %w", id, err)
	}
	return m, nil
}

// List returns session metadata, most recent activity first, at most limit rows (limit <= 0: all); a query
// that is not blank keeps the sessions with a message holding all its words (store.ChatStore.List).
func (s *Store) List(ctx context.Context, query string, limit int) ([]store.SessionMeta, error) {
	return s.list(ctx, query, limit, "")
}

// ListAttributed is List without the sessions that name neither an agent nor a channel.
func (s *Store) ListAttributed(ctx context.Context, query string, limit int) ([]store.SessionMeta, error) {
	return s.list(ctx, query, limit, ` AND (COALESCE(agent_alias, '') <> '' OR COALESCE(channel_id, '') <> '')`)
}

func (s *Store) list(ctx context.Context, query string, limit int, filter string) ([]store.SessionMeta, error) {
	if err := s.check("list", "", false); err != nil {
		return nil, err
	}
	var lim any
	if limit > 0 {
		lim = limit
	}
	const order = " ORDER BY last_activity DESC, session_key LIMIT $1::bigint"
	var (
		rows []pgdb.Row
		err  error
	)
	if strings.TrimSpace(query) == "" {
		rows, err = s.db.Query(ctx, "SELECT "+metaCols+" FROM zc_chat_sessions WHERE true"+filter+order, lim)
	} else {
		q := tsquery(query)
		if q == "" {
			return nil, nil
		}
		rows, err = s.db.Query(ctx, "SELECT "+metaCols+` FROM zc_chat_sessions
WHERE session_key IN (SELECT session_key FROM zc_chat_messages WHERE search @@ $2::tsquery)`+filter+order, lim, q)
	}
	if err != nil {
		return nil, fmt.Errorf("store: list: %w", err)
	}
	out, err := scanMetas(rows)
	if err != nil {
		return nil, fmt.Errorf("store: list: %w", err)
	}
	return out, nil
}

// decodeBytea reads bytea in PostgreSQL's hex output form.
func decodeBytea(v []byte) (string, error) {
	if len(v) < 2 || v[0] != '\\' || v[1] != 'x' {
		return "", errors.New("pgchat: bytea not in hex form")
	}
	b := make([]byte, hex.DecodedLen(len(v)-2))
	if _, err := hex.Decode(b, v[2:]); err != nil {
		return "", fmt.Errorf("pgchat: bytea: %w", err)
	}
	return string(b), nil
}

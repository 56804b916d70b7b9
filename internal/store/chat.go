package store

import (
	"context"
	"database/sql"
	"fmt"
	"sync"
	"time"

	"github.com/zeroclaw-go/zeroclaw/internal/groupcommit"
)

// ChatStore is the chat-session database (data/sessions/sessions.db, state.md §4). It is safe for concurrent
// use; writes are serialized on one connection, reads run concurrently on a snapshot. Append, BeginTurn and EndTurn
// of concurrent callers are group-committed (package groupcommit): what is queued while a transaction runs is
// stored by the next one, each call in a savepoint of its own, so one failing call fails alone.
type ChatStore struct {
	d     *db
	group *groupcommit.Committer

	// mu guards closed. In-flight calls racing Close fail with database/sql's "database is closed".
	mu     sync.Mutex
	closed bool

	counts rowCounts
	batch  batchCounts // used only by the goroutine leading a batch of group, which holds counts.mu

	imports pendingImports // the session keys a background JSONL import still fences (jsonl.Import, through Seam.Fence)
}

// Message is one stored chat message. Index is its zero-based position within its session.
type Message struct {
	Index     int
	Role      string
	Content   string
	CreatedAt time.Time
}

// SessionMeta is a session's metadata row. Empty strings stand for NULL columns.
type SessionMeta struct {
	Key           string
	CreatedAt     time.Time
	LastActivity  time.Time
	MessageCount  int
	Name          string
	State         string
	TurnID        string
	AgentAlias    string
	ChannelID     string // the channel a channel-originated session came from (upstream's channel_id)
	TurnStartedAt *time.Time
	// Interrupted is set when the session's last turn was still running when a previous daemon process ended
	// (InterruptRunning); InterruptedTurnID is that turn's id ("" if it had none). The next SetState clears both.
	Interrupted       bool
	InterruptedTurnID string
	// Owner is the principal that owns the session (table session_owners, ours); "" when none is recorded.
	Owner string
}

// metadataColumns are the session_metadata columns added over time upstream; an older install's table may
// lack some of them.
var metadataColumns = [][2]string{
	{"name", "TEXT"},
	{"state", "TEXT NOT NULL DEFAULT 'idle'"},
	{"turn_id", "TEXT"},
	{"turn_started_at", "TEXT"},
	{"agent_alias", "TEXT"},
	{"channel_id", "TEXT"},
	{"room_id", "TEXT"},
	{"sender_id", "TEXT"},
}

// ourMetadataColumns are session_metadata columns of ours (not upstream's). interrupted_turn_id is NULL, or the
// id ("" if none) of a turn that a previous process left running.
var ourMetadataColumns = [][2]string{
	{"interrupted_turn_id", "TEXT"},
}

// OpenChat opens or creates the chat database at path (parent directory created with mode 0700) and brings
// its schema up to date. An existing upstream database (same tables, user_version 0) is adopted in place.
func OpenChat(ctx context.Context, path string) (*ChatStore, error) {
	d, err := openDB(ctx, path, "chat", map[int]func(context.Context, *sql.Tx) error{
		2: func(ctx context.Context, tx *sql.Tx) error {
			return ensureColumns(ctx, tx, "session_metadata", metadataColumns)
		},
		3: func(ctx context.Context, tx *sql.Tx) error {
			return ensureColumns(ctx, tx, "session_metadata", ourMetadataColumns)
		},
	})
	if err != nil {
		return nil, err
	}
	if err := d.prepare(ctx, sqlDataVersion, sqlCountSession, sqlInsertMessage, sqlBumpMetadata,
		sqlEnsureMeta, sqlAdoptAlias, sqlClaimNew, sqlClaimExisting, sqlSetState); err != nil {
		_ = d.close()
		return nil, err
	}
	s := &ChatStore{d: d, batch: batchCounts{n: make(map[string]int)}, imports: pendingImports{closed: make(chan struct{})}}
	if s.group, err = groupcommit.New(ctx, d.w, 0, 0, groupcommit.Hooks{Begin: s.beginBatch, End: s.endBatch}); err != nil {
		_ = d.close()
		return nil, fmt.Errorf("store: open %s: %w", path, err)
	}
	return s, nil
}

// beginBatch starts a batch of group: counts.mu is held until endBatch.
func (s *ChatStore) beginBatch() {
	s.counts.mu.Lock()
	s.batch.haveVersion = false
	clear(s.batch.n)
	clear(s.batch.msgs) // drop the contents the last batch held
	s.batch.msgs = s.batch.msgs[:0]
}

// endBatch keeps the counts of a committed batch and extends the cached histories by its messages, and forgets
// the counts and histories of one that was rolled back (or whose outcome is unknown): they are read again next
// time. A session one of whose operations failed in a committed batch is forgotten too.
func (s *ChatStore) endBatch(committed bool) {
	defer s.counts.mu.Unlock()
	if committed {
		for _, m := range s.batch.msgs {
			if s.batch.n[m.key] >= 0 {
				s.counts.appended(m.key, m.idx, m.role, m.content, m.ts)
			}
		}
	}
	for k, n := range s.batch.n {
		if committed && n >= 0 {
			s.counts.store(k, n)
		} else {
			s.counts.forget(k)
		}
	}
	clear(s.batch.msgs)
	s.batch.msgs = s.batch.msgs[:0]
}

// Close closes the database. Calls after Close return ErrClosed; Close itself is idempotent.
func (s *ChatStore) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil
	}
	s.closed = true
	s.imports.close()
	s.group.Close()
	return s.d.close()
}

func (s *ChatStore) check(op, key string, needKey bool) error {
	s.mu.Lock()
	closed := s.closed
	s.mu.Unlock()
	if closed {
		return fmt.Errorf("store: %s %s: %w", op, key, ErrClosed)
	}
	if needKey && key == "" {
		return fmt.Errorf("store: %s: empty session key: %w", op, ErrInvalid)
	}
	return nil
}

const metaCols = `session_key, created_at, last_activity, message_count, name, state, turn_id, turn_started_at,
	agent_alias, interrupted_turn_id, channel_id,
	(SELECT o.principal FROM session_owners o WHERE o.session_key = session_metadata.session_key)`

type rowScanner interface{ Scan(dest ...any) error }

func scanMeta(r rowScanner) (SessionMeta, error) {
	var (
		m                                       SessionMeta
		created, last                           string
		count                                   sql.NullInt64
		name, state, turnID, started, agentName sql.NullString
		interrupted, channel, owner             sql.NullString
	)
	if err := r.Scan(&m.Key, &created, &last, &count, &name, &state, &turnID, &started, &agentName, &interrupted, &channel, &owner); err != nil {
		return SessionMeta{}, err
	}
	var err error
	if m.CreatedAt, err = parseTime(created); err != nil {
		return SessionMeta{}, fmt.Errorf("session %s created_at: %w", m.Key, err)
	}
	if m.LastActivity, err = parseTime(last); err != nil {
		return SessionMeta{}, fmt.Errorf("session %s last_activity: %w", m.Key, err)
	}
	m.MessageCount = int(count.Int64)
	m.Name, m.State, m.TurnID, m.AgentAlias, m.ChannelID = name.String, state.String, turnID.String, agentName.String, channel.String
	m.Interrupted, m.InterruptedTurnID = interrupted.Valid, interrupted.String
	m.Owner = owner.String
	if m.State == "" {
		m.State = "idle"
	}
	if started.Valid && started.String != "" {
		t, err := parseTime(started.String)
		if err != nil {
			return SessionMeta{}, fmt.Errorf("session %s turn_started_at: %w", m.Key, err)
		}
		m.TurnStartedAt = &t
	}
	return m, nil
}

func nullString(s string) sql.NullString { return sql.NullString{String: s, Valid: s != ""} }

// EnsureSession inserts the metadata row for key if it is missing (created_at = last_activity = now,
// agent_alias set) and returns the current metadata and whether the row already existed. An existing row
// is left unchanged, except that one naming no agent gets agentAlias. A non-empty owner is recorded in the same transaction: as the owner of a new session
// (replacing any row a session deleted by another writer left behind), or of an existing one that has none;
// an existing session's owner is never changed.
func (s *ChatStore) EnsureSession(ctx context.Context, key, agentAlias, owner string, now time.Time) (SessionMeta, bool, error) {
	if err := s.ready(ctx, "ensure session", key, true); err != nil {
		return SessionMeta{}, false, err
	}
	var (
		meta    SessionMeta
		existed bool
		empty   bool  // a new session with no message rows: its history is known without a query
		version int64 // PRAGMA data_version in the transaction
	)
	// counts.mu is held across the transaction, as a batch holds it (the same order: the lock, then the writer),
	// so no append of ours commits between this commit and the cache update below.
	s.counts.mu.Lock()
	defer s.counts.mu.Unlock()
	err := s.d.withTx(ctx, func(tx *sql.Tx) error {
		ts := formatTime(now)
		var err error
		if existed, err = s.ensureTx(ctx, tx, key, agentAlias, owner, ts); err != nil {
			return err
		}
		meta, err = scanMeta(tx.QueryRowContext(ctx, "SELECT "+metaCols+" FROM session_metadata WHERE session_key = ?", key))
		if err != nil || existed {
			return err
		}
		var rows int
		if err := tx.QueryRowContext(ctx, "SELECT EXISTS(SELECT 1 FROM sessions WHERE session_key = ?)", key).Scan(&rows); err != nil {
			return err
		}
		if err := s.d.stmt(tx, ctx, sqlDataVersion).QueryRowContext(ctx).Scan(&version); err != nil {
			return err
		}
		empty = rows == 0
		return nil
	})
	if err != nil {
		return SessionMeta{}, false, fmt.Errorf("store: ensure session %s: %w", key, err)
	}
	if empty {
		// The first turn of a new session loads its history: that it has none is known now, so it is cached (as
		// All would after reading it) and the turn's load is not a query. The write lock held by the transaction
		// kept every other connection from committing in it; one that commits later changes data_version, and
		// All then drops the cache as usual.
		s.counts.seen(version)
		s.counts.keep(key, []Message{})
		s.counts.store(key, 0)
		s.counts.gen++
	}
	return meta, existed, nil
}

// Append stores one message and updates the session metadata (message_count+1, last_activity=now, the row
// created if missing) in one transaction, and returns the message's zero-based index within the session.
// Concurrent Appends to one session get distinct, contiguous indices.
func (s *ChatStore) Append(ctx context.Context, key, role, content string, now time.Time) (int, error) {
	if err := s.ready(ctx, "append", key, true); err != nil {
		return 0, err
	}
	if role == "" {
		return 0, fmt.Errorf("store: append %s: empty role: %w", key, ErrInvalid)
	}
	ts := formatTime(now)
	idx, err := s.write(ctx, key, len(content), func(ctx context.Context, tx *sql.Tx) (int, error) {
		return s.appendTx(ctx, tx, key, role, content, ts)
	})
	if err != nil {
		return 0, fmt.Errorf("store: append %s: %w", key, err)
	}
	return idx, nil
}

// write runs fn, which changes the rows of session key and returns the index of the message it stored (-1 for
// none), as one operation of a group-committed batch, and keeps the batch's count of key in step.
func (s *ChatStore) write(ctx context.Context, key string, size int, fn func(ctx context.Context, tx *sql.Tx) (int, error)) (int, error) {
	idx := -1
	err := s.group.Do(ctx, size, func(ctx context.Context, tx *sql.Tx) error {
		mark := len(s.batch.msgs)
		i, err := fn(ctx, tx)
		if err != nil {
			s.batch.n[key] = -1 // rolled back to before fn: count the rows again
			s.batch.msgs = s.batch.msgs[:mark]
			return err
		}
		if i >= 0 {
			s.batch.n[key] = i + 1
		}
		idx = i
		return nil
	})
	return idx, err
}

// ensureTx is EnsureSession's write in tx; it reports whether key's row existed.
func (s *ChatStore) ensureTx(ctx context.Context, tx *sql.Tx, key, agentAlias, owner, ts string) (bool, error) {
	res, err := s.d.stmt(tx, ctx, sqlEnsureMeta).ExecContext(ctx, key, ts, ts, nullString(agentAlias))
	if err != nil {
		return false, err
	}
	n, err := res.RowsAffected()
	if err != nil {
		return false, err
	}
	existed := n == 0
	if existed && agentAlias != "" {
		if _, err := s.d.stmt(tx, ctx, sqlAdoptAlias).ExecContext(ctx, agentAlias, key); err != nil {
			return false, err
		}
	}
	if owner != "" {
		claim := sqlClaimNew
		if existed {
			claim = sqlClaimExisting
		}
		if _, err := s.d.stmt(tx, ctx, claim).ExecContext(ctx, key, owner); err != nil {
			return false, err
		}
	}
	return existed, nil
}

// appendTx inserts one message of key in tx, bumps its metadata row, and returns the message's index. It runs as
// an operation of a batch (write), whose leader holds s.counts.mu.
func (s *ChatStore) appendTx(ctx context.Context, tx *sql.Tx, key, role, content, ts string) (int, error) {
	// The index counts rows, not message_count, so it stays exact even if an older writer let the counter
	// drift; the count comes from this batch, or the cache (see rowCounts), or the rows, taken before this
	// insert.
	n, ok := s.batch.n[key]
	if ok && n < 0 {
		ok = false
	} else if !ok {
		if !s.batch.haveVersion {
			if err := s.d.stmt(tx, ctx, sqlDataVersion).QueryRowContext(ctx).Scan(&s.batch.version); err != nil {
				return 0, err
			}
			s.batch.haveVersion = true
		}
		n, ok = s.counts.lookup(key, s.batch.version)
	}
	if !ok {
		if err := s.d.stmt(tx, ctx, sqlCountSession).QueryRowContext(ctx, key).Scan(&n); err != nil {
			return 0, err
		}
	}
	if _, err := s.d.stmt(tx, ctx, sqlInsertMessage).ExecContext(ctx, key, role, content, ts); err != nil {
		return 0, err
	}
	if _, err := s.d.stmt(tx, ctx, sqlBumpMetadata).ExecContext(ctx, key, ts, ts); err != nil {
		return 0, err
	}
	s.batch.msgs = append(s.batch.msgs, batchMessage{key: key, idx: n, role: role, content: content, ts: ts})
	return n, nil
}

// BeginTurn starts a turn of session key in one transaction: what EnsureSession(key, agentAlias, owner, started)
// does, then what SetState(key, "running", turnID, &started) does, then, when prompt is not "", what
// Append(key, "user", prompt, started) does. It returns the prompt's index (-1 when prompt is ""). Either all of
// it is stored or none.
func (s *ChatStore) BeginTurn(ctx context.Context, key, agentAlias, owner, turnID string, started time.Time, prompt string) (int, error) {
	if err := s.ready(ctx, "begin turn", key, true); err != nil {
		return 0, err
	}
	ts := formatTime(started)
	idx, err := s.write(ctx, key, len(prompt), func(ctx context.Context, tx *sql.Tx) (int, error) {
		if _, err := s.ensureTx(ctx, tx, key, agentAlias, owner, ts); err != nil {
			return 0, err
		}
		if _, err := s.d.stmt(tx, ctx, sqlSetState).ExecContext(ctx, "running", nullString(turnID), ts, key); err != nil {
			return 0, err
		}
		if prompt == "" {
			return -1, nil
		}
		return s.appendTx(ctx, tx, key, "user", prompt, ts)
	})
	if err != nil {
		return 0, fmt.Errorf("store: begin turn %s: %w", key, err)
	}
	return idx, nil
}

// EndTurn stores a turn's last message and sets the session's state (as SetState(key, state, "", nil) does) in
// one transaction, and returns the message's index. Either both are stored or neither.
func (s *ChatStore) EndTurn(ctx context.Context, key, role, content string, now time.Time, state string) (int, error) {
	if err := s.ready(ctx, "end turn", key, true); err != nil {
		return 0, err
	}
	if role == "" || state == "" {
		return 0, fmt.Errorf("store: end turn %s: empty role or state: %w", key, ErrInvalid)
	}
	ts := formatTime(now)
	idx, err := s.write(ctx, key, len(content), func(ctx context.Context, tx *sql.Tx) (int, error) {
		idx, err := s.appendTx(ctx, tx, key, role, content, ts)
		if err != nil {
			return 0, err
		}
		_, err = s.d.stmt(tx, ctx, sqlSetState).ExecContext(ctx, state, sql.NullString{}, sql.NullString{}, key)
		return idx, err
	})
	if err != nil {
		return 0, fmt.Errorf("store: end turn %s: %w", key, err)
	}
	return idx, nil
}

// The statements of the append path, prepared once on the writer connection (db.stmt).
const (
	sqlEnsureMeta = `INSERT INTO session_metadata
		(session_key, created_at, last_activity, message_count, agent_alias) VALUES (?, ?, ?, 0, ?)
		ON CONFLICT(session_key) DO NOTHING`
	// A row that names no agent (an upstream orphan or channel session, a JSONL import) now runs under this one;
	// upstream's session/new records it too.
	sqlAdoptAlias = `UPDATE session_metadata SET agent_alias = ? WHERE session_key = ? AND COALESCE(agent_alias, '') = ''`
	sqlClaimNew   = `INSERT INTO session_owners (session_key, principal) VALUES (?, ?)
		ON CONFLICT(session_key) DO UPDATE SET principal = excluded.principal`
	sqlClaimExisting = `INSERT INTO session_owners (session_key, principal) VALUES (?, ?)
		ON CONFLICT(session_key) DO NOTHING`
	sqlSetState = `UPDATE session_metadata SET state = ?, turn_id = ?, turn_started_at = ?,
		interrupted_turn_id = NULL WHERE session_key = ?`
	sqlDataVersion   = "PRAGMA data_version"
	sqlCountSession  = "SELECT COUNT(*) FROM sessions WHERE session_key = ?"
	sqlInsertMessage = "INSERT INTO sessions (session_key, role, content, created_at) VALUES (?, ?, ?, ?)"
	sqlBumpMetadata  = `INSERT INTO session_metadata (session_key, created_at, last_activity, message_count)
		VALUES (?, ?, ?, 1)
		ON CONFLICT(session_key) DO UPDATE SET
			last_activity = excluded.last_activity,
			message_count = session_metadata.message_count + 1`
)

// SetState records the session's turn state. An empty turnID and a nil startedAt are stored as NULL, and the
// note of an interrupted turn is cleared. An unknown session is an error wrapping ErrNotFound.
func (s *ChatStore) SetState(ctx context.Context, key, state, turnID string, startedAt *time.Time) error {
	if err := s.ready(ctx, "set state", key, true); err != nil {
		return err
	}
	if state == "" {
		return fmt.Errorf("store: set state %s: empty state: %w", key, ErrInvalid)
	}
	var started sql.NullString
	if startedAt != nil {
		started = sql.NullString{String: formatTime(*startedAt), Valid: true}
	}
	var n int64
	err := s.d.withTx(ctx, func(tx *sql.Tx) error {
		res, err := s.d.stmt(tx, ctx, sqlSetState).ExecContext(ctx, state, nullString(turnID), started, key)
		if err != nil {
			return err
		}
		n, err = res.RowsAffected()
		return err
	})
	if err != nil {
		return fmt.Errorf("store: set state %s: %w", key, err)
	}
	if n == 0 {
		return fmt.Errorf("store: set state %s: %w", key, ErrNotFound)
	}
	return nil
}

// InterruptRunning marks every session stored as running idle, noting the interrupted turn (its id moves from
// turn_id to interrupted_turn_id; turn_started_at is cleared), and returns how many it marked. Call it at start,
// while holding the install lock: no turn runs yet, so every running row was left by a process that ended
// mid-turn (upstream's boot-id rule, with the lock standing for the boot id).
func (s *ChatStore) InterruptRunning(ctx context.Context) (int, error) {
	if err := s.check("interrupt running", "", false); err != nil {
		return 0, err
	}
	var n int64
	err := s.d.withTx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE session_metadata SET state = 'idle',
			interrupted_turn_id = COALESCE(turn_id, ''), turn_id = NULL, turn_started_at = NULL
			WHERE state = 'running'`)
		if err != nil {
			return err
		}
		n, err = res.RowsAffected()
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("store: interrupt running: %w", err)
	}
	return int(n), nil
}

// Delete removes the session's messages (and, through the triggers, their FTS rows), its metadata and its
// owner in one transaction. Deleting an unknown session succeeds. Import receipts are kept: they record that a JSONL
// source was consumed and must not be imported again.
func (s *ChatStore) Delete(ctx context.Context, key string) error {
	if err := s.ready(ctx, "delete", key, true); err != nil {
		return err
	}
	s.counts.mu.Lock()
	defer s.counts.mu.Unlock()
	defer s.counts.forget(key)
	err := s.d.withTx(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, "DELETE FROM sessions WHERE session_key = ?", key); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, "DELETE FROM session_metadata WHERE session_key = ?", key); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, "DELETE FROM session_owners WHERE session_key = ?", key)
		return err
	})
	if err != nil {
		return fmt.Errorf("store: delete %s: %w", key, err)
	}
	return nil
}

// Backup writes a consistent snapshot of the database to dest (which must not exist) while the store stays
// usable; see db.backup.
func (s *ChatStore) Backup(ctx context.Context, dest string) error {
	if err := s.check("backup", "", false); err != nil {
		return err
	}
	return s.d.backup(ctx, dest)
}

package pgchat

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"github.com/zeroclaw-go/zeroclaw/internal/lease"
	"github.com/zeroclaw-go/zeroclaw/internal/pgdb"
	"github.com/zeroclaw-go/zeroclaw/internal/store"
)

// BusyError is BeginTurn's error when another daemon owns the session's running turn: it matches
// store.ErrBusy, which the RPC layer answers with -32002.
type BusyError struct {
	Key    string
	Holder string    // the owning daemon's id
	Until  time.Time // when its lease lapses unless renewed (the server's clock)
}

func (e *BusyError) Error() string {
	// The holder (host and pid) stays out of the text, which a client may see.
	return fmt.Sprintf("store: session %s busy: its turn runs on another daemon", e.Key)
}

func (e *BusyError) Unwrap() error { return store.ErrBusy }

// turn is a running turn this daemon owns: its lease, renewed in the background until the turn ends.
type turn struct {
	l    lease.Lease
	stop context.CancelFunc
	lost chan struct{} // closed when a renewal found the lease gone
}

// turnLease is the lease name of key's turn; a key too long for a lease name is named by its digest.
func turnLease(key string) string {
	if len(key) <= 400 {
		return "chat-turn:" + key
	}
	d := sha256.Sum256([]byte(key))
	return "chat-turn:sha256:" + hex.EncodeToString(d[:])
}

// takeTurn acquires key's turn lease for this daemon (extending it if already held), or returns a BusyError.
// fresh reports whether the lease was not held before.
func (s *Store) takeTurn(ctx context.Context, key string) (l lease.Lease, fresh bool, err error) {
	s.mu.Lock()
	_, had := s.turns[key]
	s.mu.Unlock()
	l, ok, err := s.leases.Acquire(ctx, turnLease(key), s.ttl)
	if err != nil {
		return lease.Lease{}, false, err
	}
	if !ok {
		return lease.Lease{}, false, &BusyError{Key: key, Holder: l.Holder, Until: l.Expires}
	}
	return l, !had, nil
}

// keepTurn records l as the lease of key's running turn and renews it every TTL/3 until endTurn.
func (s *Store) keepTurn(key string, l lease.Lease) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if t, ok := s.turns[key]; ok {
		if t.l.Token == l.Token {
			return
		}
		t.stop()
	}
	if s.closed {
		return
	}
	ctx, stop := context.WithCancel(s.bg)
	t := &turn{l: l, stop: stop, lost: make(chan struct{})}
	s.turns[key] = t
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		tick := time.NewTicker(s.ttl / 3)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			if _, err := s.leases.Renew(ctx, t.l, s.ttl); errors.Is(err, lease.ErrLost) {
				close(t.lost)
				return
			}
			// Another error (the database unreachable) is retried on the next tick; if the lease lapses
			// meanwhile, the next renewal finds it lost.
		}
	}()
}

// endTurn stops renewing key's turn lease and gives it up.
func (s *Store) endTurn(key string) {
	s.mu.Lock()
	t, ok := s.turns[key]
	if ok {
		delete(s.turns, key)
		t.stop()
	}
	s.mu.Unlock()
	if ok {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = s.leases.Release(ctx, t.l)
	}
}

// fence, inside tx, checks that the turn this daemon runs on key, if any, still holds its lease; when this daemon
// runs none, that no other daemon's live turn owns key (a BusyError). Either way it locks the lease row until tx
// ends, so no other daemon takes the session over before tx's writes commit: history is written by the turn's
// owner alone while a turn runs.
func (s *Store) fence(ctx context.Context, tx *pgdb.Tx, key string) error {
	s.mu.Lock()
	t, ok := s.turns[key]
	s.mu.Unlock()
	if ok {
		return lease.Check(ctx, tx, t.l)
	}
	rows, err := tx.Query(ctx, `SELECT holder, expires_at FROM zc_leases
WHERE name = $1 AND holder <> $2 AND expires_at >= now() FOR SHARE`, turnLease(key), s.Holder())
	if err != nil || len(rows) == 0 {
		return err
	}
	until, err := rows[0].Time(1)
	if err != nil {
		return err
	}
	return &BusyError{Key: key, Holder: rows[0].String(0), Until: until}
}

// BeginTurn starts a turn of key owned by this daemon: it takes the session's turn lease (a BusyError while
// another daemon holds it), then in one transaction fenced by that lease does what EnsureSession, SetState
// running and, unless prompt is "", Append of the prompt do. It returns the prompt's index (-1 without one).
// The lease is renewed until EndTurn or SetState to another state; if this daemon dies, it lapses after the
// TTL and InterruptRunning (on any daemon) marks the turn interrupted.
func (s *Store) BeginTurn(ctx context.Context, key, agentAlias, owner, turnID string, started time.Time, prompt string) (int, error) {
	if err := s.check("begin turn", key, true, agentAlias, owner, turnID); err != nil {
		return 0, err
	}
	idx, err := s.runningTx(ctx, key, func(tx *pgdb.Tx, l lease.Lease) (int, error) {
		if _, _, err := ensureTx(ctx, tx, key, agentAlias, owner, started); err != nil {
			return 0, err
		}
		if _, err := tx.Exec(ctx, setStateSQL, "running", null(turnID), started, key); err != nil {
			return 0, err
		}
		if prompt == "" {
			return -1, nil
		}
		return appendTx(ctx, tx, s.Holder(), key, "user", prompt, started)
	})
	if err != nil {
		return 0, fmt.Errorf("store: begin turn %s: %w", key, err)
	}
	return idx, nil
}

// runningTx takes key's turn lease, runs fn in a transaction fenced by it that also records the lease on the
// session row, and keeps renewing the lease once that commits (or gives it up if it was fresh and fn failed).
func (s *Store) runningTx(ctx context.Context, key string, fn func(tx *pgdb.Tx, l lease.Lease) (int, error)) (int, error) {
	l, fresh, err := s.takeTurn(ctx, key)
	if err != nil {
		return 0, err
	}
	var idx int
	err = s.db.InTx(ctx, func(tx *pgdb.Tx) error {
		if err := lease.Check(ctx, tx, l); err != nil {
			return err
		}
		var err error
		if idx, err = fn(tx, l); err != nil {
			return err
		}
		_, err = tx.Exec(ctx, "UPDATE zc_chat_sessions SET turn_lease = $1 WHERE session_key = $2", l.Name, key)
		return err
	})
	if err != nil {
		if fresh {
			rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
			_ = s.leases.Release(rctx, l)
			cancel()
		}
		return 0, err
	}
	s.keepTurn(key, l)
	return idx, nil
}

// EndTurn stores the turn's last message and sets the session's state in one transaction fenced by the turn's
// lease (lease.ErrLost when this daemon lost the session meanwhile: nothing is stored), then gives the lease up.
func (s *Store) EndTurn(ctx context.Context, key, role, content string, now time.Time, state string) (int, error) {
	if err := s.check("end turn", key, true, role, state); err != nil {
		return 0, err
	}
	if role == "" || state == "" {
		return 0, fmt.Errorf("store: end turn %s: empty role or state: %w", key, store.ErrInvalid)
	}
	var idx int
	err := s.db.InTx(ctx, func(tx *pgdb.Tx) error {
		if err := s.fence(ctx, tx, key); err != nil {
			return err
		}
		var err error
		if idx, err = appendTx(ctx, tx, s.Holder(), key, role, content, now); err != nil {
			return err
		}
		_, err = tx.Exec(ctx, setStateSQL, state, nil, nil, key)
		return err
	})
	if state != "running" {
		s.endTurn(key)
	}
	if err != nil {
		return 0, fmt.Errorf("store: end turn %s: %w", key, err)
	}
	return idx, nil
}

// InterruptRunning marks idle every session stored as running whose turn lease is not live (its daemon ended
// or lost the database for longer than the TTL), noting the interrupted turn as the SQLite store does, and
// returns how many it marked. A turn a live daemon runs is left alone, so every daemon may call it at start and
// then periodically (every TTL is enough) to recover the turns of daemons that died.
func (s *Store) InterruptRunning(ctx context.Context) (int, error) {
	if err := s.check("interrupt running", "", false); err != nil {
		return 0, err
	}
	n, err := s.db.Exec(ctx, `UPDATE zc_chat_sessions AS s SET state = 'idle',
    interrupted_turn_id = COALESCE(turn_id, ''), turn_id = NULL, turn_started_at = NULL, turn_lease = NULL
WHERE state = 'running' AND NOT EXISTS (
    SELECT 1 FROM zc_leases l WHERE l.name = s.turn_lease AND l.expires_at >= now())`)
	if err != nil {
		return 0, fmt.Errorf("store: interrupt running: %w", err)
	}
	return int(n), nil
}

// RunRecovery calls InterruptRunning every interval until ctx ends, so that the turns of a daemon that died are
// marked interrupted soon after their lease lapses (a daemon calls it once at start too). report, when not nil,
// gets each run's count and error.
func (s *Store) RunRecovery(ctx context.Context, every time.Duration, report func(n int, err error)) {
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		n, err := s.InterruptRunning(ctx)
		if errors.Is(err, store.ErrClosed) {
			return
		}
		if report != nil && ctx.Err() == nil {
			report(n, err)
		}
	}
}

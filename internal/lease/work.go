package lease

import (
	"context"
	"fmt"
	"time"

	"github.com/zeroclaw-go/zeroclaw/internal/pgdb"
)

// Slot states as the zc_work table holds them.
const (
	StateRunning     = "running"
	StateDone        = "done"
	StateInterrupted = "interrupted"
)

// maxOutcome bounds the outcome text recorded with a slot.
const maxOutcome = 4096

// Result says what Claim found.
type Result int

const (
	// Claimed: the slot is this daemon's to run now (Claim.Token says which attempt).
	Claimed Result = iota + 1
	// Busy: another live claim holds the slot (maybe this daemon's own, still running).
	Busy
	// Finished: the slot already has its end recorded (Claim.State is done or interrupted).
	Finished
	// Interrupted: the slot's last holder lost its claim mid-work; Claim recorded the slot interrupted on this
	// daemon's behalf (ClaimOptions.Retry unset), and the caller records the run as interrupted in its history.
	Interrupted
)

func (r Result) String() string {
	switch r {
	case Claimed:
		return "claimed"
	case Busy:
		return "busy"
	case Finished:
		return "finished"
	case Interrupted:
		return "interrupted"
	}
	return fmt.Sprintf("Result(%d)", int(r))
}

// Claim is one daemon's hold on a work slot, or what Claim saw of another's.
type Claim struct {
	Kind, Slot string
	Holder     string
	Token      int64 // the attempt: 1 for a first run, +1 for each takeover
	State      string
	Outcome    string
	// Prev is, for Interrupted and for a retried takeover, the holder whose claim expired.
	Prev string
}

// ClaimOptions tunes Claim.
type ClaimOptions struct {
	// TTL is how long the claim lasts unless extended; a daemon that dies mid-work loses it this long after its
	// last Extend.
	TTL time.Duration
	// Retry makes a takeover of an expired claim run the work again (token + 1) instead of recording it
	// interrupted: only for work that is safe to repeat.
	Retry bool
}

// Claim takes the slot (kind, slot) for this daemon if nobody ran it yet, and otherwise reports its state;
// of many daemons claiming one slot at once, exactly one gets Claimed.
func (s *Store) Claim(ctx context.Context, kind, slot string, o ClaimOptions) (Claim, Result, error) {
	if err := checkName("slot kind", kind); err != nil {
		return Claim{}, 0, err
	}
	if err := checkName("slot key", slot); err != nil {
		return Claim{}, 0, err
	}
	t, err := ms(o.TTL)
	if err != nil {
		return Claim{}, 0, err
	}
	c := Claim{Kind: kind, Slot: slot}
	var res Result
	err = s.db.InTx(ctx, func(tx *pgdb.Tx) error {
		rows, err := tx.Query(ctx, `INSERT INTO zc_work (kind, slot, holder, token, state, claimed_at, lease_until)
VALUES ($1, $2, $3, 1, 'running', now(), now() + $4::bigint * interval '1 millisecond')
ON CONFLICT (kind, slot) DO NOTHING RETURNING token`, kind, slot, s.holder, t)
		if err != nil {
			return err
		}
		if len(rows) == 1 {
			c.Holder, c.Token, c.State, res = s.holder, 1, StateRunning, Claimed
			return nil
		}
		// Someone claimed it first: look under a row lock, so two daemons finding it expired cannot both take
		// it over.
		rows, err = tx.Query(ctx, `SELECT holder, token, state, outcome, lease_until < now() FROM zc_work
WHERE kind = $1 AND slot = $2 FOR UPDATE`, kind, slot)
		if err != nil {
			return err
		}
		if len(rows) != 1 {
			return fmt.Errorf("no row after a refused claim")
		}
		r := rows[0]
		c.Holder, c.State, c.Outcome = r.String(0), r.String(2), r.String(3)
		if c.Token, err = r.Int64(1); err != nil {
			return err
		}
		expired := r.Bool(4)
		switch {
		case c.State != StateRunning:
			res = Finished
			return nil
		case !expired:
			res = Busy
			return nil
		}
		c.Prev = c.Holder
		if o.Retry {
			if _, err := tx.Exec(ctx, `UPDATE zc_work SET holder = $3, token = token + 1, claimed_at = now(),
lease_until = now() + $4::bigint * interval '1 millisecond' WHERE kind = $1 AND slot = $2`, kind, slot, s.holder, t); err != nil {
				return err
			}
			c.Holder, c.Token, res = s.holder, c.Token+1, Claimed
			return nil
		}
		outcome := trimOutcome("interrupted: " + c.Prev + " lost its claim before recording an end")
		if _, err := tx.Exec(ctx, `UPDATE zc_work SET holder = $3, token = token + 1, state = 'interrupted',
finished_at = now(), outcome = $4 WHERE kind = $1 AND slot = $2`, kind, slot, s.holder, outcome); err != nil {
			return err
		}
		c.Holder, c.Token, c.State, c.Outcome, res = s.holder, c.Token+1, StateInterrupted, outcome, Interrupted
		return nil
	})
	if err != nil {
		return Claim{}, 0, fmt.Errorf("lease: claim %s/%s: %w", kind, slot, err)
	}
	return c, res, nil
}

func trimOutcome(s string) string {
	if len(s) <= maxOutcome {
		return s
	}
	s = s[:maxOutcome]
	for len(s) > 0 && s[len(s)-1]&0xC0 == 0x80 { // never cut a UTF-8 sequence in two
		s = s[:len(s)-1]
	}
	if len(s) > 0 && s[len(s)-1] >= 0xC0 {
		s = s[:len(s)-1]
	}
	return s
}

// Extend pushes a running claim's expiry ttl from now; ErrLost when it expired (even if nobody recorded it
// interrupted yet: past its expiry another daemon may have, so the holder must stop) or another daemon took it.
func (s *Store) Extend(ctx context.Context, c Claim, ttl time.Duration) error {
	t, err := ms(ttl)
	if err != nil {
		return err
	}
	n, err := s.db.Exec(ctx, `UPDATE zc_work SET lease_until = now() + $5::bigint * interval '1 millisecond'
WHERE kind = $1 AND slot = $2 AND holder = $3 AND token = $4 AND state = 'running' AND lease_until >= now()`, c.Kind, c.Slot, s.holder, c.Token, t)
	if err != nil {
		return fmt.Errorf("lease: extend %s/%s: %w", c.Kind, c.Slot, err)
	}
	if n != 1 {
		return fmt.Errorf("slot %s/%s token %d: %w", c.Kind, c.Slot, c.Token, ErrLost)
	}
	return nil
}

// Complete records the end of a claimed slot (done, with its outcome) on r, the caller's transaction when the
// work's own record is written with it; ErrLost when the claim was taken over meanwhile (then nothing is
// written, and the caller's transaction should roll back).
func (s *Store) Complete(ctx context.Context, r pgdb.Runner, c Claim, outcome string) error {
	if r == nil {
		r = s.db
	}
	n, err := r.Exec(ctx, `UPDATE zc_work SET state = 'done', finished_at = now(), outcome = $5
WHERE kind = $1 AND slot = $2 AND holder = $3 AND token = $4 AND state = 'running'`, c.Kind, c.Slot, s.holder, c.Token, trimOutcome(outcome))
	if err != nil {
		return fmt.Errorf("lease: complete %s/%s: %w", c.Kind, c.Slot, err)
	}
	if n != 1 {
		return fmt.Errorf("slot %s/%s token %d: %w", c.Kind, c.Slot, c.Token, ErrLost)
	}
	return nil
}

// Slot reads a slot's record; ok is false when nobody claimed it.
func (s *Store) Slot(ctx context.Context, kind, slot string) (c Claim, ok bool, err error) {
	rows, err := s.db.Query(ctx, "SELECT holder, token, state, outcome FROM zc_work WHERE kind = $1 AND slot = $2", kind, slot)
	if err != nil || len(rows) == 0 {
		return Claim{}, false, err
	}
	c = Claim{Kind: kind, Slot: slot, Holder: rows[0].String(0), State: rows[0].String(2), Outcome: rows[0].String(3)}
	c.Token, err = rows[0].Int64(1)
	return c, err == nil, err
}

// Sweep records interrupted every running slot of kind whose claim expired, and returns them: a daemon looking
// after shared work calls it so a slot whose holder died is never left without an end even if nobody claims
// that slot again.
func (s *Store) Sweep(ctx context.Context, kind string, limit int) ([]Claim, error) {
	if limit <= 0 || limit > 1000 {
		limit = 1000
	}
	rows, err := s.db.Query(ctx, `UPDATE zc_work w SET state = 'interrupted', finished_at = now(), token = w.token + 1,
    outcome = left('interrupted: ' || w.holder || ' lost its claim before recording an end', 4096), holder = $2
FROM (SELECT kind, slot FROM zc_work WHERE kind = $1 AND state = 'running' AND lease_until < now()
      ORDER BY lease_until LIMIT $3 FOR UPDATE SKIP LOCKED) d
WHERE w.kind = d.kind AND w.slot = d.slot
RETURNING w.slot, w.token, w.outcome`, kind, s.holder, limit)
	if err != nil {
		return nil, fmt.Errorf("lease: sweep %s: %w", kind, err)
	}
	out := make([]Claim, 0, len(rows))
	for _, r := range rows {
		c := Claim{Kind: kind, Slot: r.String(0), Holder: s.holder, State: StateInterrupted, Outcome: r.String(2)}
		if c.Token, err = r.Int64(1); err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, nil
}

// CheckSlot, inside a transaction, verifies that c is still this daemon's running claim with its token and
// locks the slot's row until the transaction ends, so no other daemon can record it interrupted before the
// transaction's writes commit: the fence of a write made on the slot's behalf.
func CheckSlot(ctx context.Context, tx *pgdb.Tx, c Claim) error {
	rows, err := tx.Query(ctx, `SELECT 1 FROM zc_work WHERE kind = $1 AND slot = $2 AND holder = $3 AND token = $4
AND state = 'running' AND lease_until >= now() FOR UPDATE`, c.Kind, c.Slot, c.Holder, c.Token)
	if err != nil {
		return fmt.Errorf("lease: check %s/%s: %w", c.Kind, c.Slot, err)
	}
	if len(rows) != 1 {
		return fmt.Errorf("slot %s/%s token %d: %w", c.Kind, c.Slot, c.Token, ErrLost)
	}
	return nil
}

// RunningSlots counts the running work slots of every daemon, for status and doctor.
func (s *Store) RunningSlots(ctx context.Context) (int, error) {
	rows, err := s.db.Query(ctx, "SELECT count(*) FROM zc_work WHERE state = 'running'")
	if err != nil {
		return 0, fmt.Errorf("lease: running slots: %w", err)
	}
	n, err := rows[0].Int64(0)
	return int(n), err
}

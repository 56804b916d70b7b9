package lease_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/zeroclaw-go/zeroclaw/internal/lease"
	"github.com/zeroclaw-go/zeroclaw/internal/pgdb"
	"github.com/zeroclaw-go/zeroclaw/internal/pgdb/pgtest"
)

// daemons opens n stores on one fresh schema, each with its own pool and holder id, as n daemons would.
func daemons(t *testing.T, n int) ([]*lease.Store, *pgdb.Pool) {
	t.Helper()
	dsn := pgtest.DSN(t)
	if dsn == "" {
		return nil, nil
	}
	schema := pgtest.Schema(t, dsn)
	out := make([]*lease.Store, n)
	var admin *pgdb.Pool
	for i := range n {
		p := pgtest.OpenSchema(t, dsn, schema)
		s, err := lease.Open(t.Context(), p, fmt.Sprintf("daemon-%d:%s", i, lease.NewHolderID()))
		if err != nil {
			t.Fatal(err)
		}
		out[i], admin = s, p
	}
	return out, admin
}

// expire makes a lease lapse as if its ttl had passed, without waiting on a clock.
func expire(t *testing.T, db *pgdb.Pool, name string) {
	t.Helper()
	if _, err := db.Exec(t.Context(), "UPDATE zc_leases SET expires_at = now() - interval '1 second' WHERE name = $1", name); err != nil {
		t.Fatal(err)
	}
}

func TestLeaseIsExclusiveAndTokensGrowOnEveryHandOver(t *testing.T) {
	ds, db := daemons(t, 2)
	if ds == nil {
		return
	}
	a, b := ds[0], ds[1]
	ctx := t.Context()
	la, ok, err := a.Acquire(ctx, "poller:telegram.default", time.Minute)
	if err != nil || !ok || la.Token != 1 || la.Holder != a.Holder() {
		t.Fatalf("first acquire: %+v %v %v", la, ok, err)
	}
	seen, ok, err := b.Acquire(ctx, "poller:telegram.default", time.Minute)
	if err != nil || ok || seen.Holder != a.Holder() || seen.Token != 1 {
		t.Fatalf("a second daemon took a held lease: %+v %v %v", seen, ok, err)
	}
	// The holder acquiring again extends, same token.
	again, ok, err := a.Acquire(ctx, "poller:telegram.default", time.Minute)
	if err != nil || !ok || again.Token != 1 {
		t.Fatalf("re-acquire by the holder: %+v %v %v", again, ok, err)
	}
	if err := a.Release(ctx, la); err != nil {
		t.Fatal(err)
	}
	lb, ok, err := b.Acquire(ctx, "poller:telegram.default", time.Minute)
	if err != nil || !ok || lb.Token != 2 {
		t.Fatalf("after release: %+v %v %v", lb, ok, err)
	}
	// a's old lease is dead: renew and a fenced write fail.
	if _, err := a.Renew(ctx, la, time.Minute); !errors.Is(err, lease.ErrLost) {
		t.Fatalf("renew of a released lease: %v", err)
	}
	// b's lease lapses (b paused); a takes it over with token 3; b's renew and fence now fail.
	expire(t, db, "poller:telegram.default")
	la3, ok, err := a.Acquire(ctx, "poller:telegram.default", time.Minute)
	if err != nil || !ok || la3.Token != 3 {
		t.Fatalf("takeover of an expired lease: %+v %v %v", la3, ok, err)
	}
	if _, err := b.Renew(ctx, lb, time.Minute); !errors.Is(err, lease.ErrLost) {
		t.Fatalf("renew after a takeover: %v", err)
	}
	held, err := b.Held(ctx)
	if err != nil || len(held) != 1 || held[0].Holder != a.Holder() || held[0].Token != 3 {
		t.Fatalf("held: %+v %v", held, err)
	}
	if _, _, err := a.Acquire(ctx, "", time.Minute); err == nil {
		t.Error("an empty lease name was accepted")
	}
	if _, _, err := a.Acquire(ctx, "x", 0); err == nil {
		t.Error("a zero ttl was accepted")
	}
}

// The fence: a write made under a lease commits only while the lease is held with that token; a daemon whose
// lease was taken over writes nothing.
func TestCheckFencesWritesOfALostLease(t *testing.T) {
	ds, db := daemons(t, 2)
	if ds == nil {
		return
	}
	a, b := ds[0], ds[1]
	ctx := t.Context()
	if _, err := db.Exec(ctx, "CREATE TABLE effects (who TEXT, token BIGINT)"); err != nil {
		t.Fatal(err)
	}
	write := func(s *lease.Store, l lease.Lease) error {
		return db.InTx(ctx, func(tx *pgdb.Tx) error {
			if err := lease.Check(ctx, tx, l); err != nil {
				return err
			}
			_, err := tx.Exec(ctx, "INSERT INTO effects VALUES ($1, $2)", s.Holder(), l.Token)
			return err
		})
	}
	la, _, err := a.Acquire(ctx, "session:abc", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if err := write(a, la); err != nil {
		t.Fatal(err)
	}
	expire(t, db, "session:abc")
	lb, ok, err := b.Acquire(ctx, "session:abc", time.Minute)
	if err != nil || !ok {
		t.Fatal(ok, err)
	}
	if err := write(a, la); !errors.Is(err, lease.ErrLost) {
		t.Fatalf("a stale holder's write: %v", err)
	}
	if err := write(b, lb); err != nil {
		t.Fatal(err)
	}
	rows, err := db.Query(ctx, "SELECT who, token FROM effects ORDER BY token")
	if err != nil || len(rows) != 2 || rows[0].String(0) != a.Holder() || rows[1].String(0) != b.Holder() || rows[1].String(1) != "2" {
		t.Fatalf("effects %v, %v", rows, err)
	}

}

// Of three daemons claiming 200 slots at once (each slot by every daemon, from several goroutines), each slot is
// claimed exactly once.
func TestClaimIsExactlyOnceAcrossDaemons(t *testing.T) {
	ds, db := daemons(t, 3)
	if ds == nil {
		return
	}
	const slots = 200
	var claimed [slots]atomic.Int32
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for _, s := range ds {
		for g := range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range slots {
					key := fmt.Sprintf("slot-%03d", (i+g*7)%slots)
					c, res, err := s.Claim(context.Background(), "cron", key, lease.ClaimOptions{TTL: time.Minute})
					if err != nil {
						errs <- err
						return
					}
					if res == lease.Claimed {
						claimed[(i+g*7)%slots].Add(1)
						if err := s.Complete(context.Background(), nil, c, "ok"); err != nil {
							errs <- err
							return
						}
					}
				}
			}()
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	for i := range slots {
		if n := claimed[i].Load(); n != 1 {
			t.Fatalf("slot %d claimed %d times", i, n)
		}
	}
	rows, err := db.Query(t.Context(), "SELECT count(*) FROM zc_work WHERE kind = 'cron' AND state = 'done'")
	if err != nil || rows[0].String(0) != fmt.Sprint(slots) {
		t.Fatalf("done slots %v, %v", rows, err)
	}
}

// A daemon that dies mid-work loses its claim when it expires: the next daemon to look records the slot
// interrupted (never runs it twice), or with Retry runs it again with a higher token; the dead holder's late
// Complete is refused; Sweep ends every expired slot nobody claims again.
func TestExpiredClaimIsInterruptedOrRetriedNeverRunTwice(t *testing.T) {
	ds, db := daemons(t, 2)
	if ds == nil {
		return
	}
	a, b := ds[0], ds[1]
	ctx := t.Context()
	opts := lease.ClaimOptions{TTL: time.Minute}
	ca, res, err := a.Claim(ctx, "heartbeat", "tick-1", opts)
	if err != nil || res != lease.Claimed || ca.Token != 1 {
		t.Fatalf("%+v %v %v", ca, res, err)
	}
	if _, res, _ := b.Claim(ctx, "heartbeat", "tick-1", opts); res != lease.Busy {
		t.Fatalf("a live claim was not busy for another daemon: %v", res)
	}
	if err := a.Extend(ctx, ca, time.Minute); err != nil {
		t.Fatal(err)
	}
	expireSlots := func() {
		if _, err := db.Exec(ctx, "UPDATE zc_work SET lease_until = now() - interval '1 second' WHERE state = 'running'"); err != nil {
			t.Fatal(err)
		}
	}
	expireSlots()
	cb, res, err := b.Claim(ctx, "heartbeat", "tick-1", opts)
	if err != nil || res != lease.Interrupted || cb.Prev != a.Holder() || cb.State != lease.StateInterrupted || cb.Token != 2 {
		t.Fatalf("takeover: %+v %v %v", cb, res, err)
	}
	if err := a.Complete(ctx, nil, ca, "ok"); !errors.Is(err, lease.ErrLost) {
		t.Fatalf("the dead holder's late complete: %v", err)
	}
	if err := a.Extend(ctx, ca, time.Minute); !errors.Is(err, lease.ErrLost) {
		t.Fatalf("the dead holder's late extend: %v", err)
	}
	if got, res, _ := a.Claim(ctx, "heartbeat", "tick-1", opts); res != lease.Finished || got.State != lease.StateInterrupted {
		t.Fatalf("an interrupted slot claimed again: %+v %v", got, res)
	}

	// Retry: safe-to-repeat work runs again with token 2.
	ca, _, _ = a.Claim(ctx, "sop-trigger", "evt-9", opts)
	expireSlots()
	cb, res, err = b.Claim(ctx, "sop-trigger", "evt-9", lease.ClaimOptions{TTL: time.Minute, Retry: true})
	if err != nil || res != lease.Claimed || cb.Token != 2 || cb.Holder != b.Holder() {
		t.Fatalf("retry takeover: %+v %v %v", cb, res, err)
	}
	if err := a.Complete(ctx, nil, ca, "late"); !errors.Is(err, lease.ErrLost) {
		t.Fatalf("late complete after a retry takeover: %v", err)
	}
	if err := b.Complete(ctx, nil, cb, "ok"); err != nil {
		t.Fatal(err)
	}
	if got, ok, err := a.Slot(ctx, "sop-trigger", "evt-9"); err != nil || !ok || got.State != lease.StateDone || got.Outcome != "ok" {
		t.Fatalf("slot record %+v %v %v", got, ok, err)
	}

	// Sweep: a claim nobody comes back for still gets its end.
	for i := range 5 {
		if _, _, err := a.Claim(ctx, "cron", fmt.Sprintf("s%d", i), opts); err != nil {
			t.Fatal(err)
		}
	}
	expireSlots()
	swept, err := b.Sweep(ctx, "cron", 0)
	if err != nil || len(swept) != 5 {
		t.Fatalf("sweep: %d %v", len(swept), err)
	}
	rows, err := db.Query(ctx, "SELECT count(*) FROM zc_work WHERE state = 'running'")
	if err != nil || rows[0].String(0) != "0" {
		t.Fatalf("running after sweep: %v %v", rows, err)
	}
}

func TestPeersAreListedWhileTheyAnnounce(t *testing.T) {
	ds, db := daemons(t, 3)
	if ds == nil {
		return
	}
	ctx := t.Context()
	for _, s := range ds {
		if err := s.Announce(ctx, "test"); err != nil {
			t.Fatal(err)
		}
	}
	peers, err := ds[0].Peers(ctx, time.Minute)
	if err != nil || len(peers) != 3 {
		t.Fatalf("peers %+v %v", peers, err)
	}
	if _, err := db.Exec(ctx, "UPDATE zc_peers SET seen_at = now() - interval '10 minutes' WHERE holder = $1", ds[2].Holder()); err != nil {
		t.Fatal(err)
	}
	peers, err = ds[0].Peers(ctx, time.Minute)
	if err != nil || len(peers) != 2 {
		t.Fatalf("a silent peer is still listed: %+v %v", peers, err)
	}
}

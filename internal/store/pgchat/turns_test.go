package pgchat_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/zeroclaw-go/zeroclaw/internal/lease"
	"github.com/zeroclaw-go/zeroclaw/internal/pgdb"
	"github.com/zeroclaw-go/zeroclaw/internal/pgdb/pgtest"
	"github.com/zeroclaw-go/zeroclaw/internal/store"
	"github.com/zeroclaw-go/zeroclaw/internal/store/pgchat"
)

// waitFor polls cond until it holds or a generous deadline passes; what names what did not happen.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("after 60s: %s did not happen", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func busy(t *testing.T, err error, holder string) {
	t.Helper()
	var be *pgchat.BusyError
	if !errors.Is(err, store.ErrBusy) || !errors.As(err, &be) || be.Holder != holder {
		t.Fatalf("a second daemon's turn: %v, want a BusyError naming %s", err, holder)
	}
	if strings.Contains(err.Error(), holder) {
		t.Fatalf("the busy error's text names the holder (host and pid): %v", err)
	}
}

// Two daemons on one database: a running turn is owned by the daemon that began it; the other's BeginTurn,
// and its SetState running, are refused with a busy error until the owner ends the turn, and a running turn
// whose owner lives is never interrupted by the other's recovery.
func TestTurnHasOneOwner(t *testing.T) {
	dsn := pgtest.DSN(t)
	if dsn == "" {
		return
	}
	schema := pgtest.Schema(t, dsn)
	a, _ := daemon(t, dsn, schema, 0)
	b, _ := daemon(t, dsn, schema, 0)
	ctx := t.Context()
	mustBegin(t, a, "k", "turn-a")
	_, err := b.BeginTurn(ctx, "k", "a", "", "turn-b", t0, "prompt of turn-b")
	busy(t, err, a.Holder())
	busy(t, b.SetState(ctx, "k", "running", "turn-b", &t0), a.Holder())
	if n, err := b.InterruptRunning(ctx); err != nil || n != 0 {
		t.Fatalf("B's recovery while A runs the turn: %d, %v", n, err)
	}
	// Nothing of B's refused turn was stored; history written by A is visible to B at once.
	if m, err := b.Meta(ctx, "k"); err != nil || m.TurnID != "turn-a" || m.MessageCount != 1 || m.State != "running" {
		t.Fatalf("B sees %+v, %v", m, err)
	}
	// Another session is free.
	mustBegin(t, b, "other", "turn-o")
	if _, err := a.EndTurn(ctx, "k", "assistant", "answer", t0, "idle"); err != nil {
		t.Fatal(err)
	}
	// Once A ended the turn B may take the session, and B's history read shows A's answer.
	mustBegin(t, b, "k", "turn-b")
	all, err := b.All(ctx, "k")
	if err != nil || len(all) != 3 || all[1].Content != "answer" || all[2].Content != "prompt of turn-b" {
		t.Fatalf("B's history: %+v %v", all, err)
	}
	_, err = a.BeginTurn(ctx, "k", "a", "", "turn-a2", t0, "")
	busy(t, err, b.Holder())
}

// A daemon that lost its lease (paused past the TTL, cut off from the database) while another took the session
// over can write nothing more: its EndTurn, Append and SetState fail with lease.ErrLost and store nothing.
func TestLostLeaseFencesWrites(t *testing.T) {
	dsn := pgtest.DSN(t)
	if dsn == "" {
		return
	}
	schema := pgtest.Schema(t, dsn)
	a, pa := daemon(t, dsn, schema, 0)
	b, _ := daemon(t, dsn, schema, 0)
	ctx := t.Context()
	mustBegin(t, a, "k", "turn-a")
	// A's lease lapses (as after a pause longer than the TTL); B's recovery marks the turn interrupted and B
	// starts its own.
	if _, err := pa.Exec(ctx, "UPDATE zc_leases SET expires_at = now() - interval '1 second'"); err != nil {
		t.Fatal(err)
	}
	if n, err := b.InterruptRunning(ctx); err != nil || n != 1 {
		t.Fatalf("recovery of a lapsed turn: %d, %v", n, err)
	}
	if m, _ := b.Meta(ctx, "k"); !m.Interrupted || m.InterruptedTurnID != "turn-a" || m.State != "idle" {
		t.Fatalf("after recovery: %+v", m)
	}
	mustBegin(t, b, "k", "turn-b")
	_, err := a.EndTurn(ctx, "k", "assistant", "late answer", t0, "idle")
	if !errors.Is(err, lease.ErrLost) {
		t.Errorf("A's EndTurn after losing the session: %v, want lease.ErrLost", err)
	}
	// Having learnt it lost the turn, A owns nothing there: B's running turn refuses A's writes.
	_, err = a.Append(ctx, "k", "tool", "late tool", t0)
	busy(t, err, b.Holder())
	busy(t, a.SetState(ctx, "k", "error", "", nil), b.Holder())
	_, err = a.EndTurn(ctx, "k", "assistant", "late again", t0, "idle")
	busy(t, err, b.Holder())
	all, _ := b.All(ctx, "k")
	for _, m := range all {
		if strings.HasPrefix(m.Content, "late") {
			t.Fatalf("a write of the daemon that lost the lease was stored: %+v", all)
		}
	}
	if m, _ := b.Meta(ctx, "k"); m.State != "running" || m.TurnID != "turn-b" {
		t.Fatalf("B's turn was disturbed: %+v", m)
	}
	if _, err := b.EndTurn(ctx, "k", "assistant", "b's answer", t0, "idle"); err != nil {
		t.Fatal(err)
	}
}

// The owner renews its lease while the turn runs, however long that is: past several TTLs the other daemon is
// still refused and its recovery leaves the turn alone.
func TestLeaseRenewedWhileTurnRuns(t *testing.T) {
	dsn := pgtest.DSN(t)
	if dsn == "" {
		return
	}
	schema := pgtest.Schema(t, dsn)
	const ttl = 300 * time.Millisecond
	a, pa := daemon(t, dsn, schema, ttl)
	b, _ := daemon(t, dsn, schema, ttl)
	ctx := t.Context()
	mustBegin(t, a, "k", "turn-a")
	first := leaseExpiry(t, pa, "k")
	// Wait for expiries several TTLs past the first: only renewals move it.
	waitFor(t, "the lease renewed past three TTLs", func() bool { return leaseExpiry(t, pa, "k").After(first.Add(3 * ttl)) })
	_, err := b.BeginTurn(ctx, "k", "a", "", "turn-b", t0, "")
	busy(t, err, a.Holder())
	if n, err := b.InterruptRunning(ctx); err != nil || n != 0 {
		t.Fatalf("recovery of a renewed turn: %d, %v", n, err)
	}
	if _, err := a.EndTurn(ctx, "k", "assistant", "done", t0, "idle"); err != nil {
		t.Fatal(err)
	}
	// EndTurn gave the lease up at once: B needs no TTL to pass.
	mustBegin(t, b, "k", "turn-b")
}

func leaseExpiry(t *testing.T, p *pgdb.Pool, key string) time.Time {
	t.Helper()
	rows, err := p.Query(t.Context(), "SELECT expires_at FROM zc_leases WHERE name = $1", "chat-turn:"+key)
	if err != nil || len(rows) != 1 {
		t.Fatalf("lease row of %s: %v %v", key, rows, err)
	}
	at, err := rows[0].Time(0)
	if err != nil {
		t.Fatal(err)
	}
	return at
}

// A daemon process killed with SIGKILL mid-turn: the other daemon is refused while the dead one's lease lasts,
// then, within the bounded TTL, its recovery marks the turn interrupted and it may run the session.
func TestKilledOwnerLosesTheSession(t *testing.T) {
	dsn := pgtest.DSN(t)
	if dsn == "" {
		return
	}
	schema := pgtest.Schema(t, dsn)
	const ttl = 500 * time.Millisecond
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperDaemonHoldsTurn$", "-test.count=1")
	cmd.Env = append(os.Environ(), "ZC_PGCHAT_HELPER=1", "ZC_PGCHAT_SCHEMA="+schema, fmt.Sprintf("ZC_PGCHAT_TTL=%d", ttl))
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	sc := bufio.NewScanner(out)
	holder := ""
	for sc.Scan() {
		if h, ok := strings.CutPrefix(sc.Text(), "READY "); ok {
			holder = h
			break
		}
	}
	if holder == "" {
		t.Fatalf("the helper daemon did not begin its turn (%v)", sc.Err())
	}
	b, _ := daemon(t, dsn, schema, ttl)
	ctx := t.Context()
	_, err = b.BeginTurn(ctx, "k", "a", "", "turn-b", t0, "")
	busy(t, err, holder)
	if err := cmd.Process.Kill(); err != nil { // SIGKILL: no deferred cleanup, the connection just drops
		t.Fatal(err)
	}
	_ = cmd.Wait()
	waitFor(t, "recovery of the killed daemon's turn", func() bool {
		n, err := b.InterruptRunning(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return n == 1
	})
	m, err := b.Meta(ctx, "k")
	if err != nil || !m.Interrupted || m.InterruptedTurnID != "turn-dead" || m.State != "idle" || m.MessageCount != 1 {
		t.Fatalf("after recovery: %+v %v", m, err)
	}
	mustBegin(t, b, "k", "turn-b")
	if _, err := b.EndTurn(ctx, "k", "assistant", "answer", t0, "idle"); err != nil {
		t.Fatal(err)
	}
}

// TestHelperDaemonHoldsTurn is the daemon TestKilledOwnerLosesTheSession kills: run only as its child process,
// it begins a turn, says so and waits to be killed.
func TestHelperDaemonHoldsTurn(t *testing.T) {
	if os.Getenv("ZC_PGCHAT_HELPER") != "1" {
		return // not a test of its own
	}
	var ttl time.Duration
	fmt.Sscan(os.Getenv("ZC_PGCHAT_TTL"), &ttl)
	p, err := pgdb.Open(context.Background(), os.Getenv("ZEROCLAW_TEST_PG_DSN"), pgdb.Options{Schema: os.Getenv("ZC_PGCHAT_SCHEMA")})
	if err != nil {
		t.Fatal(err)
	}
	s, err := pgchat.Open(context.Background(), p, pgchat.Options{TurnTTL: ttl})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.BeginTurn(context.Background(), "k", "a", "", "turn-dead", t0, "the dead daemon's prompt"); err != nil {
		t.Fatal(err)
	}
	fmt.Printf("READY %s\n", s.Holder())
	time.Sleep(10 * time.Minute)
}

// A daemon that shuts down cleanly mid-turn gives its lease up: another daemon's recovery (RunRecovery, as a
// daemon runs it) marks the turn interrupted without waiting for the TTL, and a key too long for the store is
// refused with ErrInvalid before anything is written.
func TestCloseReleasesAndRecoveryRuns(t *testing.T) {
	dsn := pgtest.DSN(t)
	if dsn == "" {
		return
	}
	schema := pgtest.Schema(t, dsn)
	a, _ := daemon(t, dsn, schema, time.Hour) // only a release frees the session before the test ends
	b, _ := daemon(t, dsn, schema, time.Hour)
	ctx := t.Context()
	mustBegin(t, a, "k", "turn-a")
	_, err := b.BeginTurn(ctx, "k", "a", "", "turn-b", t0, "")
	busy(t, err, a.Holder())
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	rctx, stop := context.WithCancel(ctx)
	defer stop()
	done := make(chan struct{})
	go func() {
		defer close(done)
		b.RunRecovery(rctx, 20*time.Millisecond, func(_ int, err error) {
			if err != nil {
				t.Error(err)
			}
		})
	}()
	waitFor(t, "recovery of the closed daemon's turn", func() bool {
		m, err := b.Meta(ctx, "k")
		return err == nil && m.Interrupted && m.InterruptedTurnID == "turn-a" && m.State == "idle"
	})
	stop()
	<-done
	mustBegin(t, b, "k", "turn-b")

	long := strings.Repeat("x", pgchat.MaxKeyBytes+1)
	if _, err := b.Append(ctx, long, "user", "x", t0); !errors.Is(err, store.ErrInvalid) {
		t.Fatalf("a key over MaxKeyBytes: %v, want ErrInvalid", err)
	}
	if _, err := b.BeginTurn(ctx, "nul\x00key", "a", "", "t", t0, ""); !errors.Is(err, store.ErrInvalid) {
		t.Fatalf("a key with NUL: %v, want ErrInvalid", err)
	}
	if l, err := b.List(ctx, "", 0); err != nil || len(l) != 1 {
		t.Fatalf("refused keys left rows: %+v %v", l, err)
	}
}

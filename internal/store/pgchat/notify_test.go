package pgchat_test

import (
	"strings"
	"testing"
	"time"

	"github.com/zeroclaw-go/zeroclaw/internal/pgdb/pgtest"
	"github.com/zeroclaw-go/zeroclaw/internal/store/pgchat"
)

func next(t *testing.T, l *pgchat.Listener) pgchat.Event {
	t.Helper()
	select {
	case ev, ok := <-l.Events():
		if !ok {
			t.Fatal("the events channel closed")
		}
		return ev
	case <-time.After(60 * time.Second):
		t.Fatal("after 60s: no event arrived")
	}
	return pgchat.Event{}
}

// Appends on one daemon reach a listener on another daemon's connection, committed ones only, with the
// session's key (or, for a key too long to carry, its digest) and the message's index; junk another client
// sends on the channel is ignored.
func TestEventsAcrossDaemons(t *testing.T) {
	dsn := pgtest.DSN(t)
	if dsn == "" {
		return
	}
	schema := pgtest.Schema(t, dsn)
	a, pa := daemon(t, dsn, schema, 0)
	b, pb := daemon(t, dsn, schema, 0)
	ctx := t.Context()
	l, err := pgchat.Listen(ctx, pb)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()

	mustAppend := func(s *pgchat.Store, key, content string) int {
		t.Helper()
		i, err := s.Append(ctx, key, "user", content, t0)
		if err != nil {
			t.Fatal(err)
		}
		return i
	}
	mustAppend(a, "k", "one")
	if ev := next(t, l); ev.Gap || ev.Origin != a.Holder() || ev.Key != "k" || ev.Index != 0 {
		t.Fatalf("first event %+v", ev)
	}
	// Junk on the channel (any client of the database may NOTIFY) is not an event.
	for _, junk := range []string{"junk", `{"o":"x"}`, `{"k":`, strings.Repeat("{", 7000)} {
		if _, err := pa.Exec(ctx, "SELECT pg_notify('zc_chat', $1)", junk); err != nil {
			t.Fatal(err)
		}
	}
	// A refused write (B's turn owns the session) notifies nothing: its transaction rolled back.
	mustBegin(t, b, "k", "turn-b")
	if ev := next(t, l); ev.Origin != b.Holder() || ev.Key != "k" || ev.Index != 1 {
		t.Fatalf("BeginTurn's prompt event %+v", ev)
	}
	if _, err := a.Append(ctx, "k", "user", "refused", t0); err == nil {
		t.Fatal("A appended into B's running turn")
	}
	if _, err := b.EndTurn(ctx, "k", "assistant", "answer", t0, "idle"); err != nil {
		t.Fatal(err)
	}
	if ev := next(t, l); ev.Origin != b.Holder() || ev.Index != 2 {
		t.Fatalf("after a refused append the next event is %+v, want EndTurn's index 2", ev)
	}
	// A key whose JSON escape would pass the payload bound (control characters are six bytes each) is named by
	// its digest; a plain key of the longest size the store takes is carried as it is.
	escaped := strings.Repeat("\x01", pgchat.MaxKeyBytes)
	mustAppend(a, escaped, "escaped key")
	if ev := next(t, l); ev.Key != "" || ev.KeyDigest != pgchat.KeyDigest(escaped) || ev.Index != 0 {
		t.Fatalf("escaped key event %+v", ev)
	}
	plain := strings.Repeat("k", pgchat.MaxKeyBytes)
	mustAppend(a, plain, "long key")
	if ev := next(t, l); ev.Key != plain || ev.Index != 0 {
		t.Fatalf("long key event %+v", ev)
	}
}

// A listener whose connection is cut reconnects and says events may have been missed (a Gap), then delivers
// again; one whose subscriber does not keep up drops events, bounded, and says so with a Gap too.
func TestListenerGaps(t *testing.T) {
	dsn := pgtest.DSN(t)
	if dsn == "" {
		return
	}
	schema := pgtest.Schema(t, dsn)
	a, pa := daemon(t, dsn, schema, 0)
	ctx := t.Context()
	l, err := pgchat.Listen(ctx, pa)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if _, err := a.Append(ctx, "k", "user", "before", t0); err != nil {
		t.Fatal(err)
	}
	if ev := next(t, l); ev.Index != 0 {
		t.Fatalf("%+v", ev)
	}
	// The server ends the listening connection (an admin, a restart, a network cut).
	if _, err := pa.Exec(ctx, `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
WHERE datname = current_database() AND query LIKE 'LISTEN %' AND pid <> pg_backend_pid()`); err != nil {
		t.Fatal(err)
	}
	if ev := next(t, l); !ev.Gap {
		t.Fatalf("after the cut: %+v, want a gap", ev)
	}
	// Once it listens again, appends arrive again (an append made before it reconnected may be lost: that is
	// what the gap said).
	deadline := time.Now().Add(60 * time.Second)
	for i := 1; ; i++ {
		if _, err := a.Append(ctx, "k", "user", "after", t0); err != nil {
			t.Fatal(err)
		}
		select {
		case ev := <-l.Events():
			if !ev.Gap && ev.Key == "k" {
				goto delivered
			}
		case <-time.After(200 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatal("after 60s: the listener did not deliver again after a reconnect")
		}
	}
delivered:
	// A subscriber that reads nothing while many appends happen finds a gap, then the newest events: the last
	// append is always delivered.
	for i := range 400 {
		if _, err := a.Append(ctx, "burst", "user", "x", t0); err != nil {
			t.Fatalf("append %d: %v", i, err)
		}
	}
	if _, err := a.Append(ctx, "last", "user", "x", t0); err != nil {
		t.Fatal(err)
	}
	got, gap := 0, false
	for {
		ev := next(t, l)
		if ev.Gap {
			gap = true
			continue
		}
		if ev.Key == "last" {
			break
		}
		got++
	}
	if !gap || got >= 400 {
		t.Fatalf("a slow subscriber got %d of 400 burst events, gap %v: want fewer and a gap", got, gap)
	}
	l.Close()
	if _, ok := <-l.Events(); ok {
		t.Fatal("Events stays open after Close")
	}
}

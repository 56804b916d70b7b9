package pgchat_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/zeroclaw-go/zeroclaw/internal/pgdb/pgtest"
	"github.com/zeroclaw-go/zeroclaw/internal/store"
	"github.com/zeroclaw-go/zeroclaw/internal/store/pgchat"
)

func openSQLite(t *testing.T, p string) *store.ChatStore {
	t.Helper()
	s, err := store.OpenChat(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// sameSessions fails unless a and b hold the same sessions: metadata and messages (timestamps to the
// microsecond).
func sameSessions(t *testing.T, a, b store.Chat) {
	t.Helper()
	ctx := t.Context()
	la, err := a.List(ctx, "", 0)
	if err != nil {
		t.Fatal(err)
	}
	lb, err := b.List(ctx, "", 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(la) != len(lb) {
		t.Fatalf("%d sessions against %d", len(la), len(lb))
	}
	norm := func(m store.SessionMeta) store.SessionMeta {
		m.CreatedAt, m.LastActivity = m.CreatedAt.UTC().Truncate(time.Microsecond), m.LastActivity.UTC().Truncate(time.Microsecond)
		if m.TurnStartedAt != nil {
			t := m.TurnStartedAt.UTC().Truncate(time.Microsecond)
			m.TurnStartedAt = &t
		}
		if m.Key == "orphan" {
			// Upstream's orphan has a metadata counter (0) that disagrees with its rows; the copy counts rows.
			m.MessageCount = -1
		}
		return m
	}
	for i := range la {
		if !reflect.DeepEqual(norm(la[i]), norm(lb[i])) {
			t.Errorf("session %d: %+v against %+v", i, la[i], lb[i])
			continue
		}
		ma, _ := a.All(ctx, la[i].Key)
		mb, _ := b.All(ctx, lb[i].Key)
		if len(ma) != len(mb) {
			t.Errorf("%s: %d messages against %d", la[i].Key, len(ma), len(mb))
			continue
		}
		for j := range ma {
			ma[j].CreatedAt, mb[j].CreatedAt = ma[j].CreatedAt.UTC().Truncate(time.Microsecond), mb[j].CreatedAt.UTC().Truncate(time.Microsecond)
			if ma[j] != mb[j] {
				t.Errorf("%s message %d: %+v against %+v", la[i].Key, j, ma[j], mb[j])
			}
		}
	}
}

// SQLite → PostgreSQL → SQLite keeps every session as it was; a second run finds everything copied; a session
// the destination holds differently is a conflict, not overwritten.
func TestCopyBothWays(t *testing.T) {
	dsn := pgtest.DSN(t)
	if dsn == "" {
		return
	}
	ctx := t.Context()
	src := openSQLite(t, filepath.Join(t.TempDir(), "sessions.db"))
	ns := t0.Add(123456789 * time.Nanosecond)
	if _, _, err := src.EnsureSession(ctx, "rpc_owned", "coder", "alice", t0); err != nil {
		t.Fatal(err)
	}
	for i := range 250 {
		if _, err := src.Append(ctx, "rpc_owned", "user", fmt.Sprintf("message %d ünï 😀 'q' \\", i), ns.Add(time.Duration(i)*time.Second)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := src.BeginTurn(ctx, "running", "a", "", "turn-1", t0, "left running"); err != nil {
		t.Fatal(err)
	}
	if _, _, err := src.EnsureSession(ctx, "empty", "", "", t0); err != nil {
		t.Fatal(err)
	}
	if err := src.StampChannelSession(ctx, "telegram_1_2", "tg", "room", "sender", t0); err != nil {
		t.Fatal(err)
	}
	if _, err := src.Append(ctx, "telegram_1_2", "user", "from a channel", t0); err != nil {
		t.Fatal(err)
	}
	// An upstream orphan: messages without a metadata row.
	if _, err := src.Seam().Writer().ExecContext(ctx, "INSERT INTO sessions (session_key, role, content, created_at) VALUES ('orphan', 'user', 'alone', ?)", store.FormatTime(t0)); err != nil {
		t.Fatal(err)
	}

	schema := pgtest.Schema(t, dsn)
	pg, _ := daemon(t, dsn, schema, 0)
	var calls int
	st, err := pgchat.CopyToPostgres(ctx, src, pg, func(done, total int) { calls++ })
	if err != nil {
		t.Fatal(err)
	}
	if st.Sessions != 5 || st.Copied != 5 || st.Skipped != 0 || st.Messages != 253 || calls != 5 {
		t.Fatalf("first copy: %+v (%d progress calls)", st, calls)
	}
	if m, err := pg.Meta(ctx, "orphan"); err != nil || m.MessageCount != 1 || !m.CreatedAt.Equal(t0) {
		t.Fatalf("the orphan in PostgreSQL: %+v %v", m, err)
	}
	// Compare through the Chat interface, after the SQLite side's orphan got its row (as List shows rows).
	if _, _, err := src.EnsureSession(ctx, "orphan", "", "", t0); err != nil {
		t.Fatal(err)
	}
	sameSessions(t, src, pg)
	// The copy's search index works like one built by appends.
	if l, err := pg.List(ctx, "channel", 0); err != nil || len(l) != 1 || l[0].Key != "telegram_1_2" {
		t.Fatalf("search after the copy: %+v %v", l, err)
	}
	// Resumed (or repeated): nothing to copy, everything verified.
	st, err = pgchat.CopyToPostgres(ctx, src, pg, nil)
	if err != nil || st.Copied != 0 || st.Skipped != 5 || st.Sessions != 5 {
		t.Fatalf("second copy: %+v %v", st, err)
	}

	// And back, into an empty SQLite file.
	back := openSQLite(t, filepath.Join(t.TempDir(), "back.db"))
	st, err = pgchat.CopyToSQLite(ctx, pg, back, nil)
	if err != nil || st.Copied != 5 || st.Messages != 253 {
		t.Fatalf("copy back: %+v %v", st, err)
	}
	sameSessions(t, back, pg)
	if l, err := back.List(ctx, "channel", 0); err != nil || len(l) != 1 {
		t.Fatalf("search in the SQLite copy: %+v %v", l, err)
	}

	// A daemon wrote on in PostgreSQL: copying the old SQLite file again must not overwrite that.
	if _, err := pg.Append(ctx, "empty", "user", "newer", t0); err != nil {
		t.Fatal(err)
	}
	if _, err := pgchat.CopyToPostgres(ctx, src, pg, nil); !errors.Is(err, pgchat.ErrConflict) {
		t.Fatalf("copy over a changed session: %v, want ErrConflict", err)
	}
	if all, _ := pg.All(ctx, "empty"); len(all) != 1 || all[0].Content != "newer" {
		t.Fatalf("the conflicting session was changed: %+v", all)
	}
}

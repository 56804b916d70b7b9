package session

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/zeroclaw-go/zeroclaw/internal/api"
	"github.com/zeroclaw-go/zeroclaw/internal/clock/clocktest"
	"github.com/zeroclaw-go/zeroclaw/internal/store"
)

// mapSizes reports how many entries the per-id maps hold.
func (m *Manager) mapSizes() (sessions, locks int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.sessions), len(m.locks)
}

func listIDs(t *testing.T, m *Manager, o Owner) []string {
	t.Helper()
	res, err := m.List(t.Context(), o, api.SessionListParams{})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, s := range res.Sessions {
		ids = append(ids, s.SessionID)
	}
	slices.Sort(ids)
	return ids
}

// Ownership is stored with the session: after a restart its non-admin owner lists, reads and revives it,
// another non-admin principal can do none of that, and an admin reviving it does not take it over.
func TestOwnershipSurvivesRestart(t *testing.T) {
	e := newEnv(t, nil)
	ctx := t.Context()
	alice := Owner{Principal: "alice", ConnID: 1}
	mallory := Owner{Principal: "mallory", ConnID: 2}
	e.open(alice, api.SessionNewParams{SessionID: "alices"})
	if _, err := e.m.Prompt(ctx, alice, api.SessionPromptParams{SessionID: "alices", Prompt: "mine"}, &sink{}); err != nil {
		t.Fatal(err)
	}
	e.open(admin, api.SessionNewParams{SessionID: "operators"})
	e.restart()

	if got := listIDs(t, e.m, alice); !slices.Equal(got, []string{"alices"}) {
		t.Fatalf("alice lists %v after a restart, want [alices]", got)
	}
	if got := listIDs(t, e.m, mallory); len(got) != 0 {
		t.Fatalf("mallory lists %v", got)
	}
	if got := listIDs(t, e.m, admin); !slices.Equal(got, []string{"alices", "operators"}) {
		t.Fatalf("admin lists %v", got)
	}
	if _, err := e.m.Messages(ctx, mallory, api.SessionMessagesParams{SessionID: "alices"}); !errors.Is(err, ErrNotOwned) {
		t.Fatalf("mallory reads alice's history: %v", err)
	}
	if _, err := e.m.New(ctx, mallory, api.SessionNewParams{SessionID: "alices"}); !errors.Is(err, ErrNotOwned) {
		t.Fatalf("mallory revives alice's session: %v", err)
	}
	if _, err := e.m.Delete(ctx, mallory, "alices"); !errors.Is(err, ErrNotOwned) {
		t.Fatalf("mallory deletes alice's session: %v", err)
	}
	if _, err := e.m.New(ctx, alice, api.SessionNewParams{SessionID: "operators"}); !errors.Is(err, ErrNotOwned) {
		t.Fatalf("alice revives the operator's session: %v", err)
	}

	// An admin revives it (and closes it); it stays alice's.
	e.open(admin, api.SessionNewParams{SessionID: "alices"})
	if _, err := e.m.Prompt(ctx, alice, api.SessionPromptParams{SessionID: "alices", Prompt: "still mine"}, &sink{}); err != nil {
		t.Fatalf("alice prompts her session revived by an admin: %v", err)
	}
	e.restart()
	if back := e.open(alice, api.SessionNewParams{SessionID: "alices"}); back.MessageCount != 4 {
		t.Fatalf("alice revives with %d messages, want 4", back.MessageCount)
	}

	// Delete removes the ownership with the session: the id is free for anyone afterwards.
	if _, err := e.m.Delete(ctx, alice, "alices"); err != nil {
		t.Fatal(err)
	}
	if res := e.open(mallory, api.SessionNewParams{SessionID: "alices"}); res.MessageCount != 0 {
		t.Fatalf("a new session under a deleted id: %+v", res)
	}
	if meta, err := e.chat.Meta(ctx, store.RPCKey("alices")); err != nil || meta.Owner != "mallory" {
		t.Fatalf("new session under a deleted id: %+v %v, want owner mallory", meta, err)
	}
}

// The per-id maps hold only what is in use: after sessions are opened, used, and then closed, deleted or
// evicted, both are empty again, including for an id whose dropped incarnation's turn outlived it.
func TestPerSessionMapsArePruned(t *testing.T) {
	clk := clocktest.New(time.Unix(1_700_000_000, 0))
	e := newEnv(t, fullProfile, func(o *Options) { o.Clock = clk; o.IdleTTL = time.Minute })
	ctx := t.Context()
	const n = 30
	for i := range n {
		id := fmt.Sprintf("s-%d", i)
		e.open(admin, api.SessionNewParams{SessionID: id})
		if i%2 == 0 {
			e.prompt(id, "hello", &sink{})
		}
	}
	if s, l := e.m.mapSizes(); s != n || l != n {
		t.Fatalf("with %d live sessions: %d sessions, %d locks", n, s, l)
	}
	for i := range n {
		id := fmt.Sprintf("s-%d", i)
		switch i % 3 {
		case 0:
			if _, err := e.m.Close(admin, id); err != nil {
				t.Fatal(err)
			}
		case 1:
			if _, err := e.m.Delete(ctx, admin, id); err != nil {
				t.Fatal(err)
			}
		}
	}
	// The rest go idle past the TTL and are evicted by the next New; that one is closed last.
	clk.Advance(2 * time.Minute)
	e.open(admin, api.SessionNewParams{SessionID: "last"})
	if s, l := e.m.mapSizes(); s != 1 || l != 1 {
		t.Fatalf("after close, delete and eviction: %d sessions, %d locks; want only \"last\"", s, l)
	}
	// Deleting ids never opened, or opened and gone, leaves nothing behind either.
	for _, id := range []string{"never-opened", "s-0"} {
		if _, err := e.m.Delete(ctx, admin, id); err != nil {
			t.Fatal(err)
		}
	}

	// A turn of a closed incarnation keeps the lock in use until it ends.
	held, hold := make(chan struct{}), make(chan struct{})
	sk := &sink{onUpdate: func(ev api.SessionUpdate) {
		if ev.Type == api.UpdateToolCall {
			close(held)
			<-hold
		}
	}}
	done := make(chan error, 1)
	go func() {
		_, err := e.m.Prompt(ctx, admin, api.SessionPromptParams{SessionID: "last", Prompt: `/tool shell {"command":"true"}`}, sk)
		done <- err
	}()
	<-held
	if _, err := e.m.Close(admin, "last"); err != nil {
		t.Fatal(err)
	}
	if s, l := e.m.mapSizes(); s != 0 || l != 1 {
		t.Fatalf("closed with its turn still running: %d sessions, %d locks; want 0 and 1", s, l)
	}
	close(hold)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if s, l := e.m.mapSizes(); s != 0 || l != 0 {
		t.Fatalf("after everything ended: %d sessions, %d locks; want none", s, l)
	}
}

// Delete, revive (session/new), prompt and close racing on one id: no deadlock, no race (go test -race), the
// store stays consistent (a stored session always has its owner; no messages without a session), and when
// everything has ended the per-id maps are empty.
func TestDeleteReviveAndPromptRaceOnOneID(t *testing.T) {
	e := newEnv(t, fullProfile)
	ctx := t.Context()
	alice := Owner{Principal: "alice", ConnID: 1}
	const id, rounds = "contended", 25
	e.open(alice, api.SessionNewParams{SessionID: id})
	var wg sync.WaitGroup
	fail := func(op string, err error, allowed ...error) {
		for _, a := range allowed {
			if errors.Is(err, a) {
				return
			}
		}
		if err != nil {
			t.Errorf("%s: %v", op, err)
		}
	}
	for w := range 3 {
		wg.Add(4)
		go func() {
			defer wg.Done()
			for range rounds {
				_, err := e.m.Delete(ctx, alice, id)
				fail("delete", err, ErrBusy)
			}
		}()
		go func() {
			defer wg.Done()
			for range rounds {
				_, err := e.m.New(ctx, alice, api.SessionNewParams{SessionID: id})
				fail("new", err)
			}
		}()
		go func() {
			defer wg.Done()
			for i := range rounds {
				prompt := fmt.Sprintf("w%d-%d", w, i)
				if i%3 == 0 {
					prompt = `/tool shell {"command":"true"}`
				}
				_, err := e.m.Prompt(ctx, alice, api.SessionPromptParams{SessionID: id, Prompt: prompt}, &sink{})
				// A close or delete may cancel a turn before it starts (loading its history).
				fail("prompt", err, ErrNotFound, ErrBusy, context.Canceled)
			}
		}()
		go func() {
			defer wg.Done()
			for range rounds {
				_, err := e.m.Close(alice, id)
				fail("close", err, ErrNotFound)
			}
		}()
	}
	wg.Wait()

	meta, err := e.chat.Meta(ctx, store.RPCKey(id))
	switch {
	case err == nil:
		if meta.Owner != "alice" {
			t.Fatalf("stored session owned by %q, want alice", meta.Owner)
		}
	case errors.Is(err, store.ErrNotFound):
		if msgs, err := e.chat.All(ctx, store.RPCKey(id)); err != nil || len(msgs) != 0 {
			t.Fatalf("no session but %d messages (%v)", len(msgs), err)
		}
	default:
		t.Fatal(err)
	}
	if _, err := e.m.Delete(ctx, alice, id); err != nil {
		t.Fatal(err)
	}
	if s, l := e.m.mapSizes(); s != 0 || l != 0 {
		t.Fatalf("after the race and a final delete: %d sessions, %d locks; want none", s, l)
	}
}

package store

import (
	"testing"
	"time"
)

// Running turns left by a previous process are marked idle at start, with the interrupted turn noted until
// the next state change.
func TestInterruptRunning(t *testing.T) {
	s, p := openTestChat(t)
	ctx := t.Context()
	for _, k := range []string{"running", "running-no-turn", "idle", "error"} {
		if _, _, err := s.EnsureSession(ctx, k, "a", "", t0); err != nil {
			t.Fatal(err)
		}
	}
	started := t0.Add(time.Second)
	for _, st := range []struct{ key, state, turn string }{
		{"running", "running", "turn-1"}, {"running-no-turn", "running", ""}, {"error", "error", ""},
	} {
		if err := s.SetState(ctx, st.key, st.state, st.turn, &started); err != nil {
			t.Fatal(err)
		}
	}
	// The marks survive a reopen, as they must across a crash.
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s, err := OpenChat(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()

	n, err := s.InterruptRunning(ctx)
	if err != nil || n != 2 {
		t.Fatalf("InterruptRunning = %d, %v; want 2 sessions", n, err)
	}
	want := map[string]SessionMeta{
		"running":         {State: "idle", Interrupted: true, InterruptedTurnID: "turn-1"},
		"running-no-turn": {State: "idle", Interrupted: true},
		"idle":            {State: "idle"},
		"error":           {State: "error", TurnStartedAt: &started},
	}
	rows, err := s.List(ctx, "", 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != len(want) {
		t.Fatalf("List: %d rows", len(rows))
	}
	for _, m := range rows {
		w := want[m.Key]
		if m.State != w.State || m.TurnID != "" || m.Interrupted != w.Interrupted ||
			m.InterruptedTurnID != w.InterruptedTurnID || (m.TurnStartedAt == nil) != (w.TurnStartedAt == nil) {
			t.Errorf("%s after InterruptRunning: %+v, want %+v", m.Key, m, w)
		}
	}
	if n, err := s.InterruptRunning(ctx); err != nil || n != 0 {
		t.Fatalf("second InterruptRunning = %d, %v; want 0", n, err)
	}

	// The next turn replaces the note.
	if err := s.SetState(ctx, "running", "running", "turn-2", &started); err != nil {
		t.Fatal(err)
	}
	m, err := s.Meta(ctx, "running")
	if err != nil {
		t.Fatal(err)
	}
	if m.Interrupted || m.InterruptedTurnID != "" || m.TurnID != "turn-2" {
		t.Fatalf("after a new turn: %+v", m)
	}
}

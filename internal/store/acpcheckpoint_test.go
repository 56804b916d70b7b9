package store

import (
	"errors"
	"testing"
	"time"
)

// A turn left in progress is closed once: its prompt and one interruption marker are appended and the turn is
// cleared, so a second recovery appends nothing.
func TestACPRecoverTurn(t *testing.T) {
	s, _ := openTestACP(t)
	t0 := time.Date(2025, 3, 1, 10, 0, 0, 0, time.UTC)
	mustCreateACP(t, s, "r1", t0)
	if id, err := s.RecoverTurn(t.Context(), "r1", "marker", t0); err != nil || id != "" {
		t.Fatalf("RecoverTurn with no turn = %q, %v", id, err)
	}
	if err := s.BeginTurn(t.Context(), "r1", "turn-9", "the question", t0); err != nil {
		t.Fatal(err)
	}
	for i, want := range []string{"turn-9", ""} {
		if id, err := s.RecoverTurn(t.Context(), "r1", "marker", t0.Add(time.Minute)); err != nil || id != want {
			t.Fatalf("RecoverTurn #%d = %q, %v; want %q", i+1, id, err, want)
		}
	}
	msgs, err := s.Messages(t.Context(), "r1")
	if err != nil || len(msgs) != 2 || msgs[0].Role != "user" || msgs[0].Content != "the question" ||
		msgs[1].Role != RoleInterruption || msgs[1].Content != "marker" {
		t.Fatalf("messages after recovery = %+v, %v", msgs, err)
	}
	if cp, ok, err := s.Checkpoint(t.Context(), "r1"); err != nil || !ok || cp.TurnID != "" {
		t.Fatalf("checkpoint after recovery = %+v %v %v", cp, ok, err)
	}
}

// Compact writes a new generation with the snapshot and its boundary; the transcript is untouched; a boundary
// outside the session and a non-array snapshot are refused.
func TestACPCompact(t *testing.T) {
	s, _ := openTestACP(t)
	t0 := time.Date(2025, 3, 1, 10, 0, 0, 0, time.UTC)
	mustCreateACP(t, s, "c1", t0)
	mustCreateACP(t, s, "c2", t0)
	if err := s.BeginTurn(t.Context(), "c1", "t1", "q", t0); err != nil {
		t.Fatal(err)
	}
	msgs := []ACPMessage{{Role: "user", Content: "q"}, {Role: "assistant", Content: "a"}}
	if err := s.AppendTurn(t.Context(), "c1", msgs, t0); err != nil {
		t.Fatal(err)
	}
	other := []ACPMessage{{Role: "user", Content: "x"}}
	if err := s.AppendTurn(t.Context(), "c2", other, t0); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Compact(t.Context(), "c1", `[]`, other[0].ID, t0); !errors.Is(err, ErrInvalid) {
		t.Fatalf("a boundary of another session: %v", err)
	}
	if _, err := s.Compact(t.Context(), "c1", `{}`, msgs[1].ID, t0); !errors.Is(err, ErrInvalid) {
		t.Fatalf("a snapshot that is not an array: %v", err)
	}
	gen, err := s.Compact(t.Context(), "c1", `[{"role":"assistant","content":"a"}]`, msgs[1].ID, t0)
	if err != nil || gen != 1 {
		t.Fatalf("Compact = %d, %v; want generation 1", gen, err)
	}
	cp, ok, err := s.Checkpoint(t.Context(), "c1")
	if err != nil || !ok || cp.Generation != 1 || cp.Snapshot == nil || *cp.Snapshot != `[{"role":"assistant","content":"a"}]` ||
		cp.BoundaryMessageID != msgs[1].ID {
		t.Fatalf("checkpoint = %+v, %v, %v", cp, ok, err)
	}
	if all, err := s.Messages(t.Context(), "c1"); err != nil || len(all) != 2 {
		t.Fatalf("transcript after Compact = %+v, %v", all, err)
	}
}

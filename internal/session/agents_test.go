package session

import (
	"errors"
	"testing"

	"github.com/zeroclaw-go/zeroclaw/internal/api"
)

// While an agent is held for a rename, no session can be opened or revived on it; other agents are not held up.
func TestHoldAgentBlocksNewSessions(t *testing.T) {
	e := newEnv(t, nil)
	admin := Owner{Principal: "op", Admin: true}
	e.open(admin, api.SessionNewParams{SessionID: "s1"})
	if _, err := e.m.HoldAgent("default"); !errors.Is(err, ErrInvalid) {
		t.Fatalf("hold with a live session: %v", err)
	}
	if _, err := e.m.Close(admin, "s1"); err != nil {
		t.Fatal(err)
	}
	release, err := e.m.HoldAgent("default")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []api.SessionNewParams{{SessionID: "s1"}, {SessionID: "s2"}} {
		if _, err := e.m.New(t.Context(), admin, p); !errors.Is(err, ErrInvalid) {
			t.Fatalf("New %s while held: %v", p.SessionID, err)
		}
	}
	release()
	e.open(admin, api.SessionNewParams{SessionID: "s1"})
	if n := e.m.LiveByAgent()["default"]; n != 1 {
		t.Fatalf("live %d", n)
	}
}

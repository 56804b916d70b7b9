package daemon

import (
	"testing"
	"time"

	"github.com/zeroclaw-go/zeroclaw/internal/lease"
	"github.com/zeroclaw-go/zeroclaw/internal/pgdb/pgtest"
)

// Two daemons on one database: the first to lead the heartbeat keeps it from slot to slot, the other is told
// who leads; when the leader stops renewing, the other takes over once the hold lapsed.
func TestHeartbeatLeaderOnSharedDatabase(t *testing.T) {
	poolA, schema := pgtest.Open(t)
	if poolA == nil {
		return
	}
	poolB := pgtest.OpenSchema(t, pgtest.DSN(t), schema)
	a, err := lease.Open(t.Context(), poolA, "host-a:1:aaaa")
	if err != nil {
		t.Fatal(err)
	}
	b, err := lease.Open(t.Context(), poolB, "host-b:2:bbbb")
	if err != nil {
		t.Fatal(err)
	}
	la, lb := leaseLeader{a}, leaseLeader{b}
	if ok, _, err := la.Lead(t.Context(), "default", time.Minute); err != nil || !ok {
		t.Fatalf("the first daemon does not lead: %v %v", ok, err)
	}
	if ok, holder, err := lb.Lead(t.Context(), "default", time.Minute); err != nil || ok || holder != "host-a:1:aaaa" {
		t.Fatalf("the second daemon: ok %v holder %q err %v, want told host-a leads", ok, holder, err)
	}
	if ok, _, err := la.Lead(t.Context(), "default", 300*time.Millisecond); err != nil || !ok {
		t.Fatalf("the leader's next slot: %v %v", ok, err)
	}
	// Another agent's heartbeat is its own lease.
	if ok, _, err := lb.Lead(t.Context(), "other", time.Minute); err != nil || !ok {
		t.Fatalf("agent other's heartbeat: %v %v", ok, err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		ok, _, err := lb.Lead(t.Context(), "default", time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		if ok {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the second daemon never took over after the leader's hold lapsed")
		}
		time.Sleep(50 * time.Millisecond)
	}
	if ok, holder, _ := la.Lead(t.Context(), "default", time.Minute); ok || holder != "host-b:2:bbbb" {
		t.Fatalf("the old leader after the takeover: ok %v holder %q", ok, holder)
	}
}

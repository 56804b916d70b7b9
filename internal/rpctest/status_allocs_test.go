package rpctest

import (
	"bytes"
	"net"
	"testing"
)

// maxStatusAllocs bounds the heap allocations of one status round trip on the daemon's side: the inbound frame,
// its request, the boxed result. The client below allocates nothing per round trip (a fixed request, a fixed read
// buffer), so testing.AllocsPerRun counts the daemon's work. It was 17 before the status path was cut down (a
// build-info parse, the session ids collected through iterators, a pool pointer per idle wait).
const maxStatusAllocs = 4

// TestStatusRoundTripAllocs: a status round trip over the real socket allocates at most maxStatusAllocs times on
// the daemon's side. Allocation counts are deterministic, unlike timings, so this is what keeps the path lean.
func TestStatusRoundTripAllocs(t *testing.T) {
	d := Start(t)
	c, err := net.Dial("unix", d.Endpoint)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	buf := make([]byte, 64<<10)
	roundTrip := func(req []byte) []byte {
		if _, err := c.Write(req); err != nil {
			t.Fatal(err)
		}
		n := 0
		for {
			m, err := c.Read(buf[n:])
			if err != nil {
				t.Fatal(err)
			}
			n += m
			if n > 0 && buf[n-1] == '\n' {
				return buf[:n]
			}
		}
	}
	if got := roundTrip([]byte(`{"jsonrpc":"2.0","method":"initialize","params":{"protocol_version":1},"id":0}` + "\n")); !bytes.Contains(got, []byte(`"result"`)) {
		t.Fatalf("initialize answered %s", got)
	}
	req := []byte(statusReq)
	if got := roundTrip(req); !bytes.Contains(got, []byte(`"server_version"`)) {
		t.Fatalf("status answered %s", got)
	}
	for range 100 { // warm the pools
		roundTrip(req)
	}
	allocs := testing.AllocsPerRun(500, func() { roundTrip(req) })
	t.Logf("status round trip: %.1f allocations on the daemon's side", allocs)
	if allocs > maxStatusAllocs {
		t.Errorf("status round trip allocates %.1f times on the daemon's side, want at most %d", allocs, maxStatusAllocs)
	}
}

package gateway

import "testing"

// The connection cap: as configured; else 512, or half of a low fd limit (the other half is the reserve the rest
// of the daemon keeps, at most FDReserve).
func TestMaxConnectionsFor(t *testing.T) {
	for _, c := range []struct {
		configured int
		nofile     uint64
		want       int
	}{
		{0, 0, DefaultMaxConnections},
		{0, 1 << 20, DefaultMaxConnections},
		{0, 20000, DefaultMaxConnections},
		{0, 1024, DefaultMaxConnections}, // 1024 - 256 = 768, capped at 512
		{0, 600, 344},                    // 600 - 256
		{0, 256, 128},                    // the e2e test's limit
		{0, 2, 1},
		{64, 256, 64},
		{5000, 256, 5000}, // configured is taken as it is
	} {
		if got := MaxConnectionsFor(c.configured, c.nofile); got != c.want {
			t.Errorf("MaxConnectionsFor(%d, %d) = %d, want %d", c.configured, c.nofile, got, c.want)
		}
	}
}

// A body cut for its pace keeps failing: a handler that reads again never sees a shorter body end cleanly.
func TestBoundedBodyCutStaysCut(t *testing.T) {
	b := &boundedBody{timedOut: true}
	for range 2 {
		if n, err := b.Read(make([]byte, 8)); n != 0 || err != errBodyTooSlow {
			t.Fatalf("read after the cut: %d %v", n, err)
		}
	}
}

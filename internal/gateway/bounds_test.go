package gateway

import (
	"bufio"
	"net"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

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

// fakeSpare is a reserve that is given up until refilled.
type fakeSpare struct {
	missing atomic.Bool
	refills atomic.Int32
}

func (f *fakeSpare) SpareMissing() bool { return f.missing.Load() }
func (f *fakeSpare) RefillSpare() bool {
	f.refills.Add(1)
	f.missing.Store(false)
	return true
}

// While the local socket's reserved fd is given up, the connection the gateway accepts next is answered 503 and
// its fd handed back to the reserve; once the reserve is held again, connections are admitted as usual.
func TestCapListenerHandsFDsBackToTheSpare(t *testing.T) {
	inner, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer inner.Close()
	spare := &fakeSpare{}
	spare.missing.Store(true)
	var refused atomic.Int32
	ln := &capListener{Listener: inner, cap: &connCap{}, max: func() int { return 10 }, refused: func() { refused.Add(1) }, spare: spare}
	accepted := make(chan net.Conn, 1)
	go func() {
		if nc, err := ln.Accept(); err == nil {
			accepted <- nc
		}
	}()

	first, err := net.Dial("tcp", inner.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer first.Close()
	_ = first.SetReadDeadline(time.Now().Add(10 * time.Second))
	line, err := bufio.NewReader(first).ReadString('\n')
	if err != nil || !strings.Contains(line, "503") {
		t.Fatalf("the connection accepted while the reserve was missing got %q (%v), want a 503", line, err)
	}
	// The refill follows the close the client just saw.
	for deadline := time.Now().Add(10 * time.Second); spare.refills.Load() == 0 && time.Now().Before(deadline); {
		time.Sleep(time.Millisecond)
	}
	if spare.refills.Load() != 1 || refused.Load() != 1 {
		t.Fatalf("refills %d, refused %d; want 1 and 1", spare.refills.Load(), refused.Load())
	}

	second, err := net.Dial("tcp", inner.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer second.Close()
	select {
	case nc := <-accepted:
		nc.Close()
	case <-time.After(10 * time.Second):
		t.Fatal("the connection after the refill was not admitted")
	}
	if spare.refills.Load() != 1 {
		t.Fatalf("refilled %d times, want 1", spare.refills.Load())
	}
}

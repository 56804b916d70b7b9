package rpctest

import (
	"bytes"
	"runtime/pprof"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// daemonLabel is the pprof label that marks the goroutines of one test daemon: Run starts under it, and every
// goroutine the daemon starts inherits it, so a daemon's goroutines can be told apart from those of the test,
// of its clients and of other daemons running in parallel.
const daemonLabel = "rpctest_daemon"

var daemonSeq atomic.Int64

// goroutines returns the stacks of the goroutines that carry this daemon's label (the goroutine profile's
// records, each led by its count), and how many there are. The providers' requests go through
// http.DefaultTransport, whose idle keep-alive connections (persistConn loops) belong to the process and end
// when the test's fake backend closes; they are not counted.
func (d *Daemon) goroutines() (string, int) {
	var buf bytes.Buffer
	if err := pprof.Lookup("goroutine").WriteTo(&buf, 1); err != nil {
		return err.Error(), -1
	}
	mark := `"` + daemonLabel + `":"` + d.label + `"`
	var out strings.Builder
	n := 0
	for rec := range strings.SplitSeq(buf.String(), "\n\n") {
		if !strings.Contains(rec, mark) || strings.Contains(rec, "net/http.(*persistConn)") {
			continue // another daemon's, or an idle keep-alive connection of the process-wide http transport
		}
		count := 1 // a record starts "<count> @ <pcs>"
		if head, _, ok := strings.Cut(rec, " @ "); ok {
			if c, err := strconv.Atoi(strings.TrimSpace(head)); err == nil {
				count = c
			}
		}
		n += count
		out.WriteString(rec + "\n\n")
	}
	return out.String(), n
}

// Goroutines is how many goroutines of this daemon are running now (Run's own included while it runs).
func (d *Daemon) Goroutines() int {
	_, n := d.goroutines()
	return n
}

// CheckNoGoroutines stops the daemon and fails the test unless every goroutine it started has ended within
// 10 s. It counts only this daemon's goroutines, so it holds while other tests run in parallel.
func (d *Daemon) CheckNoGoroutines(t testing.TB) {
	t.Helper()
	if err := d.Stop(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		stacks, n := d.goroutines()
		if n == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d goroutines of the daemon are left after it stopped:\n%s", n, stacks)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

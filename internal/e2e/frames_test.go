package e2e

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zeroclaw-go/zeroclaw/internal/rpctest/ndjson"
)

// procKB reads one "Name:   123 kB" field of /proc/<pid>/status.
func procKB(t *testing.T, pid int, field string) int {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "status"))
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, field+":"); ok {
			n, err := strconv.Atoi(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")))
			if err != nil {
				t.Fatalf("%s: %q: %v", field, line, err)
			}
			return n
		}
	}
	t.Fatalf("no %s in /proc/%d/status", field, pid)
	return 0
}

// 100 clients send one valid frame just under the 8 MiB limit each, all at once. Every one is answered; the
// daemon's peak RSS stays bounded (the frames in flight share one byte budget and are decoded without copies),
// and once the burst is over the memory goes back to the system.
func TestConcurrentMaxSizeFramesMemory(t *testing.T) {
	if _, err := os.Stat("/proc/self/status"); err != nil {
		t.Fatal("this test reads /proc/<pid>/status (Linux)")
	}
	h := home(t)
	d := start(t, env(h), "daemon")
	sock := filepath.Join(h, ".zeroclaw", "data", "daemon.sock")
	waitSocket(t, d, sock)
	pid := d.cmd.Process.Pid

	const (
		clients = 100
		limit   = 8 << 20 // the default max_frame_bytes
		peakMB  = 400     // before the fix: 3.1 GB; after: under 200 MB
		afterMB = 64      // before: 3.1 GB a minute later (159 MB without the trim); after: ~22 MB
	)
	conns := make([]*ndjson.Client, clients)
	for i := range conns {
		conns[i] = dialRPC(t, sock)
		conns[i].Initialize()
	}
	head := `{"jsonrpc":"2.0","method":"status","id":2,"params":{"pad":"`
	tail := `"}}`
	line := make([]byte, 0, limit)
	line = append(line, head...)
	line = append(line, bytes.Repeat([]byte("x"), limit-64-len(head)-len(tail))...)
	line = append(line, tail...)
	line = append(line, '\n')
	t.Logf("daemon RSS before the burst: %d MB; frame of %d bytes", procKB(t, pid, "VmRSS")/1024, len(line)-1)

	var wg sync.WaitGroup
	start := make(chan struct{})
	for i, c := range conns {
		wg.Go(func() {
			<-start
			_ = c.Conn().SetDeadline(time.Now().Add(3 * time.Minute)) // a safety bound, never asserted on
			if _, err := c.Conn().Write(line); err != nil {
				t.Errorf("client %d: write: %v", i, err)
				return
			}
			reply, err := c.Recv(3 * time.Minute)
			if err != nil {
				t.Errorf("client %d: read: %v", i, err)
				return
			}
			var m struct {
				ID     int `json:"id"`
				Result struct {
					PID int `json:"pid"`
				} `json:"result"`
				Error any `json:"error"`
			}
			if err := json.Unmarshal([]byte(reply), &m); err != nil || m.ID != 2 || m.Result.PID != pid || m.Error != nil {
				t.Errorf("client %d: reply %.300s (%v)", i, reply, err)
			}
		})
	}
	close(start)
	wg.Wait()
	peak := procKB(t, pid, "VmHWM") / 1024
	t.Logf("daemon peak RSS (VmHWM): %d MB", peak)
	if peak >= peakMB {
		t.Errorf("peak RSS %d MB serving %d max-size frames, want < %d MB", peak, clients, peakMB)
	}
	// The memory is given back: poll with a deadline rather than sleeping a fixed time.
	deadline := time.Now().Add(60 * time.Second)
	for {
		rss := procKB(t, pid, "VmRSS") / 1024
		if rss < afterMB {
			t.Logf("daemon RSS after the burst: %d MB", rss)
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("RSS still %d MB 60 s after the burst, want < %d MB", rss, afterMB)
		}
		time.Sleep(100 * time.Millisecond)
	}
	statusPID(t, sock) // still serving
}

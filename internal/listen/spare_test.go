package listen

import (
	"context"
	"io"
	"net"
	"os"
	"syscall"
	"testing"
	"time"
)

// With SpareFD a connection is still accepted and served when the process is out of fds: the reserved fd is given
// up for it (issue 20 item 4: the local socket must accept while a flood holds every other fd).
func TestSpareFDAcceptsWhenOutOfFDs(t *testing.T) {
	// Not parallel: it lowers the process-wide RLIMIT_NOFILE.
	ln, path := unixListener(t)
	s := New(Options{SpareFD: true})
	served := make(chan struct{}, 1)
	go func() {
		_ = s.Serve(t.Context(), ln, func(_ context.Context, nc net.Conn) {
			_, _ = nc.Write([]byte("ok"))
			served <- struct{}{}
		})
	}()
	t.Cleanup(func() { s.Shutdown(context.Background()) })

	// Lower the soft limit to what is open now plus a few, and take every free fd but one (for the client's end).
	var old syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &old); err != nil {
		t.Fatal(err)
	}
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	low := old
	low.Cur = uint64(len(ents) + 8)
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &low); err != nil {
		t.Fatal(err)
	}
	var hogs []*os.File
	release := func() {
		for _, f := range hogs {
			f.Close()
		}
		hogs = nil
		_ = syscall.Setrlimit(syscall.RLIMIT_NOFILE, &old)
	}
	defer release()
	for {
		f, err := os.Open(os.DevNull)
		if err != nil {
			break
		}
		hogs = append(hogs, f)
	}
	if len(hogs) == 0 {
		t.Fatal("no fd to take")
	}
	hogs[len(hogs)-1].Close()
	hogs = hogs[:len(hogs)-1]

	c, err := net.Dial("unix", path)
	if err != nil {
		t.Fatalf("dial with one fd left: %v", err)
	}
	defer c.Close()
	_ = c.SetReadDeadline(time.Now().Add(safety))
	buf := make([]byte, 2)
	if _, err := io.ReadFull(c, buf); err != nil || string(buf) != "ok" {
		t.Fatalf("the connection was not served while the process was out of fds: %q %v", buf, err)
	}
	<-served
	release()
}

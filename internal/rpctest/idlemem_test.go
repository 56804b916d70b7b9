package rpctest

import (
	"bytes"
	"runtime"
	"strings"
	"syscall"
	"testing"

	"github.com/zeroclaw-go/zeroclaw/internal/rpctest/ndjson"
)

// An idle initialized connection holds little memory in the daemon: its heap objects (~2.9 KiB measured: the
// jsonrpc.Conn with its channels and out queue, the Peer, the socket, the contexts and the initialize timer) and
// its reader goroutine's stack. The clients here are raw socket descriptors (no Go objects of their own), so the
// growth of the heap in use and of the stacks in use, after GCs, between 200 and 400 such connections is the
// daemon's alone. The stack is 8 KiB: the idle read waits ~2.5 KB deep (listen, daemon, rpc, jsonrpc, poll) and
// the GC halves a stack only while less than a quarter of it is used, so 8 KiB is this call chain's floor.
func TestIdleConnectionMemory(t *testing.T) {
	const n = 200
	d := Start(t, WithConfig("schema_version = 3\n\n[rpc]\nmax_local_connections = 1000\n"))
	var fds []int
	t.Cleanup(func() {
		for _, fd := range fds {
			syscall.Close(fd)
		}
	})
	open := func() {
		for range n {
			fd, err := syscall.Socket(syscall.AF_UNIX, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
			if err != nil {
				t.Fatal(err)
			}
			fds = append(fds, fd)
			if err := syscall.Connect(fd, &syscall.SockaddrUnix{Name: d.Endpoint}); err != nil {
				t.Fatal(err)
			}
			rawRoundTrip(t, fd, ndjson.InitializeRequest, `"id":"init"`)
			rawRoundTrip(t, fd, `{"jsonrpc":"2.0","method":"status","id":1}`, `"id":1`)
		}
	}
	measure := func() (heap, stack uint64) {
		var m runtime.MemStats
		for range 3 { // stacks shrink at most by half per GC
			runtime.GC()
		}
		runtime.ReadMemStats(&m)
		return m.HeapAlloc, m.StackInuse
	}
	open()
	heap0, stack0 := measure()
	open()
	heap1, stack1 := measure()
	heapPer := (int64(heap1) - int64(heap0)) / n
	stackPer := (int64(stack1) - int64(stack0)) / n
	t.Logf("per idle initialized connection: heap %d B, stack %d B", heapPer, stackPer)
	if heapPer > 3328 {
		t.Errorf("an idle connection holds %d B of heap, want at most 3.25 KiB", heapPer)
	}
	maxStack := int64(9 << 10) // 8 KiB, and room for a goroutine of its own the daemon started meanwhile
	if raceEnabled {
		maxStack *= 2 // the race detector's instrumentation makes every frame on the way larger
	}
	if stackPer > maxStack {
		t.Errorf("an idle connection's goroutine holds %d B of stack, want at most %d", stackPer, maxStack)
	}
}

// rawRoundTrip writes one line on fd and reads until a full line containing want arrives.
func rawRoundTrip(t *testing.T, fd int, line, want string) {
	t.Helper()
	if _, err := syscall.Write(fd, []byte(line+"\n")); err != nil {
		t.Fatal(err)
	}
	var got []byte
	buf := make([]byte, 4096)
	for !bytes.HasSuffix(got, []byte("\n")) {
		k, err := syscall.Read(fd, buf)
		if err != nil || k == 0 {
			t.Fatalf("read: %v (after %q)", err, got)
		}
		got = append(got, buf[:k]...)
	}
	if !strings.Contains(string(got), want) {
		t.Fatalf("sent %s, got %s", line, got)
	}
}

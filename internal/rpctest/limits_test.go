package rpctest

import (
	"encoding/json"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zeroclaw-go/zeroclaw/internal/clock/clocktest"
	"github.com/zeroclaw-go/zeroclaw/internal/config"
)

// baseConfig is the config a fresh install writes; tests append sections to it.
var baseConfig = string(config.DefaultTOML())

func withRPC(rpc string) Option { return WithConfig(baseConfig + "\n[rpc]\n" + rpc) }

func decode(t *testing.T, frame string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(frame), &m); err != nil {
		t.Fatalf("bad frame %q: %v", frame, err)
	}
	return m
}

func errorOf(t *testing.T, frame string) (code int, data map[string]any) {
	t.Helper()
	m := decode(t, frame)
	e, ok := m["error"].(map[string]any)
	if !ok {
		t.Fatalf("expected an error frame, got %s", frame)
	}
	if m["id"] != nil {
		t.Errorf("limit errors carry id null, got %v", m["id"])
	}
	data, _ = e["data"].(map[string]any)
	return int(e["code"].(float64)), data
}

// A frame of max+1 bytes gets one frame_too_large error (id null), then EOF.
func TestFrameTooLarge(t *testing.T) {
	t.Parallel()
	d := Start(t, withRPC("max_frame_bytes = 1024\n"))
	c := d.Dial(t)
	c.Initialize()
	// Exactly the limit is fine.
	pad := 1024 - len(`{"jsonrpc":"2.0","method":"status","id":1,"x":""}`)
	c.Send(`{"jsonrpc":"2.0","method":"status","id":1,"x":"` + strings.Repeat("a", pad) + `"}`)
	if m := c.Next(); m["result"] == nil {
		t.Fatalf("a frame of exactly max bytes was refused: %v", m)
	}
	c.Send(`{"jsonrpc":"2.0","method":"status","id":2,"x":"` + strings.Repeat("a", pad+1) + `"}`)
	code, data := errorOf(t, c.MustRecv())
	if code != -32600 || data["reason"] != "frame_too_large" || data["limit_bytes"] != float64(1024) {
		t.Fatalf("got code %d data %v", code, data)
	}
	c.ExpectEOF(10 * time.Second)
}

// An unfinished frame gets frame_timeout then EOF; idle time between frames is not limited.
func TestFrameTimeout(t *testing.T) {
	t.Parallel()
	d := Start(t, withRPC("frame_timeout_ms = 300\n"))
	c := d.Dial(t)
	c.Initialize()
	time.Sleep(600 * time.Millisecond) // idle between frames: allowed
	c.Send(`{"jsonrpc":"2.0","method":"status","id":1}`)
	if m := c.Next(); m["result"] == nil {
		t.Fatalf("status after idle failed: %v", m)
	}
	c.SendRaw([]byte(`{"jsonrpc":"2.0","meth`))
	code, data := errorOf(t, c.MustRecv())
	if code != -32600 || data["reason"] != "frame_timeout" || data["limit_ms"] != float64(300) {
		t.Fatalf("got code %d data %v", code, data)
	}
	c.ExpectEOF(10 * time.Second)
}

// A connection that never initializes is closed without a frame; an initialized one is not.
func TestInitializeDeadline(t *testing.T) {
	t.Parallel()
	clk := clocktest.New(time.Unix(1_700_000_000, 0))
	d := Start(t, withRPC("initialize_timeout_ms = 300\n"), WithClock(clk))
	idle := d.Dial(t)
	ok := d.Dial(t)
	ok.Initialize()
	idle.Send(`{"jsonrpc":"2.0","method":"status","id":1}`) // not initialize: does not count
	if code, _ := errorOfAny(t, idle.MustRecv()); code != -32010 {
		t.Fatalf("want -32010 before initialize, got %d", code)
	}
	// Both connections armed their deadline when accepted (each has been answered since).
	clk.Advance(300*time.Millisecond - time.Nanosecond)
	idle.Send(`{"jsonrpc":"2.0","method":"status","id":2}`)
	if code, _ := errorOfAny(t, idle.MustRecv()); code != -32010 {
		t.Fatalf("just before the deadline: want -32010, got %d", code)
	}
	clk.Advance(time.Nanosecond)
	idle.ExpectEOF(10 * time.Second)
	clk.Advance(time.Hour)
	ok.Send(`{"jsonrpc":"2.0","method":"status","id":2}`)
	if m := ok.Next(); m["result"] == nil {
		t.Fatalf("initialized connection was affected by the deadline: %v", m)
	}
}

func errorOfAny(t *testing.T, frame string) (int, map[string]any) {
	m := decode(t, frame)
	e, ok := m["error"].(map[string]any)
	if !ok {
		t.Fatalf("expected an error, got %s", frame)
	}
	data, _ := e["data"].(map[string]any)
	return int(e["code"].(float64)), data
}

// Past max_local_connections the refused connection gets one -32004 frame, then EOF; a slot freed is reusable.
func TestConnectionLimit(t *testing.T) {
	t.Parallel()
	d := Start(t, withRPC("max_local_connections = 2\n"))
	a := d.Dial(t)
	a.Initialize()
	b := d.Dial(t)
	b.Initialize()
	over := d.Dial(t)
	code, data := errorOf(t, over.MustRecv())
	if code != -32004 || data["reason"] != "connection_limit" || data["limit"] != float64(2) {
		t.Fatalf("got code %d data %v", code, data)
	}
	over.ExpectEOF(10 * time.Second)
	a.Conn().Close()
	// The slot is released when the daemon notices the close; retry until it does.
	deadline := time.Now().Add(10 * time.Second)
	for {
		c := d.Dial(t)
		// A refused connection is answered at accept and closed, so the write may fail: only the reply counts.
		_, _ = c.Conn().Write([]byte(`{"jsonrpc":"2.0","method":"initialize","params":{},"id":1}` + "\n"))
		m := c.Next()
		if m["result"] != nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("slot never freed: %v", m)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// A client that sends requests but never reads is disconnected after the write timeout, the daemon's memory
// does not grow with what it would have sent, and other clients are served meanwhile.
func TestSlowReaderIsBounded(t *testing.T) {
	d := Start(t, withRPC("write_timeout_ms = 500\n"))
	slow := d.Dial(t)
	slow.Initialize()
	// Pipeline many requests whose replies fill the socket buffers; never read them.
	var before runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	req := []byte(`{"jsonrpc":"2.0","method":"health","id":1}` + "\n")
	batch := []byte(strings.Repeat(string(req), 1000))
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			_ = slow.Conn().SetWriteDeadline(time.Now().Add(time.Second))
			if _, err := slow.Conn().Write(batch); err != nil {
				return // the daemon stopped reading or closed us: both fine
			}
		}
	}()
	// Meanwhile another client is served promptly.
	other := d.Dial(t)
	other.Initialize()
	for i := 0; i < 20; i++ {
		other.Send(fmt.Sprintf(`{"jsonrpc":"2.0","method":"status","id":%d}`, i))
		if m := other.Next(); m["result"] == nil {
			t.Fatalf("other client not served: %v", m)
		}
	}
	// The slow client is eventually dropped: its writes fail or its reads see EOF after the buffered replies.
	deadline := time.Now().Add(20 * time.Second)
	for {
		_ = slow.Conn().SetWriteDeadline(time.Now().Add(200 * time.Millisecond))
		_, err := slow.Conn().Write(req)
		if err != nil && !strings.Contains(err.Error(), "timeout") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("slow client was never disconnected")
		}
		time.Sleep(50 * time.Millisecond)
	}
	close(stop)
	wg.Wait()
	var after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&after)
	// The per-connection queue is bounded (16 MiB); the heap must not hold more than that plus slack.
	if grew := int64(after.HeapAlloc) - int64(before.HeapAlloc); grew > 48<<20 {
		t.Fatalf("heap grew by %d MiB serving a client that never reads", grew>>20)
	}
}

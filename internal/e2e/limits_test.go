package e2e

import (
	"bufio"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// rssLimit is a generous bound on the daemon's resident memory while a model streams without end; before the
// answer caps, such a stream took it to several GB within seconds.
const rssLimit = 200 << 20

// vmRSS reads the resident set size of pid from /proc, in bytes.
func vmRSS(pid int) (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return kb << 10, err
		}
	}
	return 0, fmt.Errorf("no VmRSS in /proc/%d/status", pid)
}

// rssWatch samples the RSS of p until stopped; past rssLimit it kills p, so a runaway daemon fails the test
// instead of exhausting the machine.
type rssWatch struct {
	stop chan struct{}
	done chan struct{}
	peak atomic.Int64
	over atomic.Bool
}

func watchRSS(t *testing.T, p *proc) *rssWatch {
	t.Helper()
	if runtime.GOOS != "linux" {
		t.Fatal("RSS is read from /proc/<pid>/status, which only Linux has: the memory-bound tests run on Linux (CI)")
	}
	if _, err := vmRSS(p.cmd.Process.Pid); err != nil {
		t.Fatal(err)
	}
	w := &rssWatch{stop: make(chan struct{}), done: make(chan struct{})}
	t.Cleanup(func() { // also when the test failed on the connection the kill closed
		if w.over.Load() {
			t.Errorf("daemon RSS passed %d MB: killed", rssLimit>>20)
		}
	})
	go func() {
		defer close(w.done)
		tick := time.NewTicker(5 * time.Millisecond)
		defer tick.Stop()
		for {
			if rss, err := vmRSS(p.cmd.Process.Pid); err == nil {
				if rss > w.peak.Load() {
					w.peak.Store(rss)
				}
				if rss > rssLimit {
					w.over.Store(true)
					_ = p.cmd.Process.Kill()
					return
				}
			}
			select {
			case <-w.stop:
				return
			case <-tick.C:
			}
		}
	}()
	return w
}

func (w *rssWatch) finish(t *testing.T) {
	t.Helper()
	close(w.stop)
	<-w.done
	if w.over.Load() {
		t.FailNow() // reported by the cleanup
	}
	t.Logf("peak daemon RSS %.1f MB", float64(w.peak.Load())/(1<<20))
}

// The real daemon, default [limits], a model that never stops: an endless answer and endless tool-call
// arguments each end the turn with an error naming the limit's key, only the capped text is sent and stored,
// and the daemon's RSS stays bounded throughout.
func TestEndlessModelOutputIsCapped(t *testing.T) {
	var mu sync.Mutex
	var streamed []int64 // bytes written per request
	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		bw := bufio.NewWriterSize(w, 64<<10)
		var n int64
		defer func() {
			mu.Lock()
			streamed = append(streamed, n)
			mu.Unlock()
		}()
		chunk := sseChunk(strings.Repeat("endless ", 64))
		if strings.Contains(readAllString(r), "call a tool") {
			k, _ := fmt.Fprint(bw, `data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_1","function":{"name":"shell","arguments":"{\"command\":\"echo "}}]}}]}`+"\n\n")
			n += int64(k)
			chunk = `data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"` + strings.Repeat("z", 512) + `"}}]}}]}` + "\n\n"
		}
		for r.Context().Err() == nil {
			k, err := bw.WriteString(chunk)
			n += int64(k)
			if err != nil {
				return
			}
		}
	}))
	defer backend.Close()

	h, root := homeWithOpenAI(t, "endless", backend.URL)
	sock := filepath.Join(root, "data", "daemon.sock")
	d := start(t, env(h), "daemon")
	waitSocket(t, d, sock)
	w := watchRSS(t, d)
	c := dialStream(t, sock)

	turn := func(id int, sid, prompt string) (done, result map[string]any) {
		t.Helper()
		c.Request("session/new", map[string]any{"session_id": sid}, id)
		c.Result(id)
		c.Request("session/prompt", map[string]any{"session_id": sid, "prompt": prompt}, id+1)
		for {
			m := c.Next()
			if p, ok := m["params"].(map[string]any); ok && p["type"] == "turn_complete" {
				done = p
				continue
			}
			if m["id"] == float64(id+1) {
				result, _ = m["result"].(map[string]any)
				return done, result
			}
		}
	}

	done, result := turn(2, "endless-answer", "say everything")
	errText, _ := done["error"].(string)
	content, _ := done["content"].(string)
	if done["outcome"] != "failed" || !strings.Contains(errText, "limits.max_answer_bytes") || !strings.Contains(errText, "openai.endless") {
		t.Fatalf("turn_complete: outcome %v, error %q", done["outcome"], errText)
	}
	if len(content) > 1<<20 || len(content) < 1<<19 || !strings.HasPrefix(content, "endless ") {
		t.Fatalf("turn_complete content is %d bytes, want the 1 MiB that fit", len(content))
	}
	if result["content"] != content || result["outcome"] != "failed" {
		t.Fatalf("prompt result differs from turn_complete: outcome %v, %d bytes", result["outcome"], len(fmt.Sprint(result["content"])))
	}
	c.Request("session/messages", map[string]any{"session_id": "endless-answer"}, 10)
	msgs, _ := c.Result(10)["messages"].([]any)
	if len(msgs) != 2 {
		t.Fatalf("%d stored messages, want the prompt and the capped answer", len(msgs))
	}
	if last, _ := msgs[1].(map[string]any); last["role"] != "assistant" || last["content"] != content {
		t.Fatalf("stored answer: %v, %d bytes", last["role"], len(fmt.Sprint(last["content"])))
	}

	done, _ = turn(20, "endless-args", "call a tool")
	errText, _ = done["error"].(string)
	if done["outcome"] != "failed" || !strings.Contains(errText, "limits.max_tool_args_bytes") {
		t.Fatalf("turn_complete: outcome %v, error %q", done["outcome"], errText)
	}
	w.finish(t)
	// Both backend requests were abandoned by the daemon: their handlers see the cancellation and return. The
	// deadline only bounds a hung test.
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		mu.Lock()
		n := len(streamed)
		mu.Unlock()
		if n == 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of the 2 endless backend requests ended", n)
		}
	}
}

func readAllString(r *http.Request) string {
	b, _ := io.ReadAll(r.Body)
	return string(b)
}

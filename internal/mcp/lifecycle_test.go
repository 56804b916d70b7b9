package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zeroclaw-go/zeroclaw/internal/config"
	"github.com/zeroclaw-go/zeroclaw/internal/mcp/mcptest"
)

// A child that ignores EOF and leaves a grandchild in its group is killed with its whole group on close:
// no live descendant and no zombie remain (upstream zeroclaw#8731: defunct children by the hundred, npx's
// node grandchild left running).
func TestCloseKillsStubbornChildAndGrandchild(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("process groups and /proc are checked on Linux")
	}
	m := New(Options{Environ: os.Environ(), BackoffMin: 20 * time.Millisecond})
	m.Reconcile(config.MCPConfig{Enabled: true, Servers: []config.MCPServerConfig{
		testServer("s", map[string]string{"MCPTEST_IGNORE_EOF": "1", "MCPTEST_GRANDCHILD": "1"})}})
	st := m.ForServers(ctxT(t), []string{"s"}, "")
	if st == nil || len(st.Specs()) == 0 {
		t.Fatalf("not connected: %+v", m.Status())
	}
	pgid := statusOf(m, "s").PID
	if n := len(inGroup(pgid)); n < 2 {
		t.Fatalf("group %d has %d live processes, want the server and its grandchild", pgid, n)
	}
	m.Close()
	// Close reaps the server itself; the grandchild is not ours to wait for, and the kernel finishes its SIGKILL
	// asynchronously (a loaded machine showed it alive just after Close). Give it a bounded while to be gone.
	live := inGroup(pgid)
	for deadline := time.Now().Add(10 * time.Second); len(live) != 0 && time.Now().Before(deadline); live = inGroup(pgid) {
		time.Sleep(20 * time.Millisecond)
	}
	if len(live) != 0 {
		t.Fatalf("10 s after close, group %d still has %v", pgid, live)
	}
	for pid, state := range children(t) {
		t.Errorf("child %d left behind (state %s)", pid, state)
	}
}

// 1,000 start/stop cycles of a stdio server, and restarts after crashes, leave zero zombies, zero live
// children and a constant fd count: started directly, and under the keeper with a grandchild in the server's
// group and one escaped from it at every start (each escapee is checked gone at the end).
func TestThousandCyclesNoZombiesConstantFDs(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("/proc is read on Linux")
	}
	for _, kept := range []bool{false, true} {
		t.Run(map[bool]string{false: "direct", true: "keeper"}[kept], func(t *testing.T) { thousandCycles(t, kept) })
	}
}

func thousandCycles(t *testing.T, kept bool) {
	n := 1000
	if testing.Short() {
		n = 50
	}
	srv := builtServer(t, "z")
	o := Options{Environ: os.Environ(), BackoffMin: time.Millisecond, BackoffMax: 5 * time.Millisecond}
	escape := filepath.Join(t.TempDir(), "escaped.pid")
	if kept {
		o.Shim = srv.Command // mcptestserver is a keeper too (its main calls RunShimIfAsked)
		srv.Env = map[string]string{mcptest.EnvGrandchild: "1", mcptest.EnvEscapeFile: escape}
	}
	var escapees []int
	noteEscapee := func() {
		if kept {
			escapees = append(escapees, readPID(t, escape))
			_ = os.Remove(escape)
		}
	}
	cfgs := []config.MCPServerConfig{srv}
	m := New(o)
	defer m.Close()
	warm := func() {
		m.Reconcile(config.MCPConfig{Enabled: true, Servers: cfgs})
		if st := m.ForServers(ctxT(t), []string{"z"}, ""); st == nil || len(st.Specs()) == 0 {
			t.Fatalf("cycle: not connected: %+v", m.Status())
		}
		noteEscapee()
		m.Reconcile(config.MCPConfig{Enabled: false})
	}
	warm() // let the runtime and the SDK reach their steady set of fds
	fds := fdCount(t)
	for i := range n {
		if i%2 == 1 { // a restart after a crash instead of a clean stop
			m.Reconcile(config.MCPConfig{Enabled: true, Servers: cfgs})
			st := m.ForServers(ctxT(t), []string{"z"}, "")
			noteEscapee()
			_ = call(t, st, "z__crash", `{}`)
			waitFor(t, m, "restart", func() bool { return statusOf(m, "z").State == StateReady })
			noteEscapee()
			m.Reconcile(config.MCPConfig{Enabled: false})
			continue
		}
		warm()
	}
	if kids := children(t); len(kids) != 0 {
		t.Fatalf("after %d cycles: children %v", n, kids)
	}
	waitGone(t, "escaped grandchildren", escapees...)
	// The fd count is sampled a few times: the runtime's poller may hold a transient descriptor.
	var got int
	for range 20 {
		if got = fdCount(t); got <= fds {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if got > fds {
		t.Fatalf("fds grew from %d to %d over %d cycles", fds, got, n)
	}
}

// Streamable HTTP and SSE servers: the tools are listed and called, and the configured headers are sent
// with every request.
func TestHTTPAndSSETransports(t *testing.T) {
	for _, tc := range []struct {
		transport string
		sse       bool
	}{{config.MCPHTTP, false}, {config.MCPSSE, true}} {
		t.Run(tc.transport, func(t *testing.T) {
			var mu sync.Mutex
			var auth []string
			h := mcptest.Handler(tc.sse)
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				mu.Lock()
				auth = append(auth, r.Header.Get("Authorization"))
				mu.Unlock()
				h.ServeHTTP(w, r)
			}))
			defer srv.Close()
			m := newManager(t, config.MCPServerConfig{Name: "web", Transport: tc.transport, URL: srv.URL,
				Headers: map[string]string{"Authorization": "Bearer tok-1234567890abcdef"}})
			st := m.ForServers(ctxT(t), []string{"web"}, "")
			if st == nil || len(st.Specs()) == 0 {
				t.Fatalf("not connected: %+v", m.Status())
			}
			if res := call(t, st, "web__echo", `{"text":"over http"}`); res.Output != "echo: over http" {
				t.Fatalf("echo = %+v", res)
			}
			m.Close()
			mu.Lock()
			defer mu.Unlock()
			if len(auth) < 2 {
				t.Fatalf("only %d requests", len(auth))
			}
			for _, a := range auth {
				if a != "Bearer tok-1234567890abcdef" {
					t.Fatalf("a request carried Authorization %q", a)
				}
			}
		})
	}
}

// An HTTP server that is down at first registers its tools when it comes up (the supervisor retries).
func TestHTTPServerThatStartsLate(t *testing.T) {
	up := make(chan struct{})
	h := mcptest.Handler(false)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-up:
			h.ServeHTTP(w, r)
		default:
			http.Error(w, "not yet", http.StatusServiceUnavailable)
		}
	}))
	t.Cleanup(srv.Close) // after the manager's Close (cleanups run last-in first-out)
	m := newManager(t, config.MCPServerConfig{Name: "w", Transport: config.MCPHTTP, URL: srv.URL})
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Second)
	st := m.ForServers(ctx, []string{"w"}, "")
	cancel()
	if st == nil || len(st.Specs()) != 0 {
		t.Fatal("tools before the server is up")
	}
	waitFor(t, m, "a failed start", func() bool { return statusOf(m, "w").State == StateBackoff })
	close(up)
	waitFor(t, m, "the late server's tools", func() bool { return len(st.Specs()) > 0 })
}

// The real npm servers: server-everything over stdio (its echo tool), server-filesystem reading a file in its
// allowed directory.
func TestNPMServers(t *testing.T) {
	root, err := filepath.Abs("../../tests/mcp-servers/node_modules/@modelcontextprotocol")
	if err != nil {
		t.Fatal(err)
	}
	everything := filepath.Join(root, "server-everything", "dist", "index.js")
	fsSrv := filepath.Join(root, "server-filesystem", "dist", "index.js")
	for _, f := range []string{everything, fsSrv} {
		if _, err := os.Stat(f); err != nil {
			t.Fatalf("%v: run `npm ci --prefix tests/mcp-servers` (.ci/run does)", err)
		}
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "note.txt"), []byte("hello from the filesystem server"), 0o600); err != nil {
		t.Fatal(err)
	}
	m := newManager(t,
		config.MCPServerConfig{Name: "everything", Command: "node", Args: []string{everything, "stdio"}},
		config.MCPServerConfig{Name: "fs", Command: "node", Args: []string{fsSrv, dir}})
	st := m.ForServers(ctxT(t), []string{"everything", "fs"}, "")
	if st == nil {
		t.Fatal("no set")
	}
	if res := call(t, st, "everything__echo", `{"message":"ping"}`); res.IsError || !strings.Contains(res.Output, "ping") {
		t.Fatalf("everything echo = %+v; status %+v", res, m.Status())
	}
	res := call(t, st, "fs__read_text_file", `{"path":"`+filepath.Join(dir, "note.txt")+`"}`)
	if res.IsError || !strings.Contains(res.Output, "hello from the filesystem server") {
		t.Fatalf("fs read = %+v; tools %v", res, specNames(st))
	}
	if res := call(t, st, "fs__read_text_file", `{"path":"/etc/passwd"}`); !res.IsError {
		t.Fatalf("fs read outside its root = %+v", res)
	}
	// server-everything has resources and prompts: the generic tools list and read them, bounded.
	if !slices.Contains(specNames(st), NameResources) || !slices.Contains(specNames(st), NamePrompts) {
		t.Fatalf("no generic tools in %v", specNames(st))
	}
	list := call(t, st, NameResources, `{"action":"list","server":"everything"}`)
	var uri string
	for _, line := range strings.Split(list.Output, "\n") {
		if u, _, ok := strings.Cut(line, " - "); ok && strings.HasPrefix(u, "everything__") {
			uri = u
			break
		}
	}
	if list.IsError || uri == "" {
		t.Fatalf("resources list: %+v", list)
	}
	if res := call(t, st, NameResources, `{"action":"read","uri":"`+uri+`"}`); res.IsError || !strings.Contains(res.Output, "[") {
		t.Fatalf("resources read %s: %+v", uri, res)
	}
	if res := call(t, st, NameResources, `{"action":"read","uri":"nosuch__x"}`); !res.IsError {
		t.Fatalf("read of an unknown server: %+v", res)
	}
	prompts := call(t, st, NamePrompts, `{"action":"list"}`)
	var prompt string
	for _, line := range strings.Split(prompts.Output, "\n") {
		if n, ok := strings.CutSuffix(strings.SplitN(line, " - ", 2)[0], "()"); ok && strings.HasPrefix(n, "everything__") {
			prompt = n
			break
		}
	}
	if prompts.IsError || prompt == "" {
		t.Fatalf("prompts list: %+v", prompts)
	}
	if res := call(t, st, NamePrompts, `{"action":"get","name":"`+prompt+`"}`); res.IsError || !strings.Contains(res.Output, "[user]") {
		t.Fatalf("prompts get %s: %+v", prompt, res)
	}
	pids := []int{statusOf(m, "everything").PID, statusOf(m, "fs").PID}
	m.Close()
	for _, p := range pids {
		if live := inGroup(p); len(live) != 0 {
			t.Fatalf("group %d alive after close: %v", p, live)
		}
	}
	_ = strconv.Itoa
}

// A streamable HTTP server answering a tools/call with a JSON body far beyond the transport's cap (stdio's
// 4 MiB line) is refused, not read whole into memory: the call fails, the server is reconnected, and the next
// call is served.
func TestHTTPOversizedJSONResponseRefused(t *testing.T) {
	h := mcptest.Handler(false)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			body, _ := io.ReadAll(r.Body)
			var msg struct {
				ID     json.RawMessage `json:"id"`
				Method string          `json:"method"`
				Params struct {
					Name string `json:"name"`
				} `json:"params"`
			}
			if json.Unmarshal(body, &msg) == nil && msg.Method == "tools/call" && msg.Params.Name == "huge" {
				w.Header().Set("Content-Type", "application/json")
				fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":"%s"}]}}`, msg.ID, strings.Repeat("x", 24<<20))
				return
			}
			r.Body = io.NopCloser(bytes.NewReader(body))
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close) // after the manager's Close (cleanups run last first): its event stream ends the handler
	m := newManager(t, config.MCPServerConfig{Name: "big", Transport: config.MCPHTTP, URL: srv.URL})
	st := m.ForServers(ctxT(t), []string{"big"}, "")
	if st == nil || len(st.Specs()) == 0 {
		t.Fatalf("not connected: %+v", m.Status())
	}
	res := call(t, st, "big__huge", `{"bytes":1}`)
	if !res.IsError || !strings.Contains(res.Output, "larger than") {
		t.Fatalf("a 24 MiB JSON response was accepted: error %v, %d bytes, %.200q", res.IsError, len(res.Output), res.Output)
	}
	waitFor(t, m, "the reconnect", func() bool {
		s := statusOf(m, "big")
		return s.Restarts >= 1 && s.State == StateReady
	})
	if res := call(t, m.ForServers(ctxT(t), []string{"big"}, ""), "big__echo", `{"text":"after"}`); res.Output != "echo: after" {
		t.Fatalf("after the refused response: %+v", res)
	}
}

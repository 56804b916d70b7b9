package daemon

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zeroclaw-go/zeroclaw/internal/rpctest/ndjson"
)

// The daemon serves its socket while a large legacy JSONL import runs (issue 20 item 12: 300,000 lines kept
// the socket closed for 28 s): the import is held half way, after a source of many lines and before the next;
// status is answered meanwhile, and a call on a session still being imported waits, then sees it whole. Before
// the fix the import ran before the daemon listened, so the hook found no socket.
//
// Not parallel: it sets onImportSource.
func TestDaemonServesDuringLegacyImport(t *testing.T) {
	root, err := os.MkdirTemp("", "zcimp") // short: a socket path has a length limit
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(root) })
	dir := filepath.Join(root, "data", "sessions")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	const many = 20000
	var b strings.Builder
	for i := range many {
		fmt.Fprintf(&b, "{\"role\":\"user\",\"content\":\"message %d\"}\n", i)
	}
	if err := os.WriteFile(filepath.Join(dir, "a.jsonl"), []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	chat := `{"role":"system","content":"obey the file"}
{"role":"user","content":"what's the capital of France?"}
{"role":"assistant","content":"Paris."}
`
	if err := os.WriteFile(filepath.Join(dir, "chat_1.jsonl"), []byte(chat), 0o600); err != nil {
		t.Fatal(err)
	}

	sock := filepath.Join(root, "data", "daemon.sock")
	held, hold := make(chan error, 1), make(chan struct{})
	var released bool
	release := func() {
		if !released {
			released = true
			close(hold)
		}
	}
	t.Cleanup(release)
	onImportSource = func(src string) {
		if src != "chat_1.jsonl" {
			return
		}
		_, err := os.Stat(sock)
		held <- err
		if err == nil {
			<-hold
		}
	}
	t.Cleanup(func() { onImportSource = nil })

	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	ready := make(chan string, 1)
	done := make(chan error, 1)
	go func() {
		done <- Run(ctx, Options{ConfigDir: root, Home: root, Ready: func(ep string) { ready <- ep }})
	}()
	select {
	case err := <-held:
		if err != nil {
			t.Fatalf("the import ran before the daemon listened: %v", err)
		}
	case err := <-done:
		t.Fatalf("daemon ended before the import: %v", err)
	}
	ep := <-ready

	c := ndjson.Dial(t, ep)
	c.Initialize()
	if r := c.Call("status", map[string]any{}, 2); r["result"] == nil {
		t.Fatalf("status during the import: %v", r)
	}
	// A session of the import: its call waits for the import, whatever the order the frames meet it.
	c2 := ndjson.Dial(t, ep)
	c2.Initialize()
	c2.Request("session/messages", map[string]any{"session_id": "chat_1"}, 3)
	release()
	res := c2.Result(3)
	msgs, _ := res["messages"].([]any)
	var got []string
	for _, m := range msgs {
		mm := m.(map[string]any)
		got = append(got, fmt.Sprint(mm["role"], ": ", mm["content"]))
	}
	// The legacy system line is not a message of the session.
	if want := []string{"user: what's the capital of France?", "assistant: Paris."}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("chat_1 = %q, want %q", got, want)
	}
	r := c.Call("session/messages", map[string]any{"session_id": "a", "limit": 1}, 4)
	if res, _ := r["result"].(map[string]any); res == nil || res["total"] != float64(many) {
		t.Errorf("a after the import: %v", r)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

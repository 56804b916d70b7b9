package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// sessionMessages returns session/messages of key as "role: content" lines and the reported total.
func sessionMessages(t *testing.T, sock, key string) ([]string, int) {
	t.Helper()
	c := dialRPC(t, sock)
	c.Initialize()
	r := c.Call("session/messages", map[string]any{"session_id": key}, 2)
	res, ok := r["result"].(map[string]any)
	if !ok {
		t.Fatalf("session/messages %s: %v", key, r)
	}
	var got []string
	msgs, _ := res["messages"].([]any)
	for _, m := range msgs {
		mm := m.(map[string]any)
		got = append(got, fmt.Sprint(mm["role"], ": ", mm["content"]))
	}
	total, _ := res["total"].(float64)
	return got, int(total)
}

// jsonlNames lists the legacy-session files of the sessions directory.
func jsonlNames(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		if strings.Contains(e.Name(), ".jsonl") {
			out = append(out, e.Name())
		}
	}
	return out
}

// An upstream user whose chat history is still in data/sessions/*.jsonl finds it after the first start; a
// restart imports nothing twice, and the source is archived as .jsonl.migrated. A source that cannot be
// imported is named in a warning, stays where it was, and does not stop the daemon.
func TestLegacyJSONLSessionsImported(t *testing.T) {
	t.Parallel()
	h := home(t)
	dir := filepath.Join(h, ".zeroclaw", "data", "sessions")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	src := `{"role":"user","content":"what's the capital of France?"}
{"role":"assistant","content":"Paris."}
{"role":"user","content":"thanks"}
`
	if err := os.WriteFile(filepath.Join(dir, "chat_1.jsonl"), []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "bad.jsonl"), []byte("not json: hunter2\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	want := []string{"user: what's the capital of France?", "assistant: Paris.", "user: thanks"}
	sock := filepath.Join(h, ".zeroclaw", "data", "daemon.sock")

	d := start(t, env(h), "daemon")
	waitSocket(t, d, sock)
	if got, total := sessionMessages(t, sock, "chat_1"); !slices.Equal(got, want) || total != 3 {
		t.Fatalf("chat_1 after the first start = %q (total %d), want %q", got, total, want)
	}
	if !d.stderrHas("imported legacy jsonl sessions") {
		t.Errorf("the import was not logged:\n%s", d.stderr.String())
	}
	if !d.stderrHas("legacy jsonl session not imported", "bad.jsonl") {
		t.Errorf("the failed source was not named in a warning:\n%s", d.stderr.String())
	}
	if strings.Contains(d.stderr.String(), "capital of France") || strings.Contains(d.stderr.String(), "hunter2") {
		t.Errorf("message contents reached the log:\n%s", d.stderr.String())
	}
	signal(t, d, syscall.SIGTERM)
	if code := d.wait(t, 15*time.Second); code != 0 {
		t.Fatalf("daemon exit code %d", code)
	}

	d2 := start(t, env(h), "daemon")
	waitSocket(t, d2, sock)
	if got, total := sessionMessages(t, sock, "chat_1"); !slices.Equal(got, want) || total != 3 {
		t.Fatalf("chat_1 after a restart = %q (total %d), want %q", got, total, want)
	}
	if got := jsonlNames(t, dir); !slices.Equal(got, []string{"bad.jsonl", "chat_1.jsonl.migrated"}) {
		t.Errorf("legacy files after the import: %q", got)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "chat_1.jsonl.migrated")); err != nil || string(b) != src {
		t.Errorf("archive = %q, %v; want the source bytes", b, err)
	}
}

// A daemon killed with SIGKILL anywhere in the import (before it starts, with the source staged, with the
// archive linked) leaves state the next start completes: every message lands exactly once.
func TestLegacyJSONLImportSurvivesKill9(t *testing.T) {
	t.Parallel()
	h := home(t)
	dir := filepath.Join(h, ".zeroclaw", "data", "sessions")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	// Big enough that the import spans more than an instant, so the kills land at different steps.
	const n = 20000
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "{\"role\":\"user\",\"content\":\"message %d %s\"}\n", i, strings.Repeat("x", 64))
	}
	if err := os.WriteFile(filepath.Join(dir, "chat_1.jsonl"), []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(h, ".zeroclaw", "data", "daemon.sock")

	// waitFor polls until name exists in dir (or the daemon is gone), then returns.
	waitFor := func(p *proc, name string) {
		deadline := time.Now().Add(20 * time.Second)
		for time.Now().Before(deadline) && !p.exited() {
			if _, err := os.Lstat(filepath.Join(dir, name)); err == nil {
				return
			}
			time.Sleep(100 * time.Microsecond)
		}
	}
	kills := []func(p *proc){
		func(*proc) {}, // at once
		func(p *proc) { waitFor(p, "chat_1.jsonl.importing") },
		func(p *proc) { waitFor(p, "chat_1.jsonl.importing"); time.Sleep(5 * time.Millisecond) },
		func(p *proc) { waitFor(p, "chat_1.jsonl.migrated") },
	}
	for i, at := range kills {
		d := start(t, env(h), "daemon")
		at(d)
		signal(t, d, syscall.SIGKILL)
		d.wait(t, 15*time.Second)
		t.Logf("after kill %d: %q", i, jsonlNames(t, dir))
	}

	d := start(t, env(h), "daemon")
	waitSocket(t, d, sock)
	got, total := sessionMessages(t, sock, "chat_1")
	if total != n {
		t.Fatalf("chat_1 total = %d after the kills, want %d exactly once", total, n)
	}
	if len(got) == 0 || !strings.HasPrefix(got[len(got)-1], fmt.Sprintf("user: message %d ", n-1)) {
		t.Errorf("last message = %q", got[len(got)-1:])
	}
	if names := jsonlNames(t, dir); !slices.Equal(names, []string{"chat_1.jsonl.migrated"}) {
		t.Errorf("legacy files after the final start: %q", names)
	}
	if arch, err := os.ReadFile(filepath.Join(dir, "chat_1.jsonl.migrated")); err != nil || string(arch) != b.String() {
		t.Errorf("archive differs from the source (%d bytes, %v)", len(arch), err)
	}
}

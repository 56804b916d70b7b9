package jsonl

import (
	"encoding/json"
	"errors"
	"github.com/zeroclaw-go/zeroclaw/internal/store"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func openTestJSONL(t *testing.T) (*Chat, string) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "data", "sessions")
	c, err := Open(t.Context(), dir)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c, dir
}

func TestJSONLChatAppendWritesUpstreamLinesAndPages(t *testing.T) {
	ctx := t.Context()
	c, dir := openTestJSONL(t)
	if _, existed, err := c.EnsureSession(ctx, "rpc_s1", "main", "alice", t0); err != nil || existed {
		t.Fatalf("EnsureSession: existed %v, %v", existed, err)
	}
	for i, content := range []string{"hello", "hi there", "bye\nnow"} {
		role := []string{"user", "assistant", "user"}[i]
		if idx, err := c.Append(ctx, "rpc_s1", role, content, t0); err != nil || idx != i {
			t.Fatalf("Append %d: idx %d, %v", i, idx, err)
		}
	}
	p := filepath.Join(dir, "rpc_s1.jsonl")
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	if len(lines) != 3 || lines[0] != `{"role":"user","content":"hello","created_at":"`+store.FormatTime(t0)+`"}` {
		t.Fatalf("file lines: %q", lines)
	}
	// The SQLite import's parser (upstream's rules) reads the same messages back.
	if msgs, _ := parseJSONL(data); len(msgs) != 3 || msgs[2].content != "bye\nnow" {
		t.Fatalf("parseJSONL: %+v", msgs)
	}
	if info, err := os.Stat(p); err != nil || info.Mode().Perm() != 0o600 {
		t.Fatalf("mode %v, %v", info.Mode(), err)
	}
	msgs, total, start, err := c.Page(ctx, "rpc_s1", 2, -1, 0)
	if err != nil || total != 3 || start != 1 || len(msgs) != 2 || msgs[0].Content != "hi there" || msgs[1].Index != 2 {
		t.Fatalf("Page: %+v total %d start %d %v", msgs, total, start, err)
	}
	if !msgs[0].CreatedAt.Equal(t0) {
		t.Fatalf("created_at %v", msgs[0].CreatedAt)
	}
	m, total, err := c.Message(ctx, "rpc_s1", 1)
	if err != nil || total != 3 || m.Role != "assistant" {
		t.Fatalf("Message: %+v %d %v", m, total, err)
	}
	if _, _, err := c.Message(ctx, "rpc_s1", 3); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("Message past the end: %v", err)
	}
	meta, err := c.Meta(ctx, "rpc_s1")
	if err != nil || meta.MessageCount != 3 || meta.AgentAlias != "main" || meta.Owner != "alice" {
		t.Fatalf("Meta: %+v %v", meta, err)
	}
	if got, err := c.List(ctx, "HI there", 0); err != nil || len(got) != 1 || got[0].Key != "rpc_s1" {
		t.Fatalf("List query: %+v %v", got, err)
	}
	if got, err := c.List(ctx, "absent", 0); err != nil || len(got) != 0 {
		t.Fatalf("List absent: %+v %v", got, err)
	}
	if err := c.Delete(ctx, "rpc_s1"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(p); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("file after delete: %v", err)
	}
	if _, err := c.Meta(ctx, "rpc_s1"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("Meta after delete: %v", err)
	}
}

// A crash can leave a torn last line and a corrupt one; loading skips them, and the next append starts on a line
// of its own with the index counting valid messages only.
func TestJSONLChatTornTailAndCorruptLines(t *testing.T) {
	ctx := t.Context()
	c, dir := openTestJSONL(t)
	if _, err := c.Append(ctx, "k", "user", "one", t0); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, "k.jsonl")
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString("not json\n\n{\"role\":\"user\",\"content\":\"tor"); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if idx, err := c.Append(ctx, "k", "assistant", "two", t0); err != nil || idx != 1 {
		t.Fatalf("append after a torn line: idx %d, %v", idx, err)
	}
	msgs, err := c.All(ctx, "k")
	if err != nil || len(msgs) != 2 || msgs[1].Content != "two" || msgs[1].Index != 1 {
		t.Fatalf("All: %+v %v", msgs, err)
	}
}

// A file written by upstream's JSONL backend (no metadata, no created_at) is adopted at open; a symlink planted at a
// session's path is never followed.
func TestJSONLChatAdoptsUpstreamFilesAndRefusesSymlinks(t *testing.T) {
	ctx := t.Context()
	dir := filepath.Join(t.TempDir(), "sessions")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "telegram_42.jsonl"), []byte(`{"role":"user","content":"from upstream"}`+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	target := filepath.Join(t.TempDir(), "victim")
	if err := os.WriteFile(target, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, filepath.Join(dir, "evil.jsonl")); err != nil {
		t.Fatal(err)
	}
	c, err := Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	m, err := c.Meta(ctx, "telegram_42")
	if err != nil || m.MessageCount != 1 || m.AgentAlias != "" {
		t.Fatalf("adopted meta: %+v %v", m, err)
	}
	if msgs, err := c.All(ctx, "telegram_42"); err != nil || len(msgs) != 1 || msgs[0].CreatedAt.IsZero() {
		t.Fatalf("adopted messages: %+v %v", msgs, err)
	}
	if _, err := c.Append(ctx, "evil", "user", "x", t0); err == nil {
		t.Fatal("append through a symlink succeeded")
	}
	if data, _ := os.ReadFile(target); len(data) != 0 {
		t.Fatalf("symlink target written: %q", data)
	}
}

// Switching back to SQLite: the import moves the files in and AdoptMeta carries each session's agent, name,
// creation time and owner over, then removes it from the JSONL metadata.
func TestSwitchBackToSQLiteKeepsMessagesAndOwners(t *testing.T) {
	ctx := t.Context()
	c, dir := openTestJSONL(t)
	if _, _, err := c.EnsureSession(ctx, "rpc_a", "main", "alice", t0); err != nil {
		t.Fatal(err)
	}
	if _, _, err := c.EnsureSession(ctx, "rpc_empty", "main", "bob", t0); err != nil {
		t.Fatal(err)
	}
	for _, content := range []string{"q", "a"} {
		if _, err := c.Append(ctx, "rpc_a", "user", content, t0); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	s, err := store.OpenChat(ctx, filepath.Join(dir, "sessions.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if rep, err := ImportDir(ctx, s, dir, t0.Add(time.Hour)); err != nil || rep.Sessions != 1 || rep.Messages != 2 {
		t.Fatalf("import: %+v %v", rep, err)
	}
	if n, err := AdoptMeta(ctx, s, dir); err != nil || n != 2 {
		t.Fatalf("AdoptMeta: %d %v", n, err)
	}
	m, err := s.Meta(ctx, "rpc_a")
	if err != nil || m.AgentAlias != "main" || m.Owner != "alice" || m.MessageCount != 2 || !m.CreatedAt.Equal(t0) {
		t.Fatalf("carried meta: %+v %v", m, err)
	}
	if m, err := s.Meta(ctx, "rpc_empty"); err != nil || m.Owner != "bob" || m.MessageCount != 0 {
		t.Fatalf("empty session carried: %+v %v", m, err)
	}
	// Reopening the JSONL backend shows neither twice: the files are archived and the rows have left.
	c2, err := Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	if rows, err := c2.List(ctx, "", 0); err != nil || len(rows) != 0 {
		t.Fatalf("JSONL sessions after switching back: %+v %v", rows, err)
	}
}

// FuzzJSONLSessionFile: any bytes in a session file load without panicking, as contiguous indices, each message a
// valid one (non-empty role); and a line Chat writes after them (on a fresh line) is read back exactly as the
// last message.
func FuzzJSONLSessionFile(f *testing.F) {
	f.Add([]byte(`{"role":"user","content":"hi"}` + "\n"))
	f.Add([]byte("{\"role\":\"user\",\"content\":\"tor"))
	f.Add([]byte("\xff\xfe\n{}\n{\"role\":\"\",\"content\":\"x\"}\n{\"role\":\"a\",\"content\":null}\n"))
	f.Add([]byte(`{"role":"a","content":"b","created_at":"not a time"}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		msgs := parseLines(data, t0)
		for i, m := range msgs {
			if m.Index != i || m.Role == "" {
				t.Fatalf("message %d: %+v", i, m)
			}
		}
		line, err := json.Marshal(jsonlLine{Role: "user", Content: string(data), CreatedAt: store.FormatTime(t0)})
		if err != nil {
			t.Fatal(err)
		}
		appended := append(append(append([]byte{}, data...), '\n'), line...)
		after := parseLines(appended, t0)
		if len(after) < 1 {
			t.Fatalf("the appended line was not read back")
		}
		last := after[len(after)-1]
		var written jsonlLine // what the line holds: json.Marshal replaces invalid UTF-8
		if err := json.Unmarshal(line, &written); err != nil {
			t.Fatal(err)
		}
		if last.Role != "user" || last.Content != written.Content || !last.CreatedAt.Equal(t0) {
			t.Fatalf("last message %+v, want the appended one", last)
		}
	})
}

// A turn on the JSONL backend: BeginTurn records the session running and appends the prompt, EndTurn appends the
// answer and records the end state, as store.ChatStore's do.
func TestJSONLChatBeginAndEndTurn(t *testing.T) {
	ctx := t.Context()
	c, _ := openTestJSONL(t)
	if idx, err := c.BeginTurn(ctx, "rpc_t", "main", "alice", "turn-1", t0, "question"); err != nil || idx != 0 {
		t.Fatalf("BeginTurn: %d %v", idx, err)
	}
	m, err := c.Meta(ctx, "rpc_t")
	if err != nil || m.State != "running" || m.TurnID != "turn-1" || m.Owner != "alice" || m.AgentAlias != "main" || m.MessageCount != 1 {
		t.Fatalf("after BeginTurn: %+v %v", m, err)
	}
	if idx, err := c.EndTurn(ctx, "rpc_t", "assistant", "answer", t0, "idle"); err != nil || idx != 1 {
		t.Fatalf("EndTurn: %d %v", idx, err)
	}
	m, err = c.Meta(ctx, "rpc_t")
	if err != nil || m.State != "idle" || m.TurnID != "" || m.MessageCount != 2 {
		t.Fatalf("after EndTurn: %+v %v", m, err)
	}
	if idx, err := c.BeginTurn(ctx, "rpc_t", "main", "alice", "turn-2", t0, ""); err != nil || idx != -1 {
		t.Fatalf("BeginTurn without a prompt: %d %v", idx, err)
	}
	if msgs, err := c.All(ctx, "rpc_t"); err != nil || len(msgs) != 2 || msgs[1].Content != "answer" {
		t.Fatalf("messages: %+v %v", msgs, err)
	}
}

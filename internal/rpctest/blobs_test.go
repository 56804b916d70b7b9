package rpctest

import (
	"bytes"
	"crypto/rand"
	"database/sql"
	"os"
	"path/filepath"
	"testing"

	"github.com/zeroclaw-go/zeroclaw/internal/api"
)

// Large blobs are files, never inline: a prompt with a 1 MiB attachment stores the bytes once under the
// workspace's uploads/ (content-addressed) and only the marker in sessions.db, so the database does not grow
// by the attachment's size (issue 29: storage that cannot rot).
func TestLargeAttachmentIsAFileNotARow(t *testing.T) {
	t.Parallel()
	d := Start(t)
	c := dialRC(t, d, "")
	s := c.newSession(api.SessionNewParams{SessionID: "blob"})
	data := make([]byte, 1<<20)
	if _, err := rand.Read(data); err != nil {
		t.Fatal(err)
	}
	id := c.send(api.MethodSessionPrompt, map[string]any{"session_id": "blob", "prompt": "look",
		"attachments": []map[string]any{{"data_b64": b64(data), "filename": "big.bin"}}})
	if tr := c.await(id, hooks{}); tr.err != nil {
		t.Fatalf("prompt: %s", tr.err)
	}
	path := stored(s.WorkspaceDir, data, ".bin")
	wantFile(t, path, data)
	for _, m := range c.messages("blob").Messages {
		if len(m.Content) > 4096 {
			t.Fatalf("a %d-byte %s message is stored: the attachment went inline", len(m.Content), m.Role)
		}
	}
	db, err := sql.Open("sqlite", "file:"+filepath.Join(d.ConfigDir, "data", "sessions", "sessions.db")+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var longest int64
	if err := db.QueryRow("SELECT coalesce(max(length(CAST(content AS BLOB))), 0) FROM sessions").Scan(&longest); err != nil {
		t.Fatal(err)
	}
	if longest > 4096 {
		t.Fatalf("the longest stored message is %d bytes: the attachment went inline", longest)
	}
	fi, err := os.Lstat(path)
	if err != nil || !fi.Mode().IsRegular() || fi.Mode().Perm() != 0o600 {
		t.Fatalf("the attachment file %s: %v %v; want a regular 0600 file", path, fi, err)
	}
	if got, _ := os.ReadFile(path); !bytes.Equal(got, data) {
		t.Fatal("the attachment file does not hold the bytes sent")
	}
}

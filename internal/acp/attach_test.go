package acp_test

import (
	"encoding/base64"
	"os"
	"path/filepath"
	"testing"

	"github.com/zeroclaw-go/zeroclaw/internal/rpctest"
)

// A blob resource takes the native attachments' path: an uploads directory that is a link out of the
// workspace is refused, nothing is written through it, and no turn runs.
func TestPromptBlobNeverWritesThroughALinkedUploadsDirectory(t *testing.T) {
	f := newLLM(t, answer("ok"))
	d := rpctest.Start(t, rpctest.WithConfig(config(f.URL)))
	c := dial(t, d)
	sid, ws := c.newSession(nil)
	outside := t.TempDir()
	if err := os.MkdirAll(ws, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(ws, "uploads")); err != nil {
		t.Fatal(err)
	}
	blocks := []map[string]any{{"type": "resource", "resource": map[string]any{"uri": "file:///p/a.bin",
		"blob": base64.StdEncoding.EncodeToString([]byte("secret"))}}}
	wantCode(t, c.call("session/prompt", map[string]any{"sessionId": sid, "prompt": blocks}, nil), -32603, "")
	if ents, _ := os.ReadDir(outside); len(ents) != 0 {
		t.Fatalf("written through the link: %v", ents)
	}
	if n := len(f.requests()); n != 0 {
		t.Fatalf("the refused prompt reached the provider: %d requests", n)
	}
}

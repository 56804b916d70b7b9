//go:build unix

package rpctest

import (
	"path/filepath"
	"syscall"
	"testing"

	"github.com/zeroclaw-go/zeroclaw/internal/api"
)

// A path naming a FIFO is refused at once: the daemon never waits for a writer that may not come.
func TestFileAttachRefusesFIFO(t *testing.T) {
	t.Parallel()
	d := Start(t)
	c := dialRC(t, d, "")
	c.newSession(api.SessionNewParams{SessionID: "att"})
	fifo := filepath.Join(t.TempDir(), "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	_, werr := c.attach("att", map[string]any{"path": fifo})
	wantErr(t, "fifo", werr, -32602, "not a regular file")
}

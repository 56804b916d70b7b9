//go:build unix

package tools

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// swapToOutside makes the hook that runs between the sandbox check and the file operation replace the
// workspace directory "sub" with a symlink to the outside directory: what a background process started by an
// earlier shell call could do at any moment.
func swapToOutside(t *testing.T, s sandbox) {
	t.Helper()
	testHookResolved = func() {
		testHookResolved = nil
		if err := os.Rename(filepath.Join(s.ws, "sub"), filepath.Join(s.ws, "sub.old")); err != nil {
			t.Error(err)
		}
		if err := os.Symlink(s.outside, filepath.Join(s.ws, "sub")); err != nil {
			t.Error(err)
		}
	}
	t.Cleanup(func() { testHookResolved = nil })
}

func TestFileToolsDoNotFollowASymlinkSwappedInAfterTheCheck(t *testing.T) {
	t.Parallel()
	t.Run("read", func(t *testing.T) {
		env, s := fileEnv(t, LevelSupervised)
		mustWrite(t, filepath.Join(s.ws, "sub", "outside.txt"), "inside copy")
		swapToOutside(t, s)
		r := Execute(t.Context(), env, call("file_read", map[string]any{"path": "sub/outside.txt"}))
		if !r.IsError || r.Output == "outside" {
			t.Fatalf("file_read through a swapped-in symlink = %+v; want a refusal, not the outside file", r)
		}
	})
	t.Run("write", func(t *testing.T) {
		env, s := fileEnv(t, LevelSupervised)
		swapToOutside(t, s)
		r := Execute(t.Context(), env, call("file_write", map[string]any{"path": "sub/planted.txt", "content": "x"}))
		if _, err := os.Lstat(filepath.Join(s.outside, "planted.txt")); err == nil {
			t.Fatalf("file_write landed outside the workspace through a swapped-in symlink: %+v", r)
		}
		if !r.IsError {
			t.Fatalf("file_write = %+v, want a refusal", r)
		}
	})
	t.Run("list", func(t *testing.T) {
		env, s := fileEnv(t, LevelSupervised)
		swapToOutside(t, s)
		r := Execute(t.Context(), env, call("file_list", map[string]any{"path": "sub"}))
		if !r.IsError || strings.Contains(r.Output, "outside.txt") {
			t.Fatalf("file_list through a swapped-in symlink = %+v", r)
		}
	})
}

// A FIFO in the workspace (mkfifo from a shell call) must not hang file_read forever: open(2) on a FIFO
// blocks until a writer appears, and nothing would ever cancel it.
func TestFileReadOfAFIFODoesNotHang(t *testing.T) {
	t.Parallel()
	env, s := fileEnv(t, LevelSupervised)
	fifo := filepath.Join(s.ws, "pipe")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	done := make(chan Result, 1)
	go func() { done <- Execute(t.Context(), env, call("file_read", map[string]any{"path": "pipe"})) }()
	select {
	case r := <-done:
		if !r.IsError || !strings.Contains(r.Output, "not a regular file") {
			t.Fatalf("file_read of a FIFO = %+v", r)
		}
	case <-time.After(20 * time.Second): // a hang guard, not a timing assertion
		// Unblock the stuck open so the test can end.
		if w, err := os.OpenFile(fifo, os.O_WRONLY, 0); err == nil {
			w.Close()
		}
		<-done
		t.Fatal("file_read of a FIFO blocked")
	}
}

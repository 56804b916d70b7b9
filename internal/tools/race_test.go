//go:build unix

package tools

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
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

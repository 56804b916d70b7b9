//go:build unix

package heartbeat

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// HEARTBEAT.md is read inside the workspace only: a symbolic link at it (to a secret outside, or inside), a
// FIFO, a directory or an oversized file is refused, never followed, blocked on or held.
func TestReadFileRefusesWhatIsNotAPlainFileInTheWorkspace(t *testing.T) {
	ws := t.TempDir()
	secret := filepath.Join(t.TempDir(), "secret.md")
	if err := os.WriteFile(secret, []byte("- exfiltrate\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(ws, FileName)
	if got, err := ReadFile(ws); err != nil || got != "" {
		t.Fatalf("missing file: %q, %v", got, err)
	}
	if err := os.Symlink(secret, path); err != nil {
		t.Fatal(err)
	}
	if got, err := ReadFile(ws); err == nil || strings.Contains(got, "exfiltrate") {
		t.Fatalf("a symlink out of the workspace was followed: %q, %v", got, err)
	}
	if err := EnsureFile(ws); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(secret); string(b) != "- exfiltrate\n" {
		t.Fatal("EnsureFile wrote through the symlink")
	}
	os.Remove(path)
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadFile(ws); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Fatalf("FIFO: %v", err)
	}
	os.Remove(path)
	if err := os.WriteFile(path, []byte(strings.Repeat("- x\n", MaxFileBytes/4+1)), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadFile(ws); !errors.Is(err, ErrFileTooLarge) {
		t.Fatalf("oversized: %v", err)
	}
	os.Remove(path)
	if err := EnsureFile(ws); err != nil {
		t.Fatal(err)
	}
	if got, err := ReadFile(ws); err != nil || got != DefaultFile {
		t.Fatalf("seeded file: %q, %v", got, err)
	}
	if err := os.WriteFile(path, []byte("- mine\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := EnsureFile(ws); err != nil {
		t.Fatal(err)
	}
	if got, _ := ReadFile(ws); got != "- mine\n" {
		t.Fatalf("EnsureFile replaced an existing file: %q", got)
	}
}

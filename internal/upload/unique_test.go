package upload

import (
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/zeroclaw-go/zeroclaw/internal/api"
)

// SaveUnique takes Save's path: a new 0600 file under a real uploads directory (never through a link), the
// client's name made safe, an earlier process's temporary files swept, the file bound enforced.
func TestSaveUnique(t *testing.T) {
	ws := filepath.Join(t.TempDir(), "ws") // created on first use
	p, err := SaveUnique(ws, "ev il.png", []byte("\x89PNG"))
	if err != nil {
		t.Fatal(err)
	}
	if dir, base := filepath.Split(p); dir != filepath.Join(ws, Dir)+string(filepath.Separator) ||
		!regexp.MustCompile(`^[0-9a-f]{12}-ev_il\.png$`).MatchString(base) {
		t.Fatalf("stored at %q", p)
	}
	if fi, err := os.Stat(p); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("stored file: %v %v", fi, err)
	}
	q, err := SaveUnique(ws, "ev il.png", []byte("\x89PNG"))
	if err != nil || q == p {
		t.Fatalf("second save: %q %v", q, err)
	}
	if _, err := SaveUnique(ws, "big", make([]byte, api.MaxFileBytes+1)); !errors.Is(err, ErrInvalid) {
		t.Fatalf("over the file bound: %v", err)
	}

	linked := t.TempDir()
	outside := t.TempDir()
	if err := os.Symlink(outside, filepath.Join(linked, Dir)); err != nil {
		t.Fatal(err)
	}
	if _, err := SaveUnique(linked, "x.bin", []byte("x")); err == nil {
		t.Fatal("saved through a linked uploads directory")
	}
	if ents, _ := os.ReadDir(outside); len(ents) != 0 {
		t.Fatalf("written through the link: %v", ents)
	}

	fresh := t.TempDir()
	if err := os.Mkdir(filepath.Join(fresh, Dir), 0o700); err != nil {
		t.Fatal(err)
	}
	stale := filepath.Join(fresh, Dir, ".0123456789ab-notes.md.tmp-0123456789abcdef")
	if err := os.WriteFile(stale, []byte("partial"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := SaveUnique(fresh, "", []byte("y")); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Fatalf("stale temp file kept: %v", err)
	}
}

func TestSafeName(t *testing.T) {
	for in, want := range map[string]string{
		"":                       "upload",
		"_":                      "upload",
		"...hidden":              "hidden",
		"a b/c\n.txt":            "a_b_c_.txt",
		strings.Repeat("x", 120): strings.Repeat("x", 100),
		"notes-v1.2_final.MD":    "notes-v1.2_final.MD",
		"\u00e9t\u00e9.png":      "_t_.png",
	} {
		if got := SafeName(in); got != want {
			t.Errorf("SafeName(%q) = %q, want %q", in, got, want)
		}
	}
}

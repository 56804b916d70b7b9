package tools

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestResolve(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	ws := canon(t, s.ws)

	mustSymlink(t, s.outside, filepath.Join(s.ws, "escape"))                               // inside -> outside dir
	mustSymlink(t, filepath.Join(s.outside, "nope", "new"), filepath.Join(s.ws, "dangle")) // dangling, outside
	mustSymlink(t, "sub", filepath.Join(s.ws, "tosub"))                                    // relative, inside
	mustSymlink(t, "../../outside", filepath.Join(s.ws, "sub", "up"))                      // relative, escapes
	mustSymlink(t, "loop2", filepath.Join(s.ws, "loop1"))
	mustSymlink(t, "loop1", filepath.Join(s.ws, "loop2"))
	mustSymlink(t, "secret", filepath.Join(s.ws, "alias")) // inside, but to a forbidden dir
	mustSymlink(t, filepath.Join(s.outside, "outside.txt"), filepath.Join(s.ws, "escape.txt"))

	cases := []struct {
		p       string
		want    string // canonical result when err is nil
		wantErr error
	}{
		{"inside.txt", filepath.Join(ws, "inside.txt"), nil},
		{".", ws, nil},
		{"", ws, nil},
		{"sub/../inside.txt", filepath.Join(ws, "inside.txt"), nil},
		{"new/dir/file.txt", filepath.Join(ws, "new", "dir", "file.txt"), nil},
		{"tosub/x", filepath.Join(ws, "sub", "x"), nil},
		{filepath.Join(s.ws, "sub"), filepath.Join(ws, "sub"), nil},
		{"inside.txt/../sub", filepath.Join(ws, "sub"), nil},
		{"..", "", ErrOutsideWorkspace},
		{"../outside/outside.txt", "", ErrOutsideWorkspace},
		{"sub/../../x", "", ErrOutsideWorkspace},
		{"new/../../x", "", ErrOutsideWorkspace},
		{"/etc/passwd", "", ErrOutsideWorkspace},
		{filepath.Join(s.outside, "outside.txt"), "", ErrOutsideWorkspace},
		{"escape", "", ErrOutsideWorkspace},
		{"escape/outside.txt", "", ErrOutsideWorkspace},
		{"escape.txt", "", ErrOutsideWorkspace},
		{"escape/new/file", "", ErrOutsideWorkspace},
		{"dangle", "", ErrOutsideWorkspace},
		{"sub/up/outside.txt", "", ErrOutsideWorkspace},
		{"escape/../inside.txt", "", ErrOutsideWorkspace}, // ".." applies after the symlink, as in the kernel
		{"secret/key.txt", "", ErrForbiddenPath},
		{"secret", "", ErrForbiddenPath},
		{"alias/key.txt", "", ErrForbiddenPath},
		{"./sub/../secret/new", "", ErrForbiddenPath},
	}
	for _, tc := range cases {
		got, err := Resolve(s.ws, tc.p, []string{"secret"})
		if tc.wantErr != nil {
			if !errors.Is(err, tc.wantErr) || got != "" {
				t.Errorf("Resolve(%q) = %q, %v; want %v", tc.p, got, err, tc.wantErr)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("Resolve(%q) = %q, %v; want %q", tc.p, got, err, tc.want)
		}
	}
	if _, err := Resolve(s.ws, "loop1/x", nil); err == nil || !strings.Contains(err.Error(), "symbolic links") {
		t.Errorf("symlink loop: %v", err)
	}
	if _, err := Resolve(s.ws, "secretive.txt", []string{"secret"}); err != nil {
		t.Errorf("a name sharing a forbidden prefix must not be forbidden: %v", err)
	}
	if _, err := Resolve("", "x", nil); !errors.Is(err, ErrNoWorkspace) {
		t.Errorf("no workspace: %v", err)
	}

}

func TestResolveWorkspaceBehindSymlink(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	link := filepath.Join(t.TempDir(), "wslink")
	mustSymlink(t, s.ws, link)
	got, err := Resolve(link, "inside.txt", nil)
	if err != nil || got != filepath.Join(canon(t, s.ws), "inside.txt") {
		t.Fatalf("Resolve via symlinked workspace = %q, %v", got, err)
	}
	if _, err := Resolve(link, "../outside", nil); !errors.Is(err, ErrOutsideWorkspace) {
		t.Fatalf("escape from symlinked workspace: %v", err)
	}
}

func TestResolveForbiddenHome(t *testing.T) {
	s := newSandbox(t)
	home := t.TempDir()
	t.Setenv("HOME", home)
	mustMkdir(t, filepath.Join(home, ".ssh"))
	mustSymlink(t, filepath.Join(home, ".ssh"), filepath.Join(s.ws, "keys"))
	forbidden := []string{"~/.ssh", "  ", "~/.aws/"}
	for _, p := range []string{filepath.Join(home, ".ssh", "id_ed25519"), "keys/id_ed25519", filepath.Join(home, ".aws", "credentials")} {
		if _, err := Resolve(s.ws, p, forbidden); !errors.Is(err, ErrForbiddenPath) {
			t.Errorf("Resolve(%q) = %v, want ErrForbiddenPath", p, err)
		}
	}
	// Outside the workspace but not forbidden: outside wins.
	if _, err := Resolve(s.ws, filepath.Join(home, "notes.txt"), forbidden); !errors.Is(err, ErrOutsideWorkspace) {
		t.Errorf("home file: %v", err)
	}
}

// FuzzResolve checks the sandbox invariant: a path Resolve accepts is canonical, inside the canonical
// workspace, outside every forbidden path, and is where the kernel would land.
func FuzzResolve(f *testing.F) {
	root := f.TempDir()
	ws := filepath.Join(root, "ws")
	outside := filepath.Join(root, "outside")
	for _, d := range []string{filepath.Join(ws, "a", "b"), filepath.Join(ws, "secret"), outside} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			f.Fatal(err)
		}
	}
	links := map[string]string{
		filepath.Join(ws, "out"):       outside,
		filepath.Join(ws, "rel"):       "../outside",
		filepath.Join(ws, "a", "up"):   "../..",
		filepath.Join(ws, "a", "in"):   "b",
		filepath.Join(ws, "dangle"):    filepath.Join(outside, "x", "y"),
		filepath.Join(ws, "sec"):       "secret",
		filepath.Join(ws, "loop"):      "loop",
		filepath.Join(ws, "a", "root"): "/",
	}
	for link, target := range links {
		if err := os.Symlink(target, link); err != nil {
			f.Fatal(err)
		}
	}
	wsCanon, err := filepath.EvalSymlinks(ws)
	if err != nil {
		f.Fatal(err)
	}
	secret := filepath.Join(wsCanon, "secret")
	for _, seed := range []string{"a/b", "../outside", "out/x", "rel", "a/up/outside", "a/in/../../b", "dangle",
		"sec/k", "loop/x", "a/root/etc", "/etc/passwd", "a/./b//c/..", "", ".", "...", "a/up/ws/a/b", "x/../../ws/a"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, p string) {
		got, err := Resolve(ws, p, []string{"secret"})
		if err != nil {
			if got != "" {
				t.Fatalf("Resolve(%q) returned %q with error %v", p, got, err)
			}
			return
		}
		if !filepath.IsAbs(got) || filepath.Clean(got) != got {
			t.Fatalf("Resolve(%q) = %q: not clean and absolute", p, got)
		}
		rel, rerr := filepath.Rel(wsCanon, got)
		if rerr != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			t.Fatalf("Resolve(%q) = %q escapes workspace %q", p, got, wsCanon)
		}
		if got == secret || strings.HasPrefix(got, secret+string(filepath.Separator)) {
			t.Fatalf("Resolve(%q) = %q is forbidden", p, got)
		}
		if real, err := filepath.EvalSymlinks(got); err == nil && real != got {
			t.Fatalf("Resolve(%q) = %q is not canonical (really %q)", p, got, real)
		}
	})
}

package gateway_test

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/zeroclaw-go/zeroclaw/internal/rpctest"
)

// POST /api/browse/mkdir and DELETE /api/browse/rmdir change <install>/shared/ only: the paths are confined as
// GET /api/browse's (.., absolute, NUL, a symlink out, the install's data), rmdir removes only an empty
// directory and never follows a link, and the install's own top-level directories are kept.
func TestDashboardSharedMkdirRmdir(t *testing.T) {
	t.Parallel()
	d, g, code := rpctest.StartGateway(t, rpctest.GatewayConfig)
	auth := rpctest.PairOnce(t, g, code)
	js := "Content-Type: application/json"
	shared := filepath.Join(d.ConfigDir, "shared")
	g.Do("GET", "/api/browse", nil, auth).Want(t, 200) // creates shared/
	exists := func(p string) bool {
		_, err := os.Lstat(p)
		return err == nil
	}
	mkdir := func(path string, want int) rpctest.Response {
		t.Helper()
		return g.Do("POST", "/api/browse/mkdir", map[string]any{"path": path}, auth, js).Want(t, want)
	}
	rmdir := func(path string, want int) rpctest.Response {
		t.Helper()
		return g.Do("DELETE", "/api/browse/rmdir", map[string]any{"path": path}, auth, js).Want(t, want)
	}

	if r := mkdir("kb/notes", 200); r.Body["created"] != "kb/notes" {
		t.Errorf("mkdir answer: %s", r.Raw)
	}
	if st, err := os.Stat(filepath.Join(shared, "kb", "notes")); err != nil || !st.IsDir() {
		t.Fatalf("mkdir made no directory: %v", err)
	}
	mkdir("kb/notes", 200) // an existing directory is no error, as upstream
	if r := g.Do("GET", "/api/browse?path=kb", nil, auth).Want(t, 200); !strings.Contains(string(r.Raw), `{"kind":"dir","name":"notes"}`) {
		t.Errorf("browse after mkdir: %s", r.Raw)
	}
	if err := os.WriteFile(filepath.Join(shared, "kb", "file.md"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	mkdir("kb/file.md", 403) // over a file
	mkdir("kb/file.md/sub", 404)

	outside := t.TempDir()
	for _, p := range []string{"..", "../escaped", "kb/../../escaped", "a\x00b"} {
		mkdir(p, 400)
	}
	for _, p := range []string{".", filepath.Join(outside, "abs"), filepath.Join(d.ConfigDir, "data", "x"), filepath.Join(d.ConfigDir, "agents")} {
		mkdir(p, 403)
	}
	if exists(filepath.Join(d.ConfigDir, "escaped")) || exists(filepath.Join(outside, "abs")) || exists(filepath.Join(d.ConfigDir, "data", "x")) {
		t.Fatal("mkdir created a directory outside shared/")
	}
	if r := mkdir(strings.Repeat("x", 300), 400); !strings.Contains(string(r.Raw), "too long") { // NAME_MAX is 255
		t.Errorf("a name too long: %s", r.Raw)
	}
	g.Do("POST", "/api/browse/mkdir", map[string]any{}, auth, js).Want(t, 400)
	g.Do("POST", "/api/browse/mkdir", `{"path": 7}`, auth, js).Want(t, 400)

	// rmdir: a directory that holds something stays, with a 409 that says why.
	r := rmdir("kb", 409)
	if msg, _ := r.Body["error"].(string); !strings.Contains(msg, "not empty") || !strings.Contains(msg, "kb") {
		t.Errorf("rmdir of a non-empty directory: %s", r.Raw)
	}
	if !exists(filepath.Join(shared, "kb", "file.md")) || !exists(filepath.Join(shared, "kb", "notes")) {
		t.Fatal("a refused rmdir removed something")
	}
	if r := rmdir("kb/notes", 200); r.Body["removed"] != "kb/notes" {
		t.Errorf("rmdir answer: %s", r.Raw)
	}
	if exists(filepath.Join(shared, "kb", "notes")) {
		t.Fatal("rmdir left the directory")
	}
	rmdir("kb/notes", 404)
	rmdir("kb/file.md", 400) // a file is not a directory, and stays
	if !exists(filepath.Join(shared, "kb", "file.md")) {
		t.Fatal("rmdir removed a file")
	}
	for _, p := range []string{"..", "../" + filepath.Base(outside), "a\x00b"} {
		rmdir(p, 400)
	}
	for _, p := range []string{".", "/", outside, filepath.Join(d.ConfigDir, "data")} {
		rmdir(p, 403)
	}
	if !exists(outside) || !exists(filepath.Join(d.ConfigDir, "data")) {
		t.Fatal("rmdir reached outside shared/")
	}
	g.Do("DELETE", "/api/browse/rmdir", map[string]any{"path": ""}, auth, js).Want(t, 400)

	// The install's own directories of shared/ are kept (however the path spells them); what they hold is not.
	mkdir("skills/empty", 200)
	for _, p := range []string{"skills", "./skills/", "knowledge"} {
		if p == "knowledge" {
			mkdir(p, 200)
		}
		if r := rmdir(p, 403); !strings.Contains(string(r.Raw), "kept by the install") {
			t.Errorf("rmdir %s: %s", p, r.Raw)
		}
	}
	if r := g.Do("GET", "/api/browse", nil, auth).Want(t, 200); !strings.Contains(string(r.Raw), `{"kind":"dir","name":"skills","protected":true}`) || !strings.Contains(string(r.Raw), `{"kind":"dir","name":"kb"}`) {
		t.Errorf("browse marks the kept directories protected, and only them: %s", r.Raw)
	}
	if r := g.Do("GET", "/api/browse?path=skills", nil, auth).Want(t, 200); strings.Contains(string(r.Raw), "protected") {
		t.Errorf("below the top level nothing is kept: %s", r.Raw)
	}
	rmdir("skills/empty", 200)
	if !exists(filepath.Join(shared, "skills")) {
		t.Fatal("shared/skills was removed")
	}

	if runtime.GOOS == "windows" {
		return
	}
	// Symbolic links: never followed out, never removed as if they were their target.
	if err := os.Symlink(outside, filepath.Join(shared, "out")); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(shared, "real"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("real", filepath.Join(shared, "in")); err != nil {
		t.Fatal(err)
	}
	mkdir("out/x", 403)
	if exists(filepath.Join(outside, "x")) {
		t.Fatal("mkdir followed a symlink out of shared/")
	}
	rmdir("out", 400)
	rmdir("in", 400)
	if !exists(filepath.Join(shared, "out")) || !exists(filepath.Join(shared, "in")) || !exists(filepath.Join(shared, "real")) || !exists(outside) {
		t.Fatal("rmdir removed a link or its target")
	}
	rmdir("out/", 400) // a trailing slash does not make the link a directory
	if !exists(outside) {
		t.Fatal("rmdir out/ removed the link's target")
	}
}

package tools

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// installTree is an install root laid out as state.md §1 says, with the agent's workspace inside it.
type installTree struct {
	root, ws, home string
}

func newInstallTree(t *testing.T) installTree {
	t.Helper()
	home := t.TempDir()
	it := installTree{home: home, root: filepath.Join(home, ".zeroclaw")}
	it.ws = filepath.Join(it.root, "agents", "default", "workspace")
	mustMkdir(t, it.ws)
	mustMkdir(t, filepath.Join(it.root, "data", "sessions"))
	mustMkdir(t, filepath.Join(it.root, "agents", "other", "workspace"))
	mustWrite(t, filepath.Join(it.root, "config.toml"), "schema_version = 3\n")
	mustWrite(t, filepath.Join(it.root, ".secret_key"), strings.Repeat("ab", 32))
	mustWrite(t, filepath.Join(it.root, "data", "sessions", "sessions.db"), "sqlite")
	mustWrite(t, filepath.Join(it.ws, "notes.txt"), "mine")
	return it
}

// env is the most permissive policy there is (full, not workspace-only, nothing forbidden): only the install
// root's protection stands between the model and the daemon's files. workspace is the session's cwd.
func (it installTree) env(workspace string) Env {
	return Env{Workspace: workspace, Policy: Policy{Level: LevelFull, WorkspaceOnly: false,
		Protected: Protected{Roots: []string{it.root}, Except: []string{it.ws}}}}
}

// No file tool reaches config.toml, .secret_key or data/, whatever the cwd, the level and the path's spelling
// (absolute, "..", a symlink in the workspace, a symlinked directory), and nothing there is written. The
// workspace inside the install root stays usable.
func TestInstallRootIsOutOfReach(t *testing.T) {
	t.Parallel()
	it := newInstallTree(t)
	mustSymlink(t, filepath.Join(it.root, ".secret_key"), filepath.Join(it.ws, "key-link"))
	mustSymlink(t, it.root, filepath.Join(it.ws, "root-link"))
	mustSymlink(t, filepath.Join(it.root, "data"), filepath.Join(it.home, "data-link"))
	for _, cwd := range []string{it.ws, it.home, "/"} {
		env := it.env(cwd)
		for _, p := range []string{
			filepath.Join(it.root, ".secret_key"),
			filepath.Join(it.root, "config.toml"),
			filepath.Join(it.root, "data", "sessions", "sessions.db"),
			filepath.Join(it.ws, "..", "..", "..", ".secret_key"),
			filepath.Join(it.ws, "key-link"),
			filepath.Join(it.ws, "root-link", "config.toml"),
			filepath.Join(it.home, "data-link", "sessions", "sessions.db"),
			filepath.Join(it.root, "agents", "other", "workspace", "x"),
		} {
			for _, c := range []Call{
				call(NameFileRead, map[string]any{"path": p}),
				call(NameFileWrite, map[string]any{"path": p, "content": "pwned"}),
			} {
				if d := env.Policy.Decide(c, cwd); d.Verdict != Refuse || !strings.Contains(d.Reason, "install root") {
					t.Errorf("cwd %s: %s %s: decision %v %q, want refused (install root)", cwd, c.Name, p, d.Verdict, d.Reason)
				}
				r := Execute(t.Context(), env, c)
				if !r.IsError || !strings.Contains(r.Output, "install root") {
					t.Errorf("cwd %s: %s %s = %+v, want refused (install root)", cwd, c.Name, p, r)
				}
			}
		}
		for _, dir := range []string{it.root, filepath.Join(it.root, "data"), filepath.Join(it.ws, "root-link"), filepath.Join(it.ws, "..", "..")} {
			if r := Execute(t.Context(), env, call(NameFileList, map[string]any{"path": dir})); !r.IsError || !strings.Contains(r.Output, "install root") {
				t.Errorf("cwd %s: file_list %s = %+v, want refused", cwd, dir, r)
			}
		}
	}
	if got := mustRead(t, filepath.Join(it.root, ".secret_key")); got != strings.Repeat("ab", 32) {
		t.Fatalf(".secret_key was changed: %q", got)
	}
	if got := mustRead(t, filepath.Join(it.root, "config.toml")); got != "schema_version = 3\n" {
		t.Fatalf("config.toml was changed: %q", got)
	}
	if _, err := os.Stat(filepath.Join(it.root, "agents", "other", "workspace", "x")); err == nil {
		t.Fatal("another agent's workspace inside the install root was written")
	}
	// The agent's own workspace is usable, by relative and by absolute path.
	env := it.env(it.ws)
	if r := Execute(t.Context(), env, call(NameFileRead, map[string]any{"path": "notes.txt"})); r.IsError || r.Output != "mine" {
		t.Fatalf("own workspace read: %+v", r)
	}
	if r := Execute(t.Context(), env, call(NameFileWrite, map[string]any{"path": filepath.Join(it.ws, "new.txt"), "content": "ok"})); r.IsError {
		t.Fatalf("own workspace write: %+v", r)
	}
	if r := Execute(t.Context(), env, call(NameFileList, map[string]any{})); r.IsError || !strings.Contains(r.Output, "notes.txt") {
		t.Fatalf("own workspace list: %+v", r)
	}
}

// A hard link to .secret_key made inside the workspace is refused too: its path says nothing, its inode does.
func TestInstallRootHardLinkRefused(t *testing.T) {
	t.Parallel()
	it := newInstallTree(t)
	if err := os.Link(filepath.Join(it.root, ".secret_key"), filepath.Join(it.ws, "innocent.txt")); err != nil {
		t.Fatal(err)
	}
	r := Execute(t.Context(), it.env(it.ws), call(NameFileRead, map[string]any{"path": "innocent.txt"}))
	if !r.IsError || !strings.Contains(r.Output, "install root") || strings.Contains(r.Output, "abab") {
		t.Fatalf("hard link read = %+v, want refused", r)
	}
}

// A symlink swapped in between the sandbox check and the open is caught by the check on the opened file.
func TestInstallRootSwapAfterCheckRefused(t *testing.T) {
	t.Parallel()
	it := newInstallTree(t)
	target := filepath.Join(it.ws, "swap.txt")
	mustWrite(t, target, "harmless")
	testHookResolved = func() {
		_ = os.Remove(target)
		_ = os.Symlink(filepath.Join("..", "..", "..", ".secret_key"), target) // relative: os.Root follows it
	}
	defer func() { testHookResolved = nil }()
	// The workspace is the home directory, so the install root lies inside it and os.Root would follow the link.
	env := it.env(it.home)
	r := Execute(t.Context(), env, call(NameFileRead, map[string]any{"path": filepath.Join(it.ws, "swap.txt")}))
	if !r.IsError || strings.Contains(r.Output, "abab") {
		t.Fatalf("swapped read = %+v, want refused", r)
	}
}

// The shell never runs with its working directory inside the install root.
func TestShellRefusesProtectedCwd(t *testing.T) {
	t.Parallel()
	it := newInstallTree(t)
	r := Execute(t.Context(), it.env(filepath.Join(it.root, "data")), call(NameShell, map[string]any{"command": "cat ../.secret_key"}))
	if !r.IsError || !strings.Contains(r.Output, "install root") || strings.Contains(r.Output, "abab") {
		t.Fatalf("shell in data/ = %+v, want refused", r)
	}
	if r := Execute(t.Context(), it.env(it.ws), call(NameShell, map[string]any{"command": "cat notes.txt"})); r.IsError || !strings.Contains(r.Output, "mine") {
		t.Fatalf("shell in the workspace = %+v", r)
	}
}

// An exception that is a root, contains one or lies in data/ exempts nothing.
func TestProtectedExceptionsBounded(t *testing.T) {
	t.Parallel()
	it := newInstallTree(t)
	for _, except := range []string{it.root, it.home, filepath.Join(it.root, "data"), filepath.Join(it.root, "data", "sessions")} {
		g := Protected{Roots: []string{it.root}, Except: []string{except}}
		if !g.covers(canon(t, filepath.Join(it.root, "data", "sessions", "sessions.db"))) {
			t.Errorf("exception %s exempted data/", except)
		}
	}
}

package install

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func envOf(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

func writeFile(t *testing.T, path string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte("schema_version = 3\n"), 0o600); err != nil {
		t.Fatal(err)
	}
}

func TestResolve(t *testing.T) {
	home := t.TempDir()
	base := t.TempDir()

	// (a) D holds config.toml.
	installA := filepath.Join(base, "a-install")
	writeFile(t, filepath.Join(installA, "config.toml"))
	// (b) parent(D)/.zeroclaw/config.toml exists; D has an arbitrary name.
	parentB := filepath.Join(base, "b")
	writeFile(t, filepath.Join(parentB, ".zeroclaw", "config.toml"))
	// (c) nothing exists, but basename(D) is data or workspace.
	parentC := filepath.Join(base, "c")

	tests := []struct {
		name     string
		flag     string
		env      map[string]string
		root     string
		data     string
		warnings []string // substrings, one per expected warning, in order
	}{
		{
			name: "default",
			root: filepath.Join(home, ".zeroclaw"),
			data: filepath.Join(home, ".zeroclaw", "data"),
		},
		{
			name: "blank values count as unset",
			flag: "  ",
			env:  map[string]string{EnvConfigDir: "", EnvDataDir: " \t", EnvWorkspace: "\n"},
			root: filepath.Join(home, ".zeroclaw"),
			data: filepath.Join(home, ".zeroclaw", "data"),
		},
		{
			name: "flag",
			flag: "/srv/zc",
			root: "/srv/zc",
			data: "/srv/zc/data",
		},
		{
			name: "flag is trimmed and cleaned",
			flag: " /srv/zc/ ",
			root: "/srv/zc",
			data: "/srv/zc/data",
		},
		{
			name: "config dir env",
			env:  map[string]string{EnvConfigDir: "/srv/zc"},
			root: "/srv/zc",
			data: "/srv/zc/data",
		},
		{
			name: "config dir tilde",
			env:  map[string]string{EnvConfigDir: "~/zc"},
			root: filepath.Join(home, "zc"),
			data: filepath.Join(home, "zc", "data"),
		},
		{
			name: "bare tilde",
			flag: "~",
			root: home,
			data: filepath.Join(home, "data"),
		},
		{
			name: "tilde user is not expanded",
			flag: "/x/~bob",
			root: "/x/~bob",
			data: "/x/~bob/data",
		},
		{
			name:     "config dir beats data dir with a warning",
			env:      map[string]string{EnvConfigDir: "/srv/zc", EnvDataDir: installA},
			root:     "/srv/zc",
			data:     "/srv/zc/data",
			warnings: []string{"ZEROCLAW_DATA_DIR ignored because ZEROCLAW_CONFIG_DIR is set"},
		},
		{
			name: "config dir beats workspace and data dir",
			env:  map[string]string{EnvConfigDir: "/srv/zc", EnvDataDir: "/d", EnvWorkspace: "/w"},
			root: "/srv/zc",
			data: "/srv/zc/data",
			warnings: []string{
				"ZEROCLAW_DATA_DIR ignored because ZEROCLAW_CONFIG_DIR is set",
				"ZEROCLAW_WORKSPACE ignored because ZEROCLAW_CONFIG_DIR is set",
			},
		},
		{
			name:     "flag beats a different config dir env",
			flag:     "/srv/flag",
			env:      map[string]string{EnvConfigDir: "/srv/env", EnvDataDir: "/d"},
			root:     "/srv/flag",
			data:     "/srv/flag/data",
			warnings: []string{"ZEROCLAW_CONFIG_DIR ignored because --config-dir", "ZEROCLAW_DATA_DIR ignored because --config-dir"},
		},
		{
			name: "flag equal to env is not a conflict",
			flag: "/srv/zc",
			env:  map[string]string{EnvConfigDir: "/srv/zc"},
			root: "/srv/zc",
			data: "/srv/zc/data",
		},
		{
			name: "data dir (a): D holds config.toml",
			env:  map[string]string{EnvDataDir: installA},
			root: installA,
			data: filepath.Join(installA, "data"),
		},
		{
			name: "data dir (b): sibling .zeroclaw holds config.toml",
			env:  map[string]string{EnvDataDir: filepath.Join(parentB, "mydata")},
			root: filepath.Join(parentB, ".zeroclaw"),
			data: filepath.Join(parentB, "mydata"),
		},
		{
			name: "data dir (c): basename data",
			env:  map[string]string{EnvDataDir: filepath.Join(parentC, "data")},
			root: filepath.Join(parentC, ".zeroclaw"),
			data: filepath.Join(parentC, "data"),
		},
		{
			name: "data dir (c): basename workspace",
			env:  map[string]string{EnvDataDir: filepath.Join(parentC, "workspace")},
			root: filepath.Join(parentC, ".zeroclaw"),
			data: filepath.Join(parentC, "workspace"),
		},
		{
			name: "data dir (d): fresh install at D",
			env:  map[string]string{EnvDataDir: filepath.Join(base, "fresh")},
			root: filepath.Join(base, "fresh"),
			data: filepath.Join(base, "fresh", "data"),
		},
		{
			name: "data dir tilde",
			env:  map[string]string{EnvDataDir: "~/zdata"},
			root: filepath.Join(home, "zdata"),
			data: filepath.Join(home, "zdata", "data"),
		},
		{
			name:     "data dir beats workspace",
			env:      map[string]string{EnvDataDir: installA, EnvWorkspace: "/w"},
			root:     installA,
			data:     filepath.Join(installA, "data"),
			warnings: []string{"ZEROCLAW_WORKSPACE ignored because ZEROCLAW_DATA_DIR is set"},
		},
		{
			name:     "workspace is deprecated but follows the data dir rules",
			env:      map[string]string{EnvWorkspace: filepath.Join(parentB, "workspace")},
			root:     filepath.Join(parentB, ".zeroclaw"),
			data:     filepath.Join(parentB, "workspace"),
			warnings: []string{"ZEROCLAW_WORKSPACE is deprecated"},
		},
		{
			name:     "workspace (a)",
			env:      map[string]string{EnvWorkspace: installA},
			root:     installA,
			data:     filepath.Join(installA, "data"),
			warnings: []string{"ZEROCLAW_WORKSPACE is deprecated"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l, err := Resolve(tt.flag, envOf(tt.env), home)
			if err != nil {
				t.Fatalf("Resolve: %v", err)
			}
			if l.Root != tt.root || l.DataDir != tt.data {
				t.Errorf("got root %q data %q, want root %q data %q", l.Root, l.DataDir, tt.root, tt.data)
			}
			if len(l.Warnings) != len(tt.warnings) {
				t.Fatalf("warnings %q, want %d matching %q", l.Warnings, len(tt.warnings), tt.warnings)
			}
			for i, w := range tt.warnings {
				if !strings.Contains(l.Warnings[i], w) {
					t.Errorf("warning %d = %q, want it to contain %q", i, l.Warnings[i], w)
				}
			}
		})
	}
}

func TestResolveRelativeIsMadeAbsolute(t *testing.T) {
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	l, err := Resolve("rel/zc", envOf(nil), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(wd, "rel", "zc"); l.Root != want {
		t.Errorf("root %q, want %q", l.Root, want)
	}
}

func TestResolveNeedsHome(t *testing.T) {
	for _, tc := range []struct {
		name string
		flag string
		env  map[string]string
	}{
		{"default", "", nil},
		{"tilde flag", "~/zc", nil},
		{"tilde data dir", "", map[string]string{EnvDataDir: "~"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Resolve(tc.flag, envOf(tc.env), " ")
			if !errors.Is(err, ErrNoHome) {
				t.Fatalf("err = %v, want ErrNoHome", err)
			}
		})
	}
	// An absolute path needs no home.
	if _, err := Resolve("/srv/zc", envOf(nil), ""); err != nil {
		t.Fatalf("absolute flag without home: %v", err)
	}
}

func TestLayoutPaths(t *testing.T) {
	l := Layout{Root: "/i", DataDir: "/d"}
	got := []string{l.ConfigPath(), l.SecretKeyPath(), l.SessionsDir(), l.StateDir(), l.AgentWorkspace("coder"),
		l.InstallLockPath(), l.SocketPath(), l.SharedDir()}
	want := []string{"/i/config.toml", "/i/.secret_key", "/d/sessions", "/d/state", "/i/agents/coder/workspace",
		"/d/daemon.lock", "/d/daemon.sock", "/i/shared"}
	if !slices.Equal(got, want) {
		t.Errorf("paths\n got %q\nwant %q", got, want)
	}
}

func TestValidateAlias(t *testing.T) {
	for _, ok := range []string{"default", "coder-2", "a.b"} {
		if err := ValidateAlias(ok); err != nil {
			t.Errorf("ValidateAlias(%q) = %v", ok, err)
		}
	}
	for _, bad := range []string{"", ".", "..", "a/b", `a\b`, "../x", "a\x00"} {
		if err := ValidateAlias(bad); !errors.Is(err, ErrBadAlias) {
			t.Errorf("ValidateAlias(%q) = %v, want ErrBadAlias", bad, err)
		}
	}
}

func TestEndpoint(t *testing.T) {
	l := Layout{Root: "/i", DataDir: "/d"}
	if got := l.Endpoint(envOf(nil)); got != "/d/daemon.sock" {
		t.Errorf("default endpoint %q", got)
	}
	if got := l.Endpoint(envOf(map[string]string{EnvSocket: ""})); got != "/d/daemon.sock" {
		t.Errorf("empty ZEROCLAW_SOCKET: %q", got)
	}
	// Verbatim: not trimmed, not expanded.
	if got := l.Endpoint(envOf(map[string]string{EnvSocket: "~/my zeroclaw.sock "})); got != "~/my zeroclaw.sock " {
		t.Errorf("ZEROCLAW_SOCKET not verbatim: %q", got)
	}
}

func TestPipeName(t *testing.T) {
	// Golden values: sha256 of the data dir's UTF-8 bytes, first 16 hex digits.
	cases := map[string]string{
		`C:\Users\me\.zeroclaw\data`: `\\.\pipe\zeroclaw-5da466d30600f398`,
		"/home/me/.zeroclaw/data":    `\\.\pipe\zeroclaw-ab5d226171c109d3`,
	}
	for dir, want := range cases {
		if got := PipeName(dir); got != want {
			t.Errorf("PipeName(%q) = %q, want %q", dir, got, want)
		}
	}
}

func TestEnsure(t *testing.T) {
	base := t.TempDir()
	l := Layout{Root: filepath.Join(base, "zc"), DataDir: filepath.Join(base, "zc", "data")}
	if err := l.Ensure(); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{l.Root, l.DataDir} {
		fi, err := os.Stat(d)
		if err != nil {
			t.Fatal(err)
		}
		if !fi.IsDir() || fi.Mode().Perm() != 0o700 {
			t.Errorf("%s: mode %v, want dir 0700", d, fi.Mode())
		}
	}
}

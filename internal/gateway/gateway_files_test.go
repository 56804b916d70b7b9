package gateway_test

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/zeroclaw-go/zeroclaw/internal/rpctest"
)

const filesConfig = rpctest.GatewayConfig + `
[agents.wide]
model_provider = "echo.default"
risk_profile = "supervised"
`

// The workspace explorer and the shared/ browser: confined to their directory whatever the path says (.., an
// absolute path, a symlink out, NUL), the install's config, secrets and data unreachable even from a workspace
// configured as the install root; changes are the owner's.
func TestDashboardWorkspaceFiles(t *testing.T) {
	t.Parallel()
	d, g, code := rpctest.StartGateway(t, filesConfig)
	auth := rpctest.PairOnce(t, g, code)
	js := "Content-Type: application/json"
	ws := filepath.Join(d.ConfigDir, "agents", "default", "workspace")
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.MkdirAll(filepath.Join(ws, "notes"), 0o755))
	must(os.WriteFile(filepath.Join(ws, "notes", "a.md"), []byte("# hello"), 0o644))
	must(os.WriteFile(filepath.Join(ws, "blob.bin"), []byte{0, 1, 2, 0xff}, 0o644))
	outside := filepath.Join(t.TempDir(), "secret.txt")
	must(os.WriteFile(outside, []byte("outside-secret"), 0o600))
	if runtime.GOOS != "windows" {
		must(os.Symlink(outside, filepath.Join(ws, "escape.txt")))
		must(os.Symlink(filepath.Dir(outside), filepath.Join(ws, "escape-dir")))
	}
	base := "/api/agents/default/workspace/"

	r := g.Do("GET", base+"list", nil, auth).Want(t, 200)
	if !strings.Contains(string(r.Raw), `{"kind":"dir","name":"notes"}`) || !strings.Contains(string(r.Raw), `{"kind":"file","name":"blob.bin","size":4}`) {
		t.Fatalf("list: %s", r.Raw)
	}
	if r := g.Do("GET", base+"list?path=notes", nil, auth).Want(t, 200); r.Body["path"] != "notes" {
		t.Errorf("list notes: %s", r.Raw)
	}
	if r := g.Do("GET", base+"read?path=notes/a.md", nil, auth).Want(t, 200); r.Body["content"] != "# hello" || r.Body["encoding"] != "utf8" || r.Body["is_text"] != true {
		t.Errorf("read text: %s", r.Raw)
	}
	if r := g.Do("GET", base+"read?path=blob.bin", nil, auth).Want(t, 200); r.Body["content"] != "AAEC/w==" || r.Body["encoding"] != "base64" {
		t.Errorf("read binary: %s", r.Raw)
	}

	hostile := []struct {
		path string
		code int
	}{
		{"../../config.toml", 400},
		{"notes/../../../.secret_key", 400},
		{"%00", 400},
		{"notes%00/a.md", 400},
		{url(filepath.Join(d.ConfigDir, "config.toml")), 403}, // absolute, outside the workspace
		{url(outside), 403},
		{"missing.md", 404},
	}
	if runtime.GOOS != "windows" {
		hostile = append(hostile, struct {
			path string
			code int
		}{"escape.txt", 403}, struct {
			path string
			code int
		}{"escape-dir/secret.txt", 403})
	}
	for _, h := range hostile {
		for _, route := range []string{"read", "list"} {
			r := g.Do("GET", base+route+"?path="+h.path, nil, auth)
			if r.Code != h.code {
				t.Errorf("%s %q: %d %s, want %d", route, h.path, r.Code, r.Raw, h.code)
			}
			if strings.Contains(string(r.Raw), "outside-secret") || strings.Contains(string(r.Raw), "enc2:") {
				t.Errorf("%s %q leaked: %s", route, h.path, r.Raw)
			}
		}
	}

	// Changes: mkdir, move, remove; never the workspace itself, never outside.
	g.Do("POST", base+"mkdir", map[string]any{"path": "drafts/2026"}, auth, js).Want(t, 200)
	g.Do("POST", base+"move", map[string]any{"from": "drafts", "to": "old"}, auth, js).Want(t, 200)
	if _, err := os.Stat(filepath.Join(ws, "old", "2026")); err != nil {
		t.Errorf("after move: %v", err)
	}
	g.Do("POST", base+"move", map[string]any{"from": "old", "to": "notes"}, auth, js).Want(t, 403) // exists
	g.Do("POST", base+"move", map[string]any{"from": "old", "to": "../old"}, auth, js).Want(t, 400)
	g.Do("POST", base+"move", map[string]any{"from": "old", "to": url(filepath.Join(d.ConfigDir, "old"))}, auth, js).Want(t, 403)
	g.Do("DELETE", base+"path", map[string]any{"path": "old"}, auth, js).Want(t, 200)
	g.Do("DELETE", base+"path", map[string]any{"path": "."}, auth, js).Want(t, 403)
	g.Do("DELETE", base+"path", map[string]any{"path": ws}, auth, js).Want(t, 403)
	g.Do("DELETE", base+"path", map[string]any{"path": "../../../data"}, auth, js).Want(t, 400)
	g.Do("POST", base+"mkdir", map[string]any{"path": "../../../data/x"}, auth, js).Want(t, 400)
	if _, err := os.Stat(filepath.Join(ws, "old")); !os.IsNotExist(err) {
		t.Errorf("old survived its removal: %v", err)
	}
	if runtime.GOOS != "windows" {
		g.Do("DELETE", base+"path", map[string]any{"path": "escape-dir/secret.txt"}, auth, js).Want(t, 403)
		if _, err := os.Stat(outside); err != nil {
			t.Errorf("the file outside was touched: %v", err)
		}
	}
	g.Do("GET", "/api/agents/nope/workspace/list", nil, auth).Want(t, 404)

	// A workspace configured as the install root reaches none of the install.
	g.Do("PUT", "/api/config/prop", map[string]any{"path": "agents.wide.workspace.path", "value": d.ConfigDir}, auth, js).Want(t, 200)
	wide := "/api/agents/wide/workspace/"
	for _, p := range []string{"read?path=config.toml", "read?path=.secret_key", "read?path=data/sessions.db", "list?path=data", "list"} {
		if r := g.Do("GET", wide+p, nil, auth); r.Code != 403 {
			t.Errorf("wide %s: %d %s", p, r.Code, r.Raw)
		}
	}
	g.Do("DELETE", wide+"path", map[string]any{"path": "data"}, auth, js).Want(t, 403)
	g.Do("POST", wide+"mkdir", map[string]any{"path": "data/x"}, auth, js).Want(t, 403)
	if _, err := os.Stat(filepath.Join(d.ConfigDir, "config.toml")); err != nil {
		t.Fatal(err)
	}

	// shared/: listed, and nothing beside it.
	shared := filepath.Join(d.ConfigDir, "shared")
	must(os.MkdirAll(filepath.Join(shared, "kb"), 0o755))
	if r := g.Do("GET", "/api/browse", nil, auth).Want(t, 200); !strings.Contains(string(r.Raw), `{"kind":"dir","name":"kb"}`) || r.Body["path"] != "" {
		t.Errorf("browse: %s", r.Raw)
	}
	g.Do("GET", "/api/browse?path=..", nil, auth).Want(t, 400)
	g.Do("GET", "/api/browse?path="+url(filepath.Join(d.ConfigDir, "data")), nil, auth).Want(t, 403)
}

// url escapes a path for a query string (enough for the temp paths here).
func url(p string) string {
	return strings.NewReplacer("%", "%25", "&", "%26", "#", "%23", "+", "%2B", " ", "%20").Replace(filepath.ToSlash(p))
}

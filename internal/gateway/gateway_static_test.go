package gateway_test

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/zeroclaw-go/zeroclaw/internal/rpctest"
)

// fakeDist is a small dashboard build as upstream's vite config makes it (base /_app/), plus a secret beside
// it and symlinks into and out of it.
func fakeDist(t *testing.T) string {
	t.Helper()
	top := t.TempDir()
	dist := filepath.Join(top, "dist")
	for name, body := range map[string]string{
		"index.html":           `<!doctype html><html><head><script type="module" src="/_app/assets/index-abc.js"></script><link rel="stylesheet" href="/_app/assets/index-abc.css"></head><body><div id="root"></div></body></html>`,
		"assets/index-abc.js":  "console.log('ok');",
		"assets/index-abc.css": "body{}",
		"logo.svg":             "<svg/>",
		"fonts/x.woff2":        "w",
	} {
		p := filepath.Join(dist, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(top, "secret.txt"), []byte("outside-secret"), 0o600); err != nil {
		t.Fatal(err)
	}
	if runtime.GOOS != "windows" {
		if err := os.Symlink(filepath.Join(top, "secret.txt"), filepath.Join(dist, "escape.txt")); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(top, filepath.Join(dist, "up")); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink("logo.svg", filepath.Join(dist, "alias.svg")); err != nil {
			t.Fatal(err)
		}
	}
	return dist
}

// gateway.web_dist_dir: the build's files under /_app/ with their types and cache rules, index.html for the
// dashboard's pages (not for /api/), nothing outside the directory, no token needed.
func TestGatewayWebDist(t *testing.T) {
	t.Parallel()
	dist := fakeDist(t)
	_, g, _ := rpctest.StartGateway(t, rpctest.GatewayConfig+"\n[gateway]\nweb_dist_dir = \""+filepath.ToSlash(dist)+"\"\n")

	for _, c := range []struct{ path, ctype, cache, body string }{
		{"/_app/assets/index-abc.js", "text/javascript; charset=utf-8", "public, max-age=31536000, immutable", "console.log('ok');"},
		{"/_app/assets/index-abc.css", "text/css; charset=utf-8", "public, max-age=31536000, immutable", "body{}"},
		{"/_app/logo.svg", "image/svg+xml", "no-cache", "<svg/>"},
		{"/_app/fonts/x.woff2", "font/woff2", "no-cache", "w"},
	} {
		r := g.Do("GET", c.path, nil).Want(t, 200)
		if r.Header.Get("Content-Type") != c.ctype || r.Header.Get("Cache-Control") != c.cache || string(r.Raw) != c.body {
			t.Errorf("%s: %q %q %q", c.path, r.Header.Get("Content-Type"), r.Header.Get("Cache-Control"), r.Raw)
		}
		if r.Header.Get("X-Content-Type-Options") != "nosniff" {
			t.Errorf("%s: no nosniff", c.path)
		}
	}

	// The SPA's pages get index.html as it is (no prefix: nothing injected); /api/ stays the API's 404.
	for _, p := range []string{"/", "/agents", "/config/gateway"} {
		r := g.Do("GET", p, nil).Want(t, 200)
		if r.Header.Get("Content-Type") != "text/html; charset=utf-8" || !strings.Contains(string(r.Raw), `src="/_app/assets/index-abc.js"`) ||
			strings.Contains(string(r.Raw), "__ZEROCLAW_BASE__") {
			t.Errorf("%s: %q %s", p, r.Header.Get("Content-Type"), r.Raw)
		}
	}
	g.Do("GET", "/api/nope", nil).Want(t, 404)
	g.Do("POST", "/agents", map[string]any{}, "Content-Type: application/json").Want(t, 404)

	// Hostile paths: never a byte from outside the directory.
	for _, c := range []struct {
		path string
		code int
	}{
		{"/_app/", 400},
		{"/_app/assets%5cindex-abc.js", 400},
		{"/_app/logo.svg%00.js", 400},
		{"/_app/C:%5cWindows%5cwin.ini", 400},
		{"/_app/assets", 404}, // a directory
		{"/_app/missing.js", 404},
		{"/_app/escape.txt", 404},    // a symlink out of the directory
		{"/_app/up/secret.txt", 404}, // a directory symlink out of it
	} {
		r := g.Do("GET", c.path, nil)
		if r.Code != c.code || strings.Contains(string(r.Raw), "outside-secret") {
			t.Errorf("%s: %d %s, want %d", c.path, r.Code, r.Raw, c.code)
		}
	}
	// ".." is cleaned by the router before any handler: at most a redirect to a path inside the gateway.
	for _, p := range []string{"/_app/../secret.txt", "/_app/assets/..%2f..%2fsecret.txt", "/_app/%2e%2e/%2e%2e/secret.txt"} {
		if r := g.Do("GET", p, nil); strings.Contains(string(r.Raw), "outside-secret") {
			t.Errorf("%s: %d %s", p, r.Code, r.Raw)
		}
	}
	if runtime.GOOS != "windows" {
		r := g.Do("GET", "/_app/alias.svg", nil).Want(t, 200) // a symlink inside the directory
		if string(r.Raw) != "<svg/>" {
			t.Errorf("alias: %s", r.Raw)
		}
	}
}

// Behind path_prefix the index names the prefix to the dashboard (window.__ZEROCLAW_BASE__, JSON in a script
// element) and its /_app/ references carry it, as upstream rewrites them.
func TestGatewayWebDistPrefix(t *testing.T) {
	t.Parallel()
	dist := fakeDist(t)
	_, g, _ := rpctest.StartGateway(t, rpctest.GatewayConfig+"\n[gateway]\npath_prefix = \"/zc\"\nweb_dist_dir = \""+filepath.ToSlash(dist)+"\"\n")
	r := g.Do("GET", "/zc/agents", nil).Want(t, 200)
	html := string(r.Raw)
	if !strings.Contains(html, `<head><script>window.__ZEROCLAW_BASE__="/zc";</script>`) ||
		!strings.Contains(html, `src="/zc/_app/assets/index-abc.js"`) || !strings.Contains(html, `href="/zc/_app/assets/index-abc.css"`) {
		t.Fatalf("index: %s", html)
	}
	g.Do("GET", "/zc/_app/assets/index-abc.js", nil).Want(t, 200)
	g.Do("GET", "/_app/assets/index-abc.js", nil).Want(t, 404)
	g.Do("GET", "/zc/api/nope", nil).Want(t, 404)
}

// Without web_dist_dir, / is the built-in dashboard's overview (package webui) and nothing else changes:
// /_app/ and unmatched paths are 404 as before.
func TestGatewayNoWebDist(t *testing.T) {
	t.Parallel()
	_, g, _ := rpctest.StartGateway(t, rpctest.GatewayConfig)
	if r := g.Do("GET", "/", nil).Want(t, 200); !strings.Contains(string(r.Raw), `data-page="overview"`) {
		t.Fatalf("/ without web_dist_dir is not the built-in overview: %s", r.Raw)
	}
	g.Do("GET", "/_app/index.html", nil).Want(t, 404)
	g.Do("GET", "/agents", nil).Want(t, 404)
}

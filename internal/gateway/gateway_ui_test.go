package gateway_test

import (
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/zeroclaw-go/zeroclaw/internal/gateway/webui"
	"github.com/zeroclaw-go/zeroclaw/internal/rpctest"
)

var scriptTag = regexp.MustCompile(`<script\b[^>]*>`)
var assetRef = regexp.MustCompile(`(?:src|href)="([^"]+)"`)

// Every dashboard page is served without a token, under its strict CSP, never framed, with no inline script:
// each <script> names an embedded file, and every file a page references is served with its type.
func TestGatewayUIPages(t *testing.T) {
	t.Parallel()
	_, g, _ := rpctest.StartGateway(t, rpctest.GatewayConfig)
	for _, p := range webui.Pages {
		path := "/ui/" + p.Name
		r := g.Do("GET", path, nil).Want(t, 200)
		if got := r.Header.Get("Content-Security-Policy"); got != webui.CSP {
			t.Fatalf("%s: CSP %q, want %q", path, got, webui.CSP)
		}
		if r.Header.Get("X-Frame-Options") != "DENY" || r.Header.Get("X-Content-Type-Options") != "nosniff" {
			t.Fatalf("%s: headers %v", path, r.Header)
		}
		if ct := r.Header.Get("Content-Type"); ct != "text/html; charset=utf-8" {
			t.Fatalf("%s: content type %q", path, ct)
		}
		html := string(r.Raw)
		if !strings.Contains(html, `data-page="`+p.Name+`"`) || !strings.Contains(html, "<title>"+p.Title) {
			t.Fatalf("%s: not the page %q:\n%s", path, p.Name, html)
		}
		tags := scriptTag.FindAllString(html, -1)
		if len(tags) < 2 {
			t.Fatalf("%s: scripts %v", path, tags)
		}
		for _, tag := range tags {
			if !strings.Contains(tag, `src="/ui/assets/`) {
				t.Fatalf("%s: a script that is not an embedded file: %s", path, tag)
			}
		}
		if regexp.MustCompile(`(?i)\son[a-z]+=`).MatchString(html) || strings.Contains(html, "javascript:") {
			t.Fatalf("%s: an inline handler or javascript: URL", path)
		}
		for _, m := range assetRef.FindAllStringSubmatch(html, -1) {
			ref := m[1]
			if strings.HasPrefix(ref, "#") || strings.HasPrefix(ref, "/ui/") && !strings.HasPrefix(ref, "/ui/assets/") || ref == "/" {
				continue
			}
			if !strings.HasPrefix(ref, "/ui/assets/") {
				t.Fatalf("%s: a reference outside the dashboard's files: %s", path, ref)
			}
			a := g.Do("GET", ref, nil).Want(t, 200)
			if a.Header.Get("Content-Security-Policy") != webui.CSP || a.Header.Get("ETag") == "" {
				t.Fatalf("%s: headers %v", ref, a.Header)
			}
			if ct := a.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/javascript") && !strings.HasPrefix(ct, "text/css") {
				t.Fatalf("%s: content type %q", ref, ct)
			}
			g.Do("GET", ref, nil, "If-None-Match: "+a.Header.Get("ETag")).Want(t, 304)
		}
	}
	if r := g.Do("GET", "/", nil).Want(t, 200); !strings.Contains(string(r.Raw), `data-page="overview"`) {
		t.Fatalf("/ is not the overview: %s", r.Raw)
	}
	if r := g.Do("HEAD", "/ui/chat", nil).Want(t, 200); len(r.Raw) != 0 {
		t.Fatalf("HEAD has a body: %q", r.Raw)
	}
}

// What the dashboard's files routes refuse: unknown pages and files, traversal, dot files, templates and Go
// source (only assets/*.js and *.css are files), a foreign Host (DNS rebinding), and a state-changing method.
func TestGatewayUIRefusals(t *testing.T) {
	t.Parallel()
	_, g, _ := rpctest.StartGateway(t, rpctest.GatewayConfig)
	for _, path := range []string{
		"/ui/nope", "/ui/layout", "/ui/head", "/ui/assets/nope.js", "/ui/assets/..%2fwebui.go", "/ui/assets/%2e%2e%2fdoc.go",
		"/ui/assets/.hidden", "/ui/assets/", "/ui/assets/../templates/layout.html", "/ui/assets/app.js/x", "/ui/webui.go",
		"/ui/assets/..%5cwebui.go",
	} {
		r := g.Do("GET", path, nil)
		if r.Code == 200 {
			t.Fatalf("GET %s: 200 %s", path, r.Raw)
		}
	}
	g.Do("GET", "/ui/chat", nil, "Host: evil.example:80").Want(t, 403)
	g.Do("GET", "/ui/assets/app.js", nil, "Host: evil.example:80").Want(t, 403)
	if r := g.Do("POST", "/ui/chat", "{}", "Content-Type: application/json"); r.Code == 200 {
		t.Fatalf("POST /ui/chat: %d", r.Code)
	}
}

// The precedence with gateway.web_dist_dir: / and unmatched paths are upstream's dashboard, /ui/ is still ours;
// behind path_prefix every link and script of ours carries the prefix.
func TestGatewayUIWithWebDistAndPrefix(t *testing.T) {
	t.Parallel()
	dist := fakeDist(t)
	_, g, _ := rpctest.StartGateway(t, rpctest.GatewayConfig+"\n[gateway]\npath_prefix = \"/zc\"\nweb_dist_dir = \""+filepath.ToSlash(dist)+"\"\n")
	if r := g.Do("GET", "/zc", nil).Want(t, 200); !strings.Contains(string(r.Raw), `<div id="root">`) {
		t.Fatalf("/zc with web_dist_dir is not upstream's index: %s", r.Raw)
	}
	r := g.Do("GET", "/zc/ui/chat", nil).Want(t, 200)
	html := string(r.Raw)
	if !strings.Contains(html, `data-prefix="/zc"`) || !strings.Contains(html, `src="/zc/ui/assets/chat.js"`) ||
		!strings.Contains(html, `href="/zc/ui/sessions"`) || strings.Contains(html, `"/ui/`) {
		t.Fatalf("the chat page behind /zc:\n%s", html)
	}
	g.Do("GET", "/zc/ui/assets/chat.js", nil).Want(t, 200)
	g.Do("GET", "/ui/chat", nil).Want(t, 404)
}

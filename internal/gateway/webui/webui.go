package webui

import (
	"embed"
	"errors"
	"html"
	"io/fs"
	"path"
	"strings"
	"sync"
)

//go:embed templates/*.html assets/*
var files embed.FS

// CSP is the Content-Security-Policy of every dashboard page and file: nothing from another origin, no inline
// script or style, no plugin, never framed, forms post only here. 'self' in connect-src covers the gateway's
// own ws:// and wss:// (CSP Level 3).
const CSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; " +
	"font-src 'none'; object-src 'none'; frame-src 'none'; worker-src 'none'; manifest-src 'none'; " +
	"frame-ancestors 'none'; base-uri 'none'; form-action 'self'"

// Page is one page of the dashboard.
type Page struct {
	Name   string // the path under /ui/ and the template's name
	Title  string
	Script string // its own script under assets/ ("" for none beyond app.js)
	Nav    bool   // listed in the navigation
}

// Pages are the dashboard's pages, in the navigation's order.
var Pages = []Page{
	{"overview", "Overview", "overview.js", true},
	{"chat", "Chat", "chat.js", true},
	{"sessions", "Sessions", "sessions.js", true},
	{"approvals", "Approvals", "approvals.js", true},
	{"logs", "Logs", "logs.js", true},
	{"costs", "Costs", "costs.js", true},
	{"cron", "Cron", "cron.js", true},
	{"memory", "Memory", "memory.js", true},
	{"doctor", "Doctor", "doctor.js", true},
	{"devices", "Devices", "devices.js", true},
	{"config", "Config", "config.js", true},
	{"agents", "Agents", "agents.js", true},
	{"sops", "SOP runs", "sops.js", true},
	{"mcp", "MCP servers", "mcp.js", true},
	{"channels", "Channels", "channels.js", true},
	{"pair", "Pair this browser", "pair.js", false},
}

// Lookup is the page named name.
func Lookup(name string) (Page, bool) {
	for _, p := range Pages {
		if p.Name == name {
			return p, true
		}
	}
	return Page{}, false
}

// The pages are rendered by substitution, not html/template: its reflection (reflect.Value.Method) turns off
// the linker's dead-method elimination for the whole binary, which cost 2.6 MB here (the budget is
// 1 MB). What varies is fixed at build time (titles, names, the page bodies, all ours) except the prefix,
// which is HTML-escaped.

const (
	pagesFile  = "templates/pages.html"
	layoutFile = "templates/layout.html"
	marker     = "<!-- page "
)

var (
	parseOnce sync.Once
	bodies    map[string]string // page name -> its body
	layout    string
)

func load() {
	parseOnce.Do(func() {
		b, err := fs.ReadFile(files, layoutFile)
		if err != nil {
			panic(err)
		}
		layout = string(b)
		b, err = fs.ReadFile(files, pagesFile)
		if err != nil {
			panic(err)
		}
		bodies = map[string]string{}
		for _, part := range strings.Split(string(b), marker)[1:] {
			name, body, _ := strings.Cut(part, " -->\n")
			bodies[name] = body
		}
	})
}

// Render is page's HTML under the gateway prefix ("" or "/x").
func Render(p Page, prefix string) ([]byte, error) {
	load()
	body, ok := bodies[p.Name]
	if !ok {
		return nil, errors.New("webui: no body for page " + p.Name)
	}
	esc := html.EscapeString
	var nav strings.Builder
	for _, q := range Pages {
		if !q.Nav {
			continue
		}
		nav.WriteString(`<li><a href="@@PREFIX@@/ui/` + esc(q.Name) + `"`)
		if q.Name == p.Name {
			nav.WriteString(` aria-current="page"`)
		}
		nav.WriteString(">" + esc(q.Title) + "</a></li>\n")
	}
	// @@BODY@@ and @@NAV@@ first: the others occur inside them.
	out := strings.NewReplacer("@@BODY@@", body, "@@NAV@@", nav.String()).Replace(layout)
	out = strings.NewReplacer("@@PREFIX@@", esc(prefix), "@@PAGE@@", esc(p.Name), "@@TITLE@@", esc(p.Title),
		"@@SCRIPT@@", esc(p.Script)).Replace(out)
	return []byte(out), nil
}

// Asset is the embedded file name under assets/ and its content type; ok is false for anything else (a
// name with a slash, a dot file, an unknown one).
func Asset(name string) (data []byte, contentType string, ok bool) {
	if name == "" || strings.ContainsAny(name, "/\\") || strings.HasPrefix(name, ".") {
		return nil, "", false
	}
	data, err := fs.ReadFile(files, "assets/"+name)
	if err != nil {
		return nil, "", false
	}
	switch path.Ext(name) {
	case ".js":
		contentType = "text/javascript; charset=utf-8"
	case ".css":
		contentType = "text/css; charset=utf-8"
	case ".svg":
		contentType = "image/svg+xml"
	default:
		return nil, "", false
	}
	return data, contentType, true
}

package webui

import (
	"bytes"
	"embed"
	"html/template"
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

var (
	parseOnce sync.Once
	tmpl      *template.Template
)

func templates() *template.Template {
	parseOnce.Do(func() {
		tmpl = template.Must(template.New("").ParseFS(files, "templates/*.html"))
	})
	return tmpl
}

// view is what the layout renders.
type view struct {
	Page   Page
	Pages  []Page
	Prefix string // gateway.path_prefix, "" or "/x"
}

// Render is page's HTML under the gateway prefix.
func Render(p Page, prefix string) ([]byte, error) {
	var b bytes.Buffer
	err := templates().ExecuteTemplate(&b, p.Name, view{Page: p, Pages: Pages, Prefix: prefix})
	return b.Bytes(), err
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

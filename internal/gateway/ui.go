package gateway

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"sync"
	"time"

	"github.com/zeroclaw-go/zeroclaw/internal/gateway/webui"
)

// The built-in web dashboard (package webui; README "Web dashboard"). Its pages are at /ui/<page> and its
// files at /ui/assets/<file>, always; / is its overview unless gateway.web_dist_dir is set, when / and every
// other unmatched path are upstream's dashboard (spaIndex) as before. Like upstream's files, the pages are
// public: they hold no data, and their scripts send the browser's own token with every call.

func (s *Server) uiRoutes(mux *http.ServeMux) {
	s.handle(mux, "GET /{$}", s.uiIndex)
	s.handle(mux, "GET /ui/{page}", s.uiPage)
	s.handle(mux, "GET /ui/assets/{file}", s.uiAsset)
}

// uiIndex is GET /: upstream's index.html when gateway.web_dist_dir is set, else the overview page.
func (s *Server) uiIndex(w http.ResponseWriter, r *http.Request) error {
	if s.o.Daemon.Config().Gateway.WebDistDir != "" {
		if s.spaIndex(w, r) {
			return nil
		}
		return fail(http.StatusNotFound, "not found")
	}
	p, _ := webui.Lookup("overview")
	return s.uiRender(w, r, p)
}

// uiPage is GET /ui/{page}.
func (s *Server) uiPage(w http.ResponseWriter, r *http.Request) error {
	p, ok := webui.Lookup(r.PathValue("page"))
	if !ok {
		return fail(http.StatusNotFound, "not found: no dashboard page "+quote(r.PathValue("page")))
	}
	return s.uiRender(w, r, p)
}

func (s *Server) uiRender(w http.ResponseWriter, r *http.Request, p webui.Page) error {
	html, err := webui.Render(p, s.o.Daemon.Config().Gateway.PathPrefix)
	if err != nil {
		return internal("gateway: dashboard page "+p.Name, err)
	}
	uiHeaders(w, "text/html; charset=utf-8")
	http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(html))
	return nil
}

// uiAsset is GET /ui/assets/{file}: an embedded script or stylesheet, revalidated by its ETag.
func (s *Server) uiAsset(w http.ResponseWriter, r *http.Request) error {
	name := r.PathValue("file")
	data, ctype, ok := webui.Asset(name)
	if !ok {
		return fail(http.StatusNotFound, "not found")
	}
	uiHeaders(w, ctype)
	w.Header().Set("ETag", assetETag(name, data))
	http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(data))
	return nil
}

// uiHeaders are the dashboard's own headers: its strict CSP in place of the gateway's default, no caching
// without revalidation.
func uiHeaders(w http.ResponseWriter, ctype string) {
	h := w.Header()
	h.Set("Content-Security-Policy", webui.CSP)
	h.Set("Content-Type", ctype)
	h.Set("Cache-Control", "no-cache")
}

var etags sync.Map // asset name -> ETag

func assetETag(name string, data []byte) string {
	if v, ok := etags.Load(name); ok {
		return v.(string)
	}
	sum := sha256.Sum256(data)
	tag := `"` + hex.EncodeToString(sum[:8]) + `"`
	etags.Store(name, tag)
	return tag
}

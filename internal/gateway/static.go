package gateway

import (
	"io"
	"net/http"
	"strings"

	"github.com/zeroclaw-go/zeroclaw/internal/gateway/dashboard"
)

// The web dashboard (upstream's crates/zeroclaw-gateway/src/static_files.rs): the files of
// gateway.web_dist_dir under /_app/, its index.html for every other GET the routes do not answer, outside
// /api/ (the shapes, path checks and index rewriting are package dashboard's). Nothing here needs a token:
// the dashboard's files are public and the dashboard pairs itself.

// staticFile is GET /_app/{path...}: a file of gateway.web_dist_dir.
func (s *Server) staticFile(w http.ResponseWriter, r *http.Request) error {
	rel := r.PathValue("path")
	if !dashboard.ValidRelPath(rel) || strings.HasSuffix(rel, "/") {
		return fail(http.StatusBadRequest, "Invalid path")
	}
	dir := s.o.Daemon.Config().Gateway.WebDistDir
	if dir == "" {
		return fail(http.StatusNotFound, "not found")
	}
	f, fi, err := dashboard.OpenDist(dir, rel)
	if err != nil {
		return fail(http.StatusNotFound, "not found")
	}
	defer f.Close()
	w.Header().Set("Content-Type", dashboard.ContentType(rel))
	w.Header().Set("Cache-Control", dashboard.CacheControl(rel))
	http.ServeContent(w, r, rel, fi.ModTime(), f)
	return nil
}

// spaIndex answers an unmatched GET or HEAD outside /api/ with the dashboard's index.html when
// gateway.web_dist_dir is set; ok is false when it does not apply (the caller's 404 then stands).
func (s *Server) spaIndex(w http.ResponseWriter, r *http.Request) (ok bool) {
	g := s.o.Daemon.Config().Gateway
	if g.WebDistDir == "" || (r.Method != http.MethodGet && r.Method != http.MethodHead) ||
		r.URL.Path == "/api" || strings.HasPrefix(r.URL.Path, "/api/") {
		return false
	}
	html, ok := dashboard.Index(g.WebDistDir, g.PathPrefix)
	if !ok {
		return false
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	if r.Method != http.MethodHead {
		_, _ = io.WriteString(w, html)
	}
	return true
}

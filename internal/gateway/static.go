package gateway

import (
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"mime"
	"net/http"
	"os"
	"path"
	"strings"
)

// The web dashboard (upstream's crates/zeroclaw-gateway/src/static_files.rs): gateway.web_dist_dir holds a
// built dashboard (upstream's web/dist, built with base /_app/). Its files are served under /_app/ and its
// index.html answers every other GET the routes do not (the dashboard's own pages, e.g. /agents), outside
// /api/. Behind gateway.path_prefix the index gains <script>window.__ZEROCLAW_BASE__="<prefix>"</script> and
// its /_app/ references become <prefix>/_app/, as upstream rewrites them, so the pages are same-origin with
// the API and the WebSocket Origin rule holds. Nothing here needs a token: the dashboard's files are public
// and the dashboard pairs itself.
//
// Files are opened through an os.Root on the directory: a path is refused unless it is a plain relative path
// (no "", ".", ".." components, no backslash, no NUL), and the root resolves every component itself (openat
// with O_NOFOLLOW on Unix), so a symlink inside the directory works while one that leads out of it (and "..")
// cannot; only regular files are served.

// maxIndexBytes bounds the index.html read into memory to rewrite it.
const maxIndexBytes = 4 << 20

// contentTypes are the types of a dashboard build's files, fixed here so that they do not depend on the
// host's MIME database; other extensions fall back to it, then to application/octet-stream.
var contentTypes = map[string]string{
	".html": "text/html; charset=utf-8", ".js": "text/javascript; charset=utf-8",
	".mjs": "text/javascript; charset=utf-8", ".css": "text/css; charset=utf-8",
	".json": "application/json", ".map": "application/json", ".webmanifest": "application/manifest+json",
	".svg": "image/svg+xml", ".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg",
	".gif": "image/gif", ".webp": "image/webp", ".ico": "image/x-icon", ".woff": "font/woff",
	".woff2": "font/woff2", ".ttf": "font/ttf", ".otf": "font/otf", ".wasm": "application/wasm",
	".txt": "text/plain; charset=utf-8",
}

func contentType(name string) string {
	ext := strings.ToLower(path.Ext(name))
	if t, ok := contentTypes[ext]; ok {
		return t
	}
	if t := mime.TypeByExtension(ext); t != "" {
		return t
	}
	return "application/octet-stream"
}

// validRelPath is upstream's is_valid_relative_path: non-empty, relative, every component a plain name
// (no ":" either, which on Windows names a drive or a stream).
func validRelPath(p string) bool {
	if p == "" || strings.ContainsAny(p, "\\\x00") || strings.HasPrefix(p, "/") {
		return false
	}
	for _, c := range strings.Split(p, "/") {
		if c == "" || c == "." || c == ".." || strings.Contains(c, ":") { // ":": a Windows drive or stream
			return false
		}
	}
	return fs.ValidPath(p)
}

// errNoFile is a name that is not a regular file of the dashboard (missing, a directory, outside it).
var errNoFile = errors.New("gateway: not a dashboard file")

// openDist opens the regular file rel of dir; the caller closes it.
func openDist(dir, rel string) (*os.File, fs.FileInfo, error) {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, nil, errNoFile
	}
	defer root.Close()
	// Stat first: opening a FIFO for reading would block until a writer came.
	if fi, err := root.Stat(rel); err != nil || !fi.Mode().IsRegular() {
		return nil, nil, errNoFile
	}
	f, err := root.Open(rel)
	if err != nil {
		return nil, nil, errNoFile
	}
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		_ = f.Close()
		return nil, nil, errNoFile
	}
	return f, fi, nil
}

// staticFile is GET /_app/{path...}: a file of gateway.web_dist_dir. Hashed assets (under assets/) are cached
// for good, everything else is revalidated.
func (s *Server) staticFile(w http.ResponseWriter, r *http.Request) error {
	rel := r.PathValue("path")
	if !validRelPath(rel) || strings.HasSuffix(rel, "/") {
		return fail(http.StatusBadRequest, "Invalid path")
	}
	dir := s.o.Daemon.Config().Gateway.WebDistDir
	if dir == "" {
		return fail(http.StatusNotFound, "not found")
	}
	f, fi, err := openDist(dir, rel)
	if err != nil {
		return fail(http.StatusNotFound, "not found")
	}
	defer f.Close()
	w.Header().Set("Content-Type", contentType(rel))
	if strings.HasPrefix(rel, "assets/") || strings.Contains(rel, "/assets/") {
		w.Header().Set("Cache-Control", "public, max-age=31536000, immutable")
	} else {
		w.Header().Set("Cache-Control", "no-cache")
	}
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
	f, _, err := openDist(g.WebDistDir, "index.html")
	if err != nil {
		return false
	}
	defer f.Close()
	body, err := io.ReadAll(io.LimitReader(f, maxIndexBytes+1))
	if err != nil || len(body) > maxIndexBytes {
		return false
	}
	html := string(body)
	if p := g.PathPrefix; p != "" {
		js, _ := json.Marshal(p) // escapes <, > and &: the prefix cannot end the script element
		html = strings.ReplaceAll(html, "/_app/", p+"/_app/")
		html = strings.Replace(html, "<head>", "<head><script>window.__ZEROCLAW_BASE__="+string(js)+";</script>", 1)
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	if r.Method != http.MethodHead {
		_, _ = io.WriteString(w, html)
	}
	return true
}

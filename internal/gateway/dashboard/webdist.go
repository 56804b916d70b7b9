package dashboard

import (
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"mime"
	"os"
	"path"
	"strings"
)

// The web dashboard's files (upstream's crates/zeroclaw-gateway/src/static_files.rs): gateway.web_dist_dir
// holds a built dashboard (upstream's web/dist, built with base /_app/). The gateway serves its files under
// /_app/ and its index.html for every other GET the routes do not answer, outside /api/. Behind
// gateway.path_prefix the index gains <script>window.__ZEROCLAW_BASE__="<prefix>"</script> and its /_app/
// references become <prefix>/_app/, as upstream rewrites them, so the pages are same-origin with the API and
// the WebSocket Origin rule holds.
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

// ContentType is the Content-Type of a dashboard file.
func ContentType(name string) string {
	ext := strings.ToLower(path.Ext(name))
	if t, ok := contentTypes[ext]; ok {
		return t
	}
	if t := mime.TypeByExtension(ext); t != "" {
		return t
	}
	return "application/octet-stream"
}

// CacheControl is a dashboard file's Cache-Control: hashed assets (under assets/) are cached for good,
// everything else is revalidated.
func CacheControl(rel string) string {
	if strings.HasPrefix(rel, "assets/") || strings.Contains(rel, "/assets/") {
		return "public, max-age=31536000, immutable"
	}
	return "no-cache"
}

// ValidRelPath is upstream's is_valid_relative_path: non-empty, relative, every component a plain name
// (no ":" either, which on Windows names a drive or a stream).
func ValidRelPath(p string) bool {
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

// ErrNoFile is a name that is not a regular file of the dashboard (missing, a directory, outside it).
var ErrNoFile = errors.New("gateway: not a dashboard file")

// OpenDist opens the regular file rel of dir; the caller closes it.
func OpenDist(dir, rel string) (*os.File, fs.FileInfo, error) {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, nil, ErrNoFile
	}
	defer root.Close()
	// Stat first: opening a FIFO for reading would block until a writer came.
	if fi, err := root.Stat(rel); err != nil || !fi.Mode().IsRegular() {
		return nil, nil, ErrNoFile
	}
	f, err := root.Open(rel)
	if err != nil {
		return nil, nil, ErrNoFile
	}
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		_ = f.Close()
		return nil, nil, ErrNoFile
	}
	return f, fi, nil
}

// Index is dir's index.html, rewritten for the path prefix (none when ""); ok is false when there is no
// such file or it is larger than the bound.
func Index(dir, prefix string) (html string, ok bool) {
	f, _, err := OpenDist(dir, "index.html")
	if err != nil {
		return "", false
	}
	defer f.Close()
	body, err := io.ReadAll(io.LimitReader(f, maxIndexBytes+1))
	if err != nil || len(body) > maxIndexBytes {
		return "", false
	}
	html = string(body)
	if prefix != "" {
		js, _ := json.Marshal(prefix) // escapes <, > and &: the prefix cannot end the script element
		html = strings.ReplaceAll(html, "/_app/", prefix+"/_app/")
		html = strings.Replace(html, "<head>", "<head><script>window.__ZEROCLAW_BASE__="+string(js)+";</script>", 1)
	}
	return html, true
}

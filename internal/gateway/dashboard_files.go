package gateway

import (
	"errors"
	"net/http"

	"github.com/zeroclaw-go/zeroclaw/internal/api"
	"github.com/zeroclaw-go/zeroclaw/internal/gateway/dashboard"
)

// FileTree is a directory the dashboard's explorers browse and edit: an agent's workspace, or the install's
// shared/ directory. Paths are relative to it; the implementation confines every one to it (no "..", no
// symbolic link out, no NUL, none into the install's data) and returns errors wrapping ErrFileNotFound,
// ErrFileDenied or ErrFileInvalid.
type FileTree interface {
	// List lists directory path ("" is the tree itself) and returns its cleaned relative path.
	List(path string) (entries []FileEntry, cleaned string, err error)
	// Read reads the regular file path, at most limit bytes (a larger one is ErrFileDenied).
	Read(path string, limit int64) ([]byte, error)
	// Remove removes path, a directory with what it holds; Move renames from to to (which must not exist);
	// Mkdir creates directory path and its parents; Rmdir removes the empty directory path (one that holds
	// anything is ErrFileNotEmpty; a link or a file ErrFileInvalid). None applies to the tree itself.
	Remove(path string) error
	Move(from, to string) error
	Mkdir(path string) error
	Rmdir(path string) error
}

// FileEntry is one entry of FileTree.List.
type FileEntry = dashboard.FileEntry

// The errors of a FileTree, as the routes answer them: 404, 403, 400 and 409.
var (
	ErrFileNotFound = errors.New("gateway: no such file or directory")
	ErrFileDenied   = errors.New("gateway: path refused")
	ErrFileInvalid  = errors.New("gateway: invalid path")
	ErrFileNotEmpty = errors.New("gateway: directory not empty")
)

// maxReadBytes is the largest file GET .../workspace/read answers.
const maxReadBytes = 1 << 20

// fileRoutes are upstream's agent workspace explorer and shared/ browser. Reads need files:read; changes are
// the owner's (as the admin routes: a paired device without a restricted profile, on loopback unless
// allow_remote_admin).
func (s *Server) fileRoutes(mux *http.ServeMux) {
	s.handle(mux, "GET /api/agents/{alias}/workspace/list", s.authed(s.granted(api.GrantFilesRead, s.workspaceList)))
	s.handle(mux, "GET /api/agents/{alias}/workspace/read", s.authed(s.granted(api.GrantFilesRead, s.workspaceRead)))
	s.handle(mux, "DELETE /api/agents/{alias}/workspace/path", s.owned(s.workspacePathOp("removed", FileTree.Remove)))
	s.handle(mux, "POST /api/agents/{alias}/workspace/move", s.owned(s.workspaceMove))
	s.handle(mux, "POST /api/agents/{alias}/workspace/mkdir", s.owned(s.workspacePathOp("created", FileTree.Mkdir)))
	s.handle(mux, "GET /api/browse", s.authed(s.granted(api.GrantFilesRead, s.browse)))
	s.handle(mux, "POST /api/browse/mkdir", s.owned(s.sharedPathOp("created", FileTree.Mkdir)))
	s.handle(mux, "DELETE /api/browse/rmdir", s.owned(s.sharedPathOp("removed", FileTree.Rmdir)))
}

// owned wraps a handler that only the owner may call.
func (s *Server) owned(h callerFunc) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		c, err := s.owner(r)
		if err != nil {
			return err
		}
		return h(w, r, c)
	}
}

// fileError answers a FileTree error.
func fileError(err error) error {
	msg := err.Error()
	switch {
	case errors.Is(err, ErrFileNotFound):
		return fail(http.StatusNotFound, msg)
	case errors.Is(err, ErrFileDenied):
		return fail(http.StatusForbidden, msg)
	case errors.Is(err, ErrFileInvalid):
		return fail(http.StatusBadRequest, msg)
	case errors.Is(err, ErrFileNotEmpty):
		return fail(http.StatusConflict, msg)
	}
	return err
}

// tree is the agent's workspace of the request's {alias}.
func (s *Server) tree(r *http.Request) (FileTree, error) {
	t, err := s.o.Daemon.AgentFiles(r.PathValue("alias"))
	if err != nil {
		return nil, fileError(err)
	}
	return t, nil
}

// listing is upstream's BrowseResponse (dashboard.Listing).
func listing(t FileTree, path string) (map[string]any, error) {
	entries, cleaned, err := t.List(path)
	if err != nil {
		return nil, fileError(err)
	}
	return dashboard.Listing(entries, cleaned), nil
}

func (s *Server) workspaceList(w http.ResponseWriter, r *http.Request, _ caller) error {
	t, err := s.tree(r)
	if err != nil {
		return err
	}
	res, err := listing(t, r.URL.Query().Get("path"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, res)
	return nil
}

// workspaceRead is upstream's AgentWorkspaceFileRead (dashboard.FileRead).
func (s *Server) workspaceRead(w http.ResponseWriter, r *http.Request, _ caller) error {
	t, err := s.tree(r)
	if err != nil {
		return err
	}
	path := r.URL.Query().Get("path")
	if path == "" {
		return fail(http.StatusBadRequest, "query parameter path is required")
	}
	data, err := t.Read(path, maxReadBytes)
	if err != nil {
		return fileError(err)
	}
	writeJSON(w, http.StatusOK, dashboard.FileRead(path, data))
	return nil
}

// pathBody reads the {path} body of the change routes.
func pathBody(r *http.Request) (string, error) {
	var b struct {
		Path string `json:"path"`
	}
	if err := readJSON(r, &b); err != nil {
		return "", err
	}
	if b.Path == "" {
		return "", fail(http.StatusBadRequest, "body needs a path")
	}
	return b.Path, nil
}

// workspacePathOp is a handler that applies op to the agent's workspace at the body's path and answers
// {key: path}: the remove and mkdir routes.
func (s *Server) workspacePathOp(key string, op func(FileTree, string) error) callerFunc {
	return pathOp(key, op, s.tree)
}

// sharedPathOp is workspacePathOp on <install>/shared/: POST /api/browse/mkdir and DELETE /api/browse/rmdir
// (upstream's shapes: {path} in, {created} or {removed} out). rmdir removes only an empty directory (409
// otherwise): upstream removes what it holds too, but one click of a web page should not take a tree of files
// along. The top-level directories the install keeps in shared/ (SharedFiles' tree refuses them) are 403.
func (s *Server) sharedPathOp(key string, op func(FileTree, string) error) callerFunc {
	shared := func(*http.Request) (FileTree, error) {
		t, err := s.o.Daemon.SharedFiles()
		if err != nil {
			return nil, fileError(err)
		}
		return t, nil
	}
	return pathOp(key, op, shared)
}

// pathOp reads the {path} body, applies op to the tree tree returns and answers {key: path}.
func pathOp(key string, op func(FileTree, string) error, tree func(*http.Request) (FileTree, error)) callerFunc {
	return func(w http.ResponseWriter, r *http.Request, _ caller) error {
		t, err := tree(r)
		if err != nil {
			return err
		}
		path, err := pathBody(r)
		if err != nil {
			return err
		}
		if err := op(t, path); err != nil {
			return fileError(err)
		}
		writeJSON(w, http.StatusOK, map[string]string{key: path})
		return nil
	}
}

func (s *Server) workspaceMove(w http.ResponseWriter, r *http.Request, _ caller) error {
	t, err := s.tree(r)
	if err != nil {
		return err
	}
	var b struct {
		From string `json:"from"`
		To   string `json:"to"`
	}
	if err := readJSON(r, &b); err != nil {
		return err
	}
	if b.From == "" || b.To == "" {
		return fail(http.StatusBadRequest, "body needs from and to")
	}
	if err := t.Move(b.From, b.To); err != nil {
		return fileError(err)
	}
	writeJSON(w, http.StatusOK, map[string]string{"from": b.From, "to": b.To})
	return nil
}

// browse is GET /api/browse: <install>/shared/, listed as upstream's BrowseResponse.
func (s *Server) browse(w http.ResponseWriter, r *http.Request, _ caller) error {
	t, err := s.o.Daemon.SharedFiles()
	if err != nil {
		return fileError(err)
	}
	res, err := listing(t, r.URL.Query().Get("path"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, res)
	return nil
}

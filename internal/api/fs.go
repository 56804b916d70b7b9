package api

// MethodFsListDir lists a directory of a workspace.
const MethodFsListDir = "fs/list_dir"

// Filesystem error codes (upstream's FS_* codes).
const (
	CodeFsNotFound         = 4001
	CodeFsPermissionDenied = 4002
	CodeFsInvalidPath      = 4003
)

// FsListDirParams are the params of fs/list_dir. Path is relative to the workspace, or absolute inside it;
// "" is the workspace itself. Ours: SessionID picks the workspace of that session; without it an admin may
// name an Agent (default: the only enabled agent).
type FsListDirParams struct {
	Path       string `json:"path"`
	ShowHidden bool   `json:"show_hidden,omitempty"`
	SessionID  string `json:"session_id,omitempty"`
	Agent      string `json:"agent,omitempty"`
}

// FsEntry is one directory entry. A symbolic link is reported as itself (is_dir false, its own size), never
// followed. Mtime is in seconds since the Unix epoch.
type FsEntry struct {
	Name     string `json:"name"`
	FullPath string `json:"full_path"`
	IsDir    bool   `json:"is_dir"`
	IsHidden bool   `json:"is_hidden"`
	Size     int64  `json:"size"`
	Mtime    *int64 `json:"mtime,omitempty"`
}

// FsListDirResult is the result of fs/list_dir: directories first, then by case-insensitive name. Cwd is the
// absolute path listed.
type FsListDirResult struct {
	Entries []FsEntry `json:"entries"`
	Cwd     string    `json:"cwd"`
}

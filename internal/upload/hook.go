package upload

import "github.com/zeroclaw-go/zeroclaw/internal/atomicfile"

// crashAt, when set (only in builds with the zeroclaw_crashhooks tag, see hook_crash.go), is called at named
// points of a write so that tests can kill the process there. Production builds leave it nil.
var crashAt func(point string)

// hashing, set only by tests, is called by an upload's hashing goroutine before it hashes received bytes.
var hashing func()

// CrashBeforeRename is the point after a stored file's temporary copy is written and fsynced, before it is
// renamed into place.
const CrashBeforeRename = "upload-commit-before-rename"

// hookFS is the filesystem of a store, calling crashAt before the rename that publishes a file.
type hookFS struct{ atomicfile.FS }

func (h hookFS) Rename(oldname, newname string) error {
	if crashAt != nil {
		crashAt(CrashBeforeRename)
	}
	return h.FS.Rename(oldname, newname)
}

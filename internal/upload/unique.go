package upload

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/zeroclaw-go/zeroclaw/internal/api"
	"github.com/zeroclaw-go/zeroclaw/internal/atomicfile"
)

// SaveUnique stores data as a new file <workspace>/uploads/<12 random hex>-<SafeName(name)> and returns its
// path: the attachments of a protocol whose prompt names the stored file itself (ACP's embedded resources)
// rather than taking Save's content-addressed name and marker. It takes Save's steps: the uploads directory
// (created 0700, refused when it is a link or not a directory) is reached through an os.Root of the workspace
// so nothing outside it is touched, writes into it are serialized in this process, the temporary files of an
// earlier process that died mid-write are swept, and the file (0600) is written, fsynced and published without
// replacing anything there. Data over api.MaxFileBytes is ErrInvalid.
func SaveUnique(workspace, name string, data []byte) (string, error) {
	if len(data) > api.MaxFileBytes {
		return "", invalid("file of %d bytes exceeds the %d-byte file limit", len(data), api.MaxFileBytes)
	}
	name = uniquePrefix() + "-" + SafeName(name)
	dir := filepath.Join(workspace, Dir)
	if err := os.MkdirAll(workspace, 0o700); err != nil {
		return "", fmt.Errorf("upload: create workspace: %w", err)
	}
	unlock := lockDir(dir)
	defer unlock()
	root, err := os.OpenRoot(workspace)
	if err != nil {
		return "", fmt.Errorf("upload: open workspace: %w", err)
	}
	defer root.Close()
	ur, err := openUploads(root)
	if err != nil {
		return "", err
	}
	defer ur.Close()
	sweepOnce(dir, ur)
	err = atomicfile.Options{FS: hookFS{atomicfile.Root(ur)}}.CreateNoClobber(name, data, 0o600)
	if err != nil && !errors.Is(err, atomicfile.ErrNotDurable) {
		return "", fmt.Errorf("upload: store %s: %w", name, err)
	}
	return filepath.Join(dir, name), nil
}

// SafeName is the stored form of a client's file name: letters, digits, '.', '-' and '_' kept, anything else
// '_', no leading dots, at most its last 100 bytes; "upload" when nothing is left.
func SafeName(name string) string {
	var b strings.Builder
	for _, r := range name {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '.', r == '-', r == '_':
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	name = strings.TrimLeft(b.String(), ".")
	if name == "" || name == "_" {
		name = "upload"
	}
	if len(name) > 100 {
		name = name[len(name)-100:]
	}
	return name
}

// uniquePrefix is SaveUnique's random name prefix.
func uniquePrefix() string {
	var b [6]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails
	return hex.EncodeToString(b[:])
}

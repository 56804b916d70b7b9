package heartbeat

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
)

// FileName is the task file in the heartbeat agent's workspace.
const FileName = "HEARTBEAT.md"

// MaxFileBytes bounds what is read of HEARTBEAT.md; a longer file is refused (the slot fails, saying why), so
// a runaway file cannot make the daemon hold it or send it to a model.
const MaxFileBytes = 256 << 10

// ErrFileTooLarge is a HEARTBEAT.md past MaxFileBytes.
var ErrFileTooLarge = errors.New("heartbeat: HEARTBEAT.md is larger than 256 KiB")

// ReadFile reads <workspace>/HEARTBEAT.md inside the workspace only: through an os.Root of the workspace, not
// following a symbolic link at the file itself (O_NOFOLLOW) and refusing anything but a regular file. A missing
// file reads as empty (no task).
func ReadFile(workspace string) (string, error) {
	root, err := os.OpenRoot(workspace)
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("heartbeat: open workspace: %w", err)
	}
	defer root.Close()
	f, err := root.OpenFile(FileName, os.O_RDONLY|openFlags, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("heartbeat: open %s: %w", FileName, err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return "", fmt.Errorf("heartbeat: stat %s: %w", FileName, err)
	}
	if !st.Mode().IsRegular() {
		return "", fmt.Errorf("heartbeat: %s is not a regular file", FileName)
	}
	b, err := io.ReadAll(io.LimitReader(f, MaxFileBytes+1))
	if err != nil {
		return "", fmt.Errorf("heartbeat: read %s: %w", FileName, err)
	}
	if len(b) > MaxFileBytes {
		return "", ErrFileTooLarge
	}
	return string(b), nil
}

// EnsureFile creates <workspace>/HEARTBEAT.md with DefaultFile when it does not exist (upstream seeds it at
// start, in the agent's workspace: zeroclaw#8402). An existing file, or a symbolic link there, is left alone.
func EnsureFile(workspace string) error {
	if err := os.MkdirAll(workspace, 0o700); err != nil {
		return fmt.Errorf("heartbeat: workspace: %w", err)
	}
	root, err := os.OpenRoot(workspace)
	if err != nil {
		return fmt.Errorf("heartbeat: open workspace: %w", err)
	}
	defer root.Close()
	f, err := root.OpenFile(FileName, os.O_WRONLY|os.O_CREATE|os.O_EXCL|openFlags, 0o600)
	if errors.Is(err, fs.ErrExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("heartbeat: create %s: %w", FileName, err)
	}
	_, werr := f.WriteString(DefaultFile)
	if err := errors.Join(werr, f.Sync(), f.Close()); err != nil {
		return fmt.Errorf("heartbeat: write %s: %w", FileName, err)
	}
	return nil
}

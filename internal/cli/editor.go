package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
)

// errUnchanged reports an edit that left the text as it was: nothing is written.
var errUnchanged = errors.New("no change")

// editText lets the user edit text in $VISUAL, else $EDITOR, else vi, through a private temporary file named
// after name (its extension selects the editor's mode), and returns the result; errUnchanged when it is the
// same.
func editText(ctx context.Context, env Env, name, text string) (string, error) {
	dir, err := os.MkdirTemp("", "zeroclaw-edit-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, filepath.Base(name))
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		return "", err
	}
	if err := runEditor(ctx, env, path); err != nil {
		return "", err
	}
	out, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	if bytes.Equal(out, []byte(text)) {
		return "", errUnchanged
	}
	return string(out), nil
}

// runEditor runs the user's editor on path, on the command's terminal. The editor is a shell command, as git
// and crontab take it ("code --wait", "vim -u NONE").
func runEditor(ctx context.Context, env Env, path string) error {
	editor := env.Getenv("VISUAL")
	if editor == "" {
		editor = env.Getenv("EDITOR")
	}
	if editor == "" {
		editor = "vi"
	}
	cmd := exec.CommandContext(ctx, "sh", "-c", editor+` "$1"`, "editor", path)
	cmd.Stdin, cmd.Stdout, cmd.Stderr, cmd.Env = env.Stdin, env.Stdout, env.Stderr, env.Environ
	if err := cmd.Run(); err != nil {
		return hinted(fmt.Errorf("editor %q: %w", editor, err), "cli-editor-hint")
	}
	return nil
}

package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/zeroclaw-go/zeroclaw/internal/api"
	"github.com/zeroclaw-go/zeroclaw/internal/backup"
	"github.com/zeroclaw-go/zeroclaw/internal/cli/hint"
	"github.com/zeroclaw-go/zeroclaw/internal/config"
	"github.com/zeroclaw-go/zeroclaw/internal/install"
)

// runBackup archives the install, consistently even while its daemon runs: this process snapshots each
// database with VACUUM INTO under SQLite's own locking (see package backup).
func runBackup(ctx context.Context, env Env, args []string) error {
	fs := newFlagSet(env, "backup", "FILE.tar.gz [--config-dir DIR]")
	configDir := configDirFlag(fs)
	out, err := parseWithID(fs, args, "archive file (FILE.tar.gz)")
	if err != nil {
		return err
	}
	layout, err := install.Resolve(*configDir, env.Getenv, env.Home)
	if err != nil {
		return err
	}
	if _, err := os.Stat(layout.Root); err != nil {
		return hint.With(say("cli-backup-no-install", "path", layout.Root), "zeroclaw backup FILE.tar.gz --config-dir DIR")
	}
	schema, _ := config.SchemaVersionOf(layout.ConfigPath())
	bar := newProgressBar(env.Stderr)
	m, err := backup.Create(ctx, backup.CreateOptions{Layout: layout, Out: out, Version: api.BuildVersion(), Now: time.Now(),
		ConfigSchemaVersion: schema, Progress: bar.update})
	bar.finish()
	if err != nil {
		return err
	}
	var size int64
	for _, e := range m.Entries {
		size += e.Size
	}
	fmt.Fprintln(env.Stdout, env.Locale().T("cli-backup-done", "count", len(m.Entries), "size", humanBytes(size), "root", layout.Root, "archive", out))
	for _, s := range m.Skipped {
		fmt.Fprintln(env.Stdout, "  "+env.Locale().T("cli-backup-not-included", "path", s))
	}
	for _, e := range m.Entries {
		if e.Path == ".secret_key" {
			fmt.Fprintln(env.Stdout, env.Locale().T("cli-backup-secret-key", "archive", out))
			break
		}
	}
	return nil
}

// runRestore verifies an archive, then puts it in place of the install.
func runRestore(ctx context.Context, env Env, args []string) error {
	fs := newFlagSet(env, "restore", "FILE.tar.gz [--config-dir DIR] [--force]")
	configDir := configDirFlag(fs)
	force := fs.Bool("force", false, "restore over a non-empty install, which is kept as DIR.before-restore-<time>")
	archive, err := parseWithID(fs, args, "archive file (FILE.tar.gz)")
	if err != nil {
		return err
	}
	layout, err := install.Resolve(*configDir, env.Getenv, env.Home)
	if err != nil {
		return err
	}
	bar := newProgressBar(env.Stderr)
	res, err := backup.Restore(ctx, backup.RestoreOptions{Archive: archive, Layout: layout, Force: *force, Now: time.Now(),
		Progress: bar.update})
	bar.finish()
	switch {
	case errors.Is(err, backup.ErrDaemonRunning):
		return hinted(err, "cli-restore-daemon-running-hint")
	case errors.Is(err, backup.ErrNotEmpty):
		return hinted(err, "cli-restore-not-empty-hint", "command", "zeroclaw restore "+archive+" --force", "path", layout.Root+".before-restore-<time>")
	case errors.Is(err, backup.ErrInvalidArchive):
		return hinted(err, "cli-restore-invalid-hint")
	case err != nil:
		return err
	}
	fmt.Fprintln(env.Stdout, env.Locale().T("cli-restore-done", "count", len(res.Manifest.Entries), "version", res.Manifest.ZeroclawVersion,
		"created", res.Manifest.CreatedAt, "path", layout.Root))
	if res.MovedAside != "" {
		fmt.Fprintln(env.Stdout, env.Locale().T("cli-restore-moved-aside", "path", res.MovedAside))
	}
	fmt.Fprintln(env.Stdout, env.Locale().T("cli-restore-next"))
	return nil
}

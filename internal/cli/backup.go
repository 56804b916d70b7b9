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
	fmt.Fprintf(env.Stdout, "backed up %d files (%s) of %s to %s\n", len(m.Entries), humanBytes(size), layout.Root, out)
	for _, s := range m.Skipped {
		fmt.Fprintf(env.Stdout, "  not included: %s\n", s)
	}
	for _, e := range m.Entries {
		if e.Path == ".secret_key" {
			fmt.Fprintf(env.Stdout, "the archive holds .secret_key, which decrypts every secret in config.toml: keep %s as private as the install\n", out)
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
	fmt.Fprintf(env.Stdout, "restored %d files (zeroclaw %s, %s) into %s\n", len(res.Manifest.Entries), res.Manifest.ZeroclawVersion,
		res.Manifest.CreatedAt, layout.Root)
	if res.MovedAside != "" {
		fmt.Fprintf(env.Stdout, "the previous install is kept at %s\n", res.MovedAside)
	}
	fmt.Fprintln(env.Stdout, "next: zeroclaw daemon, then zeroclaw doctor")
	return nil
}

package cli

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/zeroclaw-go/zeroclaw/internal/cli/hint"
	"github.com/zeroclaw-go/zeroclaw/internal/install"
	"github.com/zeroclaw-go/zeroclaw/internal/store"
)

// sqliteStores names the install's SQLite databases for storage compact --store, with their paths under the
// data dir (state.md §1).
var sqliteStores = []struct{ name, rel string }{
	{"sessions", "sessions/sessions.db"},
	{"acp", "sessions/acp-sessions.db"},
	{"cron", "cron/jobs.db"},
	{"memory", "memory/brain.db"},
	{"sop", "sop/runs.db"},
	{"control_plane", "control_plane.db"},
	{"devices", "devices.db"},
}

// storageCompact rewrites each SQLite store without its free pages (store.Compact) while holding the install
// lock, so no daemon starts on the install meanwhile; a running daemon is a refusal with a hint to stop it
// first: a live database is never renamed under the daemon's connections.
func storageCompact(ctx context.Context, env Env, args []string) error {
	names := make([]string, len(sqliteStores))
	for i, s := range sqliteStores {
		names[i] = s.name
	}
	flags := newFlagSet(env, "storage compact", "[--store NAME] [--config-dir DIR]")
	configDir := configDirFlag(flags)
	only := flags.String("store", "", "compact only this store: "+strings.Join(names, ", "))
	if err := parseFlags(flags, args); err != nil {
		return err
	}
	if *only != "" && !slices.Contains(names, *only) {
		return hint.With(fmt.Errorf("storage compact: unknown store %q", *only), "zeroclaw storage compact --store "+names[0]+" (stores: "+strings.Join(names, ", ")+")")
	}
	layout, err := install.Resolve(*configDir, env.Getenv, env.Home)
	if err != nil {
		return err
	}
	if _, err := os.Stat(layout.DataDir); errors.Is(err, fs.ErrNotExist) {
		return say("cli-compact-no-data", "path", layout.Root)
	}
	lock, err := install.LockInstall(layout)
	if err != nil {
		var le *install.LockedError
		if errors.As(err, &le) {
			return hinted(say("cli-compact-daemon-running", "pid", le.PID, "path", layout.Root), "cli-compact-daemon-running-hint")
		}
		return err
	}
	defer lock.Release()
	done := 0
	for _, s := range sqliteStores {
		if *only != "" && s.name != *only {
			continue
		}
		p := filepath.Join(layout.DataDir, filepath.FromSlash(s.rel))
		if _, err := os.Stat(p); errors.Is(err, fs.ErrNotExist) {
			if *only != "" {
				fmt.Fprintln(env.Stdout, env.Locale().T("cli-compact-missing", "store", s.name, "path", p))
			}
			continue
		}
		res, err := store.Compact(ctx, p)
		if err != nil {
			return hinted(err, "cli-compact-failed-hint")
		}
		done++
		fmt.Fprintf(env.Stdout, "%s: %s -> %s (%d free pages given back)\n", s.name, humanBytes(res.Before.FileBytes+res.Before.WALBytes),
			humanBytes(res.After.FileBytes+res.After.WALBytes), res.Before.FreePages)
	}
	if done == 0 && *only == "" {
		fmt.Fprintln(env.Stdout, env.Locale().T("cli-compact-none"))
	}
	return nil
}

package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"log/slog"
	"os"

	"github.com/zeroclaw-go/zeroclaw/internal/api"
	"github.com/zeroclaw-go/zeroclaw/internal/config"
	"github.com/zeroclaw-go/zeroclaw/internal/install"
	"github.com/zeroclaw-go/zeroclaw/internal/secrets"
)

// configMigrate rewrites an upstream schema v1 or v2 config.toml as v3 (state.md §2.3), keeping config.toml.bak.
//
// It always works on the file itself, with or without a daemon. Without one it takes the install lock, as the
// other local edits do. With one, the lock is the daemon's, and the file is rewritten anyway: a daemon never
// writes an older file (it refuses config writes until the file is migrated), so the two cannot interleave;
// the daemon is then asked to reload, which swaps in the same values it was already running from memory.
func configMigrate(ctx context.Context, env Env, args []string) error {
	var dryRun, verbose bool
	dir, _, err := configFlags(env, "migrate", "[--config-dir DIR] [--dry-run] [-v]", args, 0, 0, func(fs *flag.FlagSet) {
		fs.BoolVar(&dryRun, "dry-run", false, "print the migrated file instead of writing it")
		fs.BoolVar(&verbose, "v", false, "also list what moved where")
	})
	if err != nil {
		return err
	}
	layout, err := install.Resolve(dir, env.Getenv, env.Home)
	if err != nil {
		return err
	}
	path := layout.ConfigPath()
	raw, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		fmt.Fprintln(env.Stdout, env.Locale().T("cli-migrate-missing", "path", path))
		return nil
	}
	if err != nil {
		return fmt.Errorf("config: migrate: %w", err)
	}
	if dryRun {
		mig, err := config.MigrateBytes(path, raw)
		if err != nil {
			return configError("migrate", err)
		}
		if mig == nil {
			fmt.Fprintln(env.Stderr, env.Locale().T("cli-migrate-already-v3", "path", path))
			return nil
		}
		printMigration(env, mig, verbose)
		// The migrated file is shown, not written: its secrets stay masked, as everywhere else.
		text, err := config.MaskSecrets(path, mig.Text)
		if err != nil {
			return configError("migrate", err)
		}
		_, err = env.Stdout.Write(text)
		return err
	}

	c, err := connect(ctx, layout.Endpoint(env.Getenv), nil)
	if err != nil && !errors.Is(err, errNoDaemon) {
		return err
	}
	if c == nil {
		lock, err := install.LockInstall(layout)
		if err != nil {
			var le *install.LockedError
			if errors.As(err, &le) {
				return hinted(say("cli-config-daemon-silent", "pid", le.PID, "root", layout.Root), "cli-quickstart-daemon-silent-hint")
			}
			return fmt.Errorf("config: %w", err)
		}
		defer lock.Release()
	} else {
		defer c.Close()
	}
	log := slog.New(slog.NewTextHandler(env.Stderr, &slog.HandlerOptions{Level: slog.LevelError}))
	res, err := config.MigrateFile(ctx, path, secrets.New(layout.SecretKeyPath()), env.Environ, log)
	if err != nil {
		return configError("migrate", err)
	}
	if res.Migration == nil {
		fmt.Fprintln(env.Stdout, env.Locale().T("cli-migrate-already-v3", "path", path))
		return nil
	}
	fmt.Fprintln(env.Stdout, env.Locale().T("cli-migrate-done", "path", path, "from", res.Migration.From, "backup", res.Backup))
	printMigration(env, res.Migration, verbose)
	if c != nil {
		var rr api.ConfigReloadResult
		if err := c.Call(ctx, api.MethodConfigReload, nil, &rr); err != nil {
			fmt.Fprintln(env.Stdout, env.Locale().T("cli-migrate-not-reloaded", "error", err))
		} else {
			fmt.Fprintln(env.Stdout, env.Locale().T("cli-migrate-reloaded", "generation", rr.Generation))
		}
	}
	if len(res.Problems) > 0 {
		for _, p := range res.Problems {
			fmt.Fprintf(env.Stdout, "%s:%d: %s: %s\n", path, p.Line, p.Path, p.Message)
		}
		return hinted(say("cli-config-migrate-problems", "path", path, "count", len(res.Problems)), "cli-config-fix-lines-hint")
	}
	return nil
}

// printMigration prints the migration's warnings (what was dropped or cannot be used here), and with verbose
// its notes, to stderr.
func printMigration(env Env, mig *config.Migration, verbose bool) {
	seen := map[string]bool{}
	once := func(kind, s string) {
		if !seen[kind+s] {
			seen[kind+s] = true
			fmt.Fprintf(env.Stderr, "%s: %s\n", kind, s)
		}
	}
	for _, w := range mig.Warnings {
		once("warning", w)
	}
	if verbose {
		for _, n := range mig.Notes {
			once("note", n)
		}
	}
}

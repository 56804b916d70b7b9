package cli

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/zeroclaw-go/zeroclaw/internal/cli/hint"
	"github.com/zeroclaw-go/zeroclaw/internal/install"
	"github.com/zeroclaw-go/zeroclaw/internal/pgdb"
	"github.com/zeroclaw-go/zeroclaw/internal/store"
	"github.com/zeroclaw-go/zeroclaw/internal/store/pgchat"
)

const storageSynopsis = "migrate --to postgres|sqlite DSN [--schema NAME] [--config-dir DIR] | compact [--store NAME] [--config-dir DIR]"

func runStorage(ctx context.Context, env Env, args []string) error {
	return group{name: "storage", synopsis: storageSynopsis, subs: []subcommand{sub("migrate", storageMigrate), sub("compact", storageCompact)}}.run(ctx, env, args)
}

// storageMigrate copies the install's chat sessions between its SQLite database and PostgreSQL, resumably and
// verified (pgchat.CopyToPostgres), with the daemon stopped; the source is kept as it was.
func storageMigrate(ctx context.Context, env Env, args []string) error {
	const synopsis = "--to postgres|sqlite DSN|- [--schema NAME] [--config-dir DIR]"
	fs := newFlagSet(env, "storage migrate", synopsis)
	configDir := configDirFlag(fs)
	to := fs.String("to", "", "the destination: postgres (copy SQLite into PostgreSQL) or sqlite (copy PostgreSQL back)")
	schema := fs.String("schema", "", "the PostgreSQL schema of the tables (default: the connection's search_path)")
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 || (*to != "postgres" && *to != "sqlite") {
		fmt.Fprintln(fs.Output(), env.Locale().T("cli-storage-usage"))
		fs.Usage()
		return errUsage
	}
	dsn := pos[0]
	if dsn == "-" { // kept out of the process list
		line, err := bufio.NewReader(env.Stdin).ReadString('\n')
		if err != nil && line == "" {
			return say("cli-storage-stdin", "err", err)
		}
		dsn = strings.TrimSpace(line)
	}
	layout, err := install.Resolve(*configDir, env.Getenv, env.Home)
	if err != nil {
		return err
	}
	if _, err := os.Stat(layout.Root); err != nil {
		return hint.With(say("cli-backup-no-install", "path", layout.Root), "zeroclaw storage "+storageSynopsis)
	}
	// The daemon must not write while its sessions are copied: hold its install lock throughout.
	lock, err := install.LockInstall(layout)
	if errors.Is(err, install.ErrLocked) {
		return hinted(say("cli-storage-daemon-running", "path", layout.Root, "err", err), "cli-storage-daemon-running-hint")
	}
	if err != nil {
		return err
	}
	defer lock.Release()
	dbPath := filepath.Join(layout.SessionsDir(), "sessions.db")
	if *to == "postgres" {
		if _, err := os.Stat(dbPath); err != nil {
			return say("cli-storage-no-chat-db", "path", dbPath)
		}
	}
	pool, err := pgdb.Open(ctx, dsn, pgdb.Options{Schema: *schema, AppName: "zeroclaw-storage-migrate", Size: 2})
	if err != nil {
		return hinted(fmt.Errorf("storage migrate: %w", err), "cli-storage-dsn-hint")
	}
	defer pool.Close()
	pg, err := pgchat.Open(ctx, pool, pgchat.Options{})
	if err != nil {
		return fmt.Errorf("storage migrate: %w", err)
	}
	defer pg.Close()
	sqlite, err := store.OpenChat(ctx, dbPath)
	if err != nil {
		return fmt.Errorf("storage migrate: %w", err)
	}
	defer sqlite.Close()
	progress := func(done, total int) {
		if done%100 == 0 || done == total {
			fmt.Fprintf(env.Stderr, "chat sessions: %d/%d\n", done, total)
		}
	}
	var st pgchat.CopyStats
	where := "PostgreSQL"
	if *to == "postgres" {
		st, err = pgchat.CopyToPostgres(ctx, sqlite, pg, progress)
	} else {
		where = dbPath
		st, err = pgchat.CopyToSQLite(ctx, pg, sqlite, progress)
	}
	if errors.Is(err, pgchat.ErrConflict) {
		return hinted(fmt.Errorf("storage migrate: %w", err), "cli-storage-conflict-hint")
	}
	if err != nil {
		return say("cli-storage-failed", "err", err)
	}
	fmt.Fprintln(env.Stdout, env.Locale().T("cli-storage-done", "sessions", st.Sessions, "messages", st.Messages, "where", where,
		"copied", st.Copied, "skipped", st.Skipped))
	if *to == "postgres" {
		fmt.Fprintln(env.Stdout, env.Locale().T("cli-storage-kept", "path", dbPath))
	}
	fmt.Fprintln(env.Stdout, env.Locale().T("cli-storage-not-copied"))
	return nil
}

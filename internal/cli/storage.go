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

const storageSynopsis = "migrate --to postgres|sqlite DSN [--schema NAME] [--config-dir DIR]"

func runStorage(ctx context.Context, env Env, args []string) error {
	return group{name: "storage", synopsis: storageSynopsis, subs: []subcommand{sub("migrate", storageMigrate)}}.run(ctx, env, args)
}

// storageMigrate copies the install's chat sessions between its SQLite database and PostgreSQL, resumably and
// verified (pgchat.CopyToPostgres), with the daemon stopped; the source is kept as it was.
func storageMigrate(ctx context.Context, env Env, args []string) error {
	const synopsis = "--to postgres|sqlite DSN [--schema NAME] [--config-dir DIR]   (DSN - reads it from stdin)"
	fs := newFlagSet(env, "storage migrate", synopsis)
	configDir := configDirFlag(fs)
	to := fs.String("to", "", "the destination: postgres (copy SQLite into PostgreSQL) or sqlite (copy PostgreSQL back)")
	schema := fs.String("schema", "", "the PostgreSQL schema of the tables (default: the connection's search_path)")
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 || (*to != "postgres" && *to != "sqlite") {
		fmt.Fprintln(fs.Output(), "storage migrate: --to postgres|sqlite and one DSN are required")
		fs.Usage()
		return errUsage
	}
	dsn := pos[0]
	if dsn == "-" { // kept out of the process list
		line, err := bufio.NewReader(env.Stdin).ReadString('\n')
		if err != nil && line == "" {
			return fmt.Errorf("storage migrate: read the DSN from stdin: %w", err)
		}
		dsn = strings.TrimSpace(line)
	}
	layout, err := install.Resolve(*configDir, env.Getenv, env.Home)
	if err != nil {
		return err
	}
	if _, err := os.Stat(layout.Root); err != nil {
		return hint.With(fmt.Errorf("no install at %s", layout.Root), "zeroclaw storage "+storageSynopsis)
	}
	// The daemon must not write while its sessions are copied: hold its install lock throughout.
	lock, err := install.LockInstall(layout)
	if errors.Is(err, install.ErrLocked) {
		return hint.With(fmt.Errorf("storage migrate: a daemon runs on %s: %w", layout.Root, err), "zeroclaw stop, then migrate again")
	}
	if err != nil {
		return err
	}
	defer lock.Release()
	dbPath := filepath.Join(layout.SessionsDir(), "sessions.db")
	if *to == "postgres" {
		if _, err := os.Stat(dbPath); err != nil {
			return fmt.Errorf("storage migrate: no chat database at %s", dbPath)
		}
	}
	pool, err := pgdb.Open(ctx, dsn, pgdb.Options{Schema: *schema, AppName: "zeroclaw-storage-migrate", Size: 2})
	if err != nil {
		return hint.With(fmt.Errorf("storage migrate: %w", err), "check the DSN (postgres://user:password@host:port/database) and that the server answers")
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
		return hint.With(fmt.Errorf("storage migrate: %w", err), "nothing was overwritten; migrate into an empty destination, or delete that session there first")
	}
	if err != nil {
		return fmt.Errorf("storage migrate: %w (sessions copied so far are kept; run it again to resume)", err)
	}
	fmt.Fprintf(env.Stdout, "chat sessions: %d (%d messages) in %s: %d copied now, %d were already there; counts and SHA-256 digests verified\n",
		st.Sessions, st.Messages, where, st.Copied, st.Skipped)
	if *to == "postgres" {
		fmt.Fprintf(env.Stdout, "the SQLite files are kept: %s\n", dbPath)
	}
	fmt.Fprintln(env.Stdout, "not copied by this command: memory (its PostgreSQL backend is set up in [memory]), cron, SOP runs and the other stores")
	return nil
}

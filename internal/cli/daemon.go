package cli

import (
	"cmp"
	"context"
	"errors"

	"github.com/zeroclaw-go/zeroclaw/internal/cli/hint"
	"github.com/zeroclaw-go/zeroclaw/internal/daemon"
	"github.com/zeroclaw-go/zeroclaw/internal/install"
)

func runDaemon(ctx context.Context, env Env, args []string) error {
	fs := newFlagSet(env, "daemon", "[--config-dir DIR] [--ephemeral] [--log-format text|json] [--log-level L]")
	configDir := configDirFlag(fs)
	ephemeral := fs.Bool("ephemeral", false, "exit 1 s after the last client disconnects")
	logFormat := fs.String("log-format", "text", "log format on stderr: text or json")
	logLevel := fs.String("log-level", "info", "log level: debug, info, warn or error")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	log, err := newLogger(env.Stderr, *logFormat, *logLevel)
	if err != nil {
		return err
	}
	err = daemon.Run(ctx, daemon.Options{
		ConfigDir: *configDir,
		Ephemeral: *ephemeral,
		Environ:   env.Environ,
		Home:      env.Home,
		Logger:    log,
		Banner:    env.Stderr,
		// locales/fetch downloads upstream's tools and zerocode catalogues from its repository;
		// ZEROCLAW_LOCALES_URL points it elsewhere (a mirror, a test's loopback server).
		LocalesBaseURL: cmp.Or(env.Getenv("ZEROCLAW_LOCALES_URL"), daemon.UpstreamCatalogURL),
	})
	var re *daemon.RunningError
	if errors.As(err, &re) {
		return hint.With(err, "zeroclaw stop")
	}
	if errors.Is(err, install.ErrUnsafeLock) {
		return hinted(err, "cli-daemon-unsafe-lock-hint")
	}
	return err
}

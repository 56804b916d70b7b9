package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/zeroclaw-go/zeroclaw/internal/cli/hint"
	"github.com/zeroclaw-go/zeroclaw/internal/install"
	"github.com/zeroclaw-go/zeroclaw/internal/service"
)

const serviceSynopsis = "install | uninstall | start | stop | status [--config-dir DIR] [--unit-dir DIR]"

// runService installs the daemon as a per-user service (a systemd user unit, a launchd agent) and drives it.
func runService(ctx context.Context, env Env, args []string) error {
	if done, err := groupHelp(env, "service", serviceSynopsis, args); done {
		return err
	}
	action := args[0]
	switch action {
	case "install", "uninstall", "start", "stop", "status":
	default:
		return hint.With(say("cli-unknown-subcommand", "group", "service", "command", fmt.Sprintf("%q", action)), "zeroclaw service "+serviceSynopsis)
	}
	fs := newFlagSet(env, "service "+action, "[--config-dir DIR] [--unit-dir DIR]")
	configDir := configDirFlag(fs)
	unitDir := fs.String("unit-dir", "", "write the unit here instead of the service manager's directory, and leave the manager alone (default: $"+service.EnvUnitDir+")")
	if err := parseFlags(fs, args[1:]); err != nil {
		return err
	}
	layout, err := install.Resolve(*configDir, env.Getenv, env.Home)
	if err != nil {
		return err
	}
	exe, err := os.Executable()
	if err != nil {
		return say("cli-service-no-exe", "error", err)
	}
	if resolved, err := filepath.EvalSymlinks(exe); err == nil {
		exe = resolved
	}
	o := service.Options{Exe: exe, ConfigDir: layout.Root, Home: env.Home, UnitDir: *unitDir}
	if o.UnitDir == "" {
		o.UnitDir = env.Getenv(service.EnvUnitDir)
	}
	switch action {
	case "install":
		out, err := service.Install(ctx, o)
		if err != nil {
			return serviceErr(err)
		}
		verb := "Installed"
		if !out.Changed {
			verb = "Already installed"
		}
		fmt.Fprintf(env.Stdout, "%s: %s\n\n%s\n", verb, out.Path, out.Content)
		for _, n := range out.Notes {
			fmt.Fprintln(env.Stdout, n)
		}
		return nil
	case "uninstall":
		out, err := service.Uninstall(ctx, o)
		if err != nil {
			return serviceErr(err)
		}
		for _, n := range out.Notes {
			fmt.Fprintln(env.Stdout, n)
		}
		if out.Changed {
			fmt.Fprintf(env.Stdout, "Removed: %s\n", out.Path)
		}
		return nil
	}
	var report string
	switch action {
	case "start":
		report, err = service.Start(ctx, o)
	case "stop":
		report, err = service.Stop(ctx, o)
	default:
		report, err = service.Status(ctx, o)
	}
	if err != nil {
		return serviceErr(err)
	}
	if report != "" {
		fmt.Fprintln(env.Stdout, report)
	}
	return nil
}

func serviceErr(err error) error {
	switch {
	case errors.Is(err, service.ErrNotInstalled):
		return hint.With(err, "zeroclaw service install")
	case errors.Is(err, service.ErrUnsupported):
		return hinted(err, "cli-service-unsupported-hint")
	}
	return err
}

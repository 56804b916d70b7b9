package cli

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/zeroclaw-go/zeroclaw/internal/cli/hint"
	"github.com/zeroclaw-go/zeroclaw/internal/config"
	"github.com/zeroclaw-go/zeroclaw/internal/install"
	"github.com/zeroclaw-go/zeroclaw/internal/sop"
	"github.com/zeroclaw-go/zeroclaw/internal/visible"
)

// The authoring verbs of `zeroclaw sop`: list and validate read the SOP files themselves (upstream's CLI does
// too), so they work with no daemon running.

const sopAuthorSynopsis = "list [--config-dir DIR] | validate [DIR]"

func sopAuthorSubs() []subcommand {
	return []subcommand{sub("list", sopList, "ls"), sub("validate", sopValidate, "check")}
}

// sopInstallDir resolves the install's SOPs directory and load options from its config.toml ([sop] sops_dir,
// default_execution_mode); an unreadable config falls back to the defaults, with a warning.
func sopInstallDir(env Env, configDir string) (string, sop.LoadOptions, error) {
	layout, err := install.Resolve(configDir, env.Getenv, env.Home)
	if err != nil {
		return "", sop.LoadOptions{}, err
	}
	c := config.DefaultSOP()
	if cfg, _, err := config.Load(layout.ConfigPath(), env.Environ); err == nil {
		c = cfg.SOP
	} else if !errors.Is(err, fs.ErrNotExist) {
		fmt.Fprintln(env.Stderr, env.Locale().T("cli-sop-config-warning", "path", layout.ConfigPath(), "error", err))
	}
	return sop.ResolveDir(layout.Root, c.SOPsDir, env.Home), sop.LoadOptions{DefaultMode: sop.ParseExecutionMode(c.DefaultExecutionMode)}, nil
}

func sopList(_ context.Context, env Env, args []string) error {
	fs := newFlagSet(env, "sop list", "[--config-dir DIR]")
	configDir := configDirFlag(fs)
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return hint.With(say("cli-unexpected-argument", "command", "sop list", "argument", fmt.Sprintf("%q", fs.Arg(0))), "zeroclaw sop list [--config-dir DIR]")
	}
	dir, opts, err := sopInstallDir(env, *configDir)
	if err != nil {
		return err
	}
	cat := sop.LoadDir(dir, opts)
	if len(cat.Sops) == 0 && len(cat.Disabled) == 0 {
		loc := env.Locale()
		fmt.Fprintln(env.Stdout, loc.T("cli-sop-none-in", "path", dir))
		fmt.Fprintln(env.Stdout, loc.T("cli-try-label", "hint", loc.T("cli-sop-none-in-hint", "path", dir)))
		return nil
	}
	tw := tabwriter.NewWriter(env.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tPRIORITY\tMODE\tSTEPS\tTRIGGERS\tDESCRIPTION")
	for _, s := range cat.Sops {
		var trig []string
		for _, t := range s.Triggers {
			trig = append(trig, t.Label())
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\t%s\n", visible.Escape(s.Name), s.Priority, s.ExecutionMode, len(s.Steps),
			visible.Escape(strings.Join(trig, ", ")), visible.Escape(sopSummary(s.Description)))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, d := range cat.Disabled {
		fmt.Fprintln(env.Stdout, env.Locale().T("cli-sop-disabled", "dir", visible.Escape(d.Dir), "reason", visible.Escape(d.Reason)))
	}
	if len(cat.Disabled) > 0 {
		fmt.Fprintf(env.Stdout, "Try: zeroclaw sop validate %s\n", dir)
	}
	return nil
}

func sopSummary(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	if len(s) > 60 {
		s = sop.CapUntrusted(s, 57) + "..."
	}
	return s
}

// sopValidate checks a SOP directory, a directory of SOPs, or (no DIR) the install's SOPs directory, and
// prints every finding as file:line: error|warning: message. Any error exits non-zero.
func sopValidate(_ context.Context, env Env, args []string) error {
	fs := newFlagSet(env, "sop validate", "[DIR] [--config-dir DIR]")
	configDir := configDirFlag(fs)
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 1 {
		return hint.With(say("cli-sop-validate-one-dir", "count", fs.NArg()), "zeroclaw sop validate DIR")
	}
	dir, opts, err := sopInstallDir(env, *configDir)
	if err != nil {
		return err
	}
	if fs.NArg() == 1 {
		dir = fs.Arg(0)
	}
	checks, n, err := sop.CheckPath(dir, opts)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return hinted(say("cli-sop-validate-missing", "path", dir), "cli-sop-validate-dir-hint")
		}
		return fmt.Errorf("sop validate: %w", err)
	}
	errs, warns := 0, 0
	for _, c := range checks {
		fmt.Fprintln(env.Stdout, visible.Escape(c.String()))
		if c.Error {
			errs++
		} else {
			warns++
		}
	}
	if n == 0 {
		return hinted(say("cli-sop-validate-empty", "path", dir), "cli-sop-validate-dir-hint")
	}
	if errs > 0 {
		return hinted(say("cli-sop-validate-errors", "errors", errs, "warnings", warns, "count", n), "cli-sop-validate-errors-hint")
	}
	fmt.Fprintln(env.Stdout, env.Locale().T("cli-sop-validate-ok", "count", n, "warnings", warns))
	return nil
}

package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/zeroclaw-go/zeroclaw/internal/api"
	"github.com/zeroclaw-go/zeroclaw/internal/cli/hint"
	"github.com/zeroclaw-go/zeroclaw/internal/doctor"
	"github.com/zeroclaw-go/zeroclaw/internal/i18n"
	"github.com/zeroclaw-go/zeroclaw/internal/install"
	"github.com/zeroclaw-go/zeroclaw/internal/visible"
)

// runDoctor asks the running daemon for doctor/run, or inspects the install itself when no daemon runs. The
// exit code is 1 when any finding is a warning or an error.
func runDoctor(ctx context.Context, env Env, args []string) error {
	fs := newFlagSet(env, "doctor", "[--config-dir DIR] [--offline] [--json]")
	configDir := configDirFlag(fs)
	offline := fs.Bool("offline", false, "skip the providers' reachability probes (no network)")
	asJSON := fs.Bool("json", false, "print the doctor/run result as JSON")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	layout, err := install.Resolve(*configDir, env.Getenv, env.Home)
	if err != nil {
		return err
	}
	endpoint := layout.Endpoint(env.Getenv)
	loc := env.Locale()
	var res api.DoctorResult
	via := loc.T("cli-doctor-via-daemon")
	c, err := connect(ctx, endpoint, nil)
	switch {
	case err == nil:
		defer c.Close()
		if err := c.Call(ctx, api.MethodDoctorRun, api.DoctorRunParams{Offline: *offline, Locale: loc.Code()}, &res); err != nil {
			return err
		}
	case errors.Is(err, errNoDaemon):
		via = loc.T("cli-doctor-via-process")
		res = doctor.Run(ctx, doctor.Options{Layout: layout, Endpoint: endpoint, Environ: env.Environ, SkipProviders: *offline, Locale: loc})
	default:
		return err
	}
	if *asJSON {
		b, _ := json.MarshalIndent(res, "", "  ")
		fmt.Fprintln(env.Stdout, string(b))
	} else {
		printDoctor(env.Stdout, loc, env.colour(env.Stdout), layout.Root, via, res)
	}
	if !doctor.OK(res) {
		return &hint.Error{Err: errors.New(loc.T("cli-doctor-found", "errors", res.Summary.Errors, "warnings", res.Summary.Warnings)),
			Hint: loc.T("cli-doctor-found-hint"), Code: 1}
	}
	return nil
}

func printDoctor(w io.Writer, loc *i18n.Localizer, colour bool, root, via string, res api.DoctorResult) {
	fmt.Fprintln(w, loc.T("cli-doctor-header", "root", visible.Escape(root), "via", via))
	mark := map[string]string{api.SeverityOK: style(colour, "32", "ok") + "   ", api.SeverityWarn: style(colour, "33", "WARN") + " ",
		api.SeverityError: style(colour, "31", "ERROR")}
	for _, d := range res.Results {
		m, ok := mark[d.Severity]
		if !ok {
			m = d.Severity
		}
		fmt.Fprintf(w, "%s [%s] %s\n", m, visible.Escape(d.Category), visible.Escape(d.Message))
		if d.Fix != "" {
			fmt.Fprintln(w, "      "+loc.T("cli-doctor-fix", "fix", visible.Escape(d.Fix)))
		}
	}
	if res.TimedOutPhase != "" {
		fmt.Fprintln(w, loc.T("cli-doctor-timed-out", "phase", res.TimedOutPhase))
	}
	fmt.Fprintln(w, loc.T("cli-doctor-summary", "ok", res.Summary.OK, "warnings", res.Summary.Warnings, "errors", res.Summary.Errors))
}

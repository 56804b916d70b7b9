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
	var res api.DoctorResult
	via := "the running daemon"
	c, err := connect(ctx, endpoint, nil)
	switch {
	case err == nil:
		defer c.Close()
		if err := c.Call(ctx, api.MethodDoctorRun, api.DoctorRunParams{Offline: *offline}, &res); err != nil {
			return err
		}
	case errors.Is(err, errNoDaemon):
		via = "this process (no daemon running)"
		res = doctor.Run(ctx, doctor.Options{Layout: layout, Endpoint: endpoint, Environ: env.Environ, SkipProviders: *offline})
	default:
		return err
	}
	if *asJSON {
		b, _ := json.MarshalIndent(res, "", "  ")
		fmt.Fprintln(env.Stdout, string(b))
	} else {
		printDoctor(env.Stdout, layout.Root, via, res)
	}
	if !doctor.OK(res) {
		return &hint.Error{Err: fmt.Errorf("doctor found %d errors and %d warnings", res.Summary.Errors, res.Summary.Warnings),
			Hint: "apply the fixes above, then run zeroclaw doctor again", Code: 1}
	}
	return nil
}

func printDoctor(w io.Writer, root, via string, res api.DoctorResult) {
	fmt.Fprintf(w, "zeroclaw doctor: %s (checked by %s)\n", visible.Escape(root), via)
	mark := map[string]string{api.SeverityOK: "ok   ", api.SeverityWarn: "WARN ", api.SeverityError: "ERROR"}
	for _, d := range res.Results {
		m, ok := mark[d.Severity]
		if !ok {
			m = d.Severity
		}
		fmt.Fprintf(w, "%s [%s] %s\n", m, visible.Escape(d.Category), visible.Escape(d.Message))
		if d.Fix != "" {
			fmt.Fprintf(w, "      fix: %s\n", visible.Escape(d.Fix))
		}
	}
	if res.TimedOutPhase != "" {
		fmt.Fprintf(w, "timed out during: %s\n", res.TimedOutPhase)
	}
	fmt.Fprintf(w, "%d ok, %d warnings, %d errors\n", res.Summary.OK, res.Summary.Warnings, res.Summary.Errors)
}

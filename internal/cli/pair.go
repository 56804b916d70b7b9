package cli

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/zeroclaw-go/zeroclaw/internal/api"
	"github.com/zeroclaw-go/zeroclaw/internal/jsonrpc"
	"github.com/zeroclaw-go/zeroclaw/internal/visible"
)

const pairSynopsis = "code [--profile NAME] | list [--json] | revoke DEVICE_ID"

// runPair manages gateway pairing through the running daemon (the code lives in its memory).
func runPair(ctx context.Context, env Env, args []string) error {
	return group{name: "pair", synopsis: pairSynopsis, subs: []subcommand{
		sub("code", pairCode), sub("list", pairList), sub("revoke", pairRevoke),
	}}.run(ctx, env, args)
}

func pairCode(ctx context.Context, env Env, args []string) error {
	fs := newFlagSet(env, "pair code", "[--profile NAME] [--config-dir DIR]")
	configDir := configDirFlag(fs)
	profile := fs.String("profile", "", "permission profile the device paired with this code gets (default: gateway.device_permission_profiles; none: the owner's equal)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	var res api.PairCodeResult
	if err := callOnce(ctx, env, *configDir, connectRunning, api.MethodPairCode, api.PairCodeParams{Profile: *profile}, &res); err != nil {
		var we *jsonrpc.Error
		if errors.As(err, &we) && strings.Contains(we.Message, "unknown permission profile") {
			return hinted(fmt.Errorf("pair: code: %s", strings.TrimPrefix(we.Message, "pairing: ")),
				"cli-pair-unknown-profile-hint")
		}
		return callError("pair code", err, nil)
	}
	fmt.Fprintln(env.Stdout, res.PairingCode)
	loc := env.Locale()
	who := loc.T("cli-pair-code-owner")
	if res.Profile != "" {
		who = loc.T("cli-pair-code-profile", "profile", res.Profile)
	}
	fmt.Fprintln(env.Stderr, loc.T("cli-pair-code-note", "who", who))
	return nil
}

func pairList(ctx context.Context, env Env, args []string) error {
	fs := newFlagSet(env, "pair list", "[--config-dir DIR] [--json]")
	configDir := configDirFlag(fs)
	asJSON := fs.Bool("json", false, "print the devices as JSON")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	var res api.DevicesListResult
	if err := callOnce(ctx, env, *configDir, connectRunning, api.MethodDevicesList, struct{}{}, &res); err != nil {
		return callError("pair list", err, nil)
	}
	if *asJSON {
		return printJSON(env, res.Devices)
	}
	if res.Count == 0 {
		fmt.Fprintln(env.Stderr, env.Locale().T("cli-pair-none"))
		return nil
	}
	tw := tabwriter.NewWriter(env.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tNAME\tTYPE\tPAIRED\tLAST SEEN\tIP")
	str := func(p *string) string {
		if p == nil {
			return "-"
		}
		return visible.Escape(*p)
	}
	for _, d := range res.Devices {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", d.ID, str(d.Name), str(d.DeviceType), d.PairedAt, d.LastSeen, str(d.IPAddress))
	}
	return tw.Flush()
}

func pairRevoke(ctx context.Context, env Env, args []string) error {
	fs := newFlagSet(env, "pair revoke", "DEVICE_ID [--config-dir DIR]")
	configDir := configDirFlag(fs)
	id, err := parseWithID(fs, args, "device id")
	if err != nil {
		return err
	}
	var res api.DeviceRevokeResult
	if err := callOnce(ctx, env, *configDir, connectRunning, api.MethodDevicesRevoke, api.DeviceParams{ID: id}, &res); err != nil {
		return callError("pair revoke", err, map[int]string{api.CodeNotFound: "zeroclaw pair list"})
	}
	fmt.Fprintln(env.Stdout, env.Locale().T("cli-pair-revoked", "device", res.DeviceID))
	return nil
}

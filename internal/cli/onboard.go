package cli

import (
	"context"
	"errors"
	"fmt"

	"github.com/zeroclaw-go/zeroclaw/internal/cli/hint"
)

// runOnboard is upstream's deprecated `zeroclaw onboard`: without arguments it only points at the quickstart
// and writes nothing (it does not even read the config); any of its old flags or sections is an error, so a
// script relying on them stops instead of doing something else.
func runOnboard(_ context.Context, env Env, args []string) error {
	if len(args) == 0 {
		fmt.Fprintln(env.Stdout, env.Locale().T("cli-onboard-deprecated"))
		return nil
	}
	if isHelpArg(args[0]) {
		fmt.Fprintln(env.Stdout, env.Locale().T("cli-onboard-deprecated"))
		return nil
	}
	return &hint.Error{Err: errors.New(env.Locale().T("cli-onboard-unsupported", "argument", fmt.Sprintf("%q", args[0]))),
		Hint: "zeroclaw quickstart --help", Code: 2}
}

package cli

import (
	"context"
	"fmt"
	"runtime"

	"github.com/zeroclaw-go/zeroclaw/internal/api"
)

func runVersion(_ context.Context, env Env, args []string) error {
	fs := newFlagSet(env, "version", "")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	fmt.Fprintln(env.Stdout, env.Locale().T("cli-version-line", "build", api.BuildVersion(), "protocol", api.ProtocolVersion,
		"server", api.ServerVersion, "go", runtime.Version(), "os", runtime.GOOS, "arch", runtime.GOARCH))
	return nil
}

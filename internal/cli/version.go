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
	fmt.Fprintf(env.Stdout, "zeroclaw %s (protocol %d of zeroclaw %s, %s %s/%s)\n", api.BuildVersion(), api.ProtocolVersion,
		api.ServerVersion, runtime.Version(), runtime.GOOS, runtime.GOARCH)
	return nil
}

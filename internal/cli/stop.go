package cli

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"runtime"
	"time"

	"github.com/zeroclaw-go/zeroclaw/internal/api"
	"github.com/zeroclaw-go/zeroclaw/internal/cli/hint"
)

func runStop(ctx context.Context, env Env, args []string) error {
	flags := newFlagSet(env, "stop", "[--config-dir DIR] [--timeout D]")
	configDir := configDirFlag(flags)
	timeout := flags.Duration("timeout", 10*time.Second, "how long to wait for the daemon to exit")
	if err := parseFlags(flags, args); err != nil {
		return err
	}
	endpoint, err := endpointFor(env, *configDir)
	if err != nil {
		return err
	}
	c, err := connect(ctx, endpoint, nil)
	if err != nil {
		return err
	}
	pid := c.Init().ServerPID
	err = c.Call(ctx, api.MethodShutdown, nil, nil)
	c.Close()
	if err != nil {
		return err
	}
	// The daemon has accepted the request; it is gone once its endpoint no longer answers.
	deadline := time.Now().Add(*timeout)
	for time.Now().Before(deadline) {
		nc, err := dial(ctx, endpoint)
		if errors.Is(err, errNoDaemon) && endpointGone(endpoint) {
			fmt.Fprintln(env.Stdout, env.Locale().T("cli-stop-done", "pid", pid))
			return nil
		}
		if nc != nil {
			nc.Close()
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
	return hint.With(say("cli-stop-timeout", "pid", pid, "wait", *timeout), fmt.Sprintf("kill %d", pid))
}

// endpointGone reports whether the socket file was removed, which the daemon does last when it shuts down.
func endpointGone(endpoint string) bool {
	if runtime.GOOS == "windows" {
		return true
	}
	_, err := os.Stat(endpoint)
	return errors.Is(err, fs.ErrNotExist)
}

package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"

	"github.com/zeroclaw-go/zeroclaw/internal/install"
)

// runACP is `zeroclaw acp`: the agent command an editor runs (acp.md). It bridges stdin and stdout to the
// daemon's ACP socket, starting an ephemeral daemon when none runs, so the one daemon process owns every session.
// It writes nothing of its own to stdout: stdout carries the protocol, errors go to stderr.
func runACP(ctx context.Context, env Env, args []string) error {
	fs := newFlagSet(env, "acp", "[--config-dir DIR]")
	configDir := configDirFlag(fs)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	layout, err := install.Resolve(*configDir, env.Getenv, env.Home)
	if err != nil {
		return err
	}
	nc, err := dialACP(ctx, env, layout, *configDir != "")
	if err != nil {
		return err
	}
	return bridge(ctx, nc, env.Stdin, env.Stdout)
}

// dialACP connects to the daemon's ACP endpoint, starting an ephemeral daemon when nothing serves the install.
func dialACP(ctx context.Context, env Env, layout install.Layout, passRoot bool) (net.Conn, error) {
	target := layout.ACPEndpoint()
	nc, err := dial(ctx, target)
	if err == nil || !errors.Is(err, errNoDaemon) {
		return nc, err
	}
	endpoint := layout.Endpoint(env.Getenv)
	if native, err := dial(ctx, endpoint); err == nil {
		native.Close()
		return nil, hinted(say("cli-acp-not-served", "endpoint", endpoint, "target", target), "cli-acp-not-served-hint")
	}
	return spawnEphemeral(ctx, env, layout, passRoot, endpoint, target)
}

// bridge copies in to nc and nc to out until the daemon ends the connection. At the end of in, our direction of
// nc is closed and the daemon's last frames are still delivered; when ctx ends, nc is closed at once.
func bridge(ctx context.Context, nc net.Conn, in io.Reader, out io.Writer) error {
	defer nc.Close()
	down := make(chan error, 1)
	go func() {
		_, err := io.Copy(out, nc)
		down <- err
	}()
	// The stdin copier is not waited for: a read of stdin cannot be interrupted, and it ends with the process.
	go func() {
		_, _ = io.Copy(nc, in)
		if cw, ok := nc.(interface{ CloseWrite() error }); ok {
			_ = cw.CloseWrite()
			return
		}
		_ = nc.Close()
	}()
	select {
	case err := <-down:
		if err != nil && !errors.Is(err, net.ErrClosed) {
			return fmt.Errorf("acp: %w", err)
		}
		return nil
	case <-ctx.Done():
		nc.Close()
		<-down
		return nil
	}
}

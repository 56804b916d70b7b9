package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"os"
	"syscall"
	"time"

	"github.com/zeroclaw-go/zeroclaw/internal/cli/client"
	"github.com/zeroclaw-go/zeroclaw/internal/cli/hint"
	"github.com/zeroclaw-go/zeroclaw/internal/install"
	"github.com/zeroclaw-go/zeroclaw/internal/localsock"
)

// endpointFor resolves the daemon endpoint exactly as the daemon does.
func endpointFor(env Env, configDir string) (string, error) {
	layout, err := install.Resolve(configDir, env.Getenv, env.Home)
	if err != nil {
		return "", err
	}
	return layout.Endpoint(env.Getenv), nil
}

// connectRunning connects to the daemon of the install named by configDir, without starting one: pairing
// needs the running daemon (a new one would make a code nobody else knows), and one started for cron would run
// the jobs that are due.
func connectRunning(ctx context.Context, env Env, configDir string) (*client.Conn, error) {
	endpoint, err := endpointFor(env, configDir)
	if err != nil {
		return nil, err
	}
	return connect(ctx, endpoint, nil)
}

// connectOrSpawn connects to the daemon, starting an ephemeral one if none runs, so that history, memories,
// skills and personality files are readable anyway.
func connectOrSpawn(ctx context.Context, env Env, configDir string) (*client.Conn, error) {
	nc, err := dialOrSpawn(ctx, env, configDir)
	if err != nil {
		return nil, err
	}
	return client.New(ctx, nc, nil, nil)
}

// opener connects to the daemon of the install named by configDir: connectRunning or connectOrSpawn.
type opener func(ctx context.Context, env Env, configDir string) (*client.Conn, error)

// daemonFlags is the flag set of a subcommand that talks to the daemon: its own flags and --config-dir.
type daemonFlags struct {
	*flag.FlagSet
	configDir *string
}

func newDaemonFlags(env Env, name, synopsis string) daemonFlags {
	fs := newFlagSet(env, name, synopsis)
	return daemonFlags{FlagSet: fs, configDir: configDirFlag(fs)}
}

// connect parses args (flags only, see parseFlags) and connects with open; the caller closes the connection.
func (f daemonFlags) connect(ctx context.Context, env Env, args []string, open opener) (*client.Conn, error) {
	if err := parseFlags(f.FlagSet, args); err != nil {
		return nil, err
	}
	return open(ctx, env, *f.configDir)
}

// connectWithID parses args with exactly one positional argument (see parseWithID; what names it) and connects
// with open; the caller closes the connection.
func (f daemonFlags) connectWithID(ctx context.Context, env Env, args []string, what string, open opener) (*client.Conn, string, error) {
	id, err := parseWithID(f.FlagSet, args, what)
	if err != nil {
		return nil, "", err
	}
	c, err := open(ctx, env, *f.configDir)
	return c, id, err
}

// callOnce connects with open, sends one request and closes the connection.
func callOnce(ctx context.Context, env Env, configDir string, open opener, method string, params, out any) error {
	c, err := open(ctx, env, configDir)
	if err != nil {
		return err
	}
	defer c.Close()
	return c.Call(ctx, method, params, out)
}

// errNoDaemon marks a failed connect because nothing serves the endpoint.
var errNoDaemon error = say("cli-no-daemon")

// dial connects to the endpoint; "nothing there" becomes a HintError wrapping errNoDaemon.
func dial(ctx context.Context, endpoint string) (net.Conn, error) {
	dctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	nc, err := localsock.Dial(dctx, endpoint)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) || errors.Is(err, syscall.ENOENT) || errors.Is(err, syscall.ECONNREFUSED) {
			return nil, &hint.Error{Err: say("cli-no-daemon-at", "error", errNoDaemon, "endpoint", endpoint), Hint: "zeroclaw daemon"}
		}
		return nil, fmt.Errorf("connect %s: %w", endpoint, err)
	}
	return nc, nil
}

// connect dials the endpoint and starts a client on it (see client.New).
func connect(ctx context.Context, endpoint string, onInbound client.Inbound) (*client.Conn, error) {
	nc, err := dial(ctx, endpoint)
	if err != nil {
		return nil, err
	}
	return client.New(ctx, nc, nil, onInbound)
}

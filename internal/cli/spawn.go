package cli

import (
	"context"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"time"

	"github.com/zeroclaw-go/zeroclaw/internal/cli/hint"
	"github.com/zeroclaw-go/zeroclaw/internal/install"
)

// spawnWait bounds how long we wait for a freshly spawned ephemeral daemon to accept connections.
const spawnWait = 10 * time.Second

// dialOrSpawn connects to the daemon of the install named by configDir. When nothing serves the endpoint it
// starts `zeroclaw daemon --ephemeral` as a detached child (which exits by itself about a second after its last
// client leaves) and returns the first connection it accepts. The returned connection counts as that daemon's
// first client, so the caller must keep using it rather than dialing again.
func dialOrSpawn(ctx context.Context, env Env, configDir string) (net.Conn, error) {
	layout, err := install.Resolve(configDir, env.Getenv, env.Home)
	if err != nil {
		return nil, err
	}
	endpoint := layout.Endpoint(env.Getenv)
	nc, err := dial(ctx, endpoint)
	if err == nil || !errors.Is(err, errNoDaemon) {
		return nc, err
	}
	return spawnEphemeral(ctx, env, layout, configDir != "", endpoint, endpoint)
}

// spawnEphemeral starts the ephemeral daemon on endpoint and polls target (endpoint, or another endpoint the
// daemon serves, such as its ACP socket) until it accepts, the child exits, ctx ends or spawnWait passes.
func spawnEphemeral(ctx context.Context, env Env, layout install.Layout, passRoot bool, endpoint, target string) (net.Conn, error) {
	// A daemon that holds the install lock without serving is starting or stopping (an ephemeral one whose last
	// client just left): a second one would only fail on the lock. Wait for it to serve, or to be gone.
	if nc, err := waitForLockHolder(ctx, layout, target); nc != nil || err != nil {
		return nc, err
	}
	exe, err := os.Executable()
	if err != nil {
		return nil, say("cli-spawn-failed", "error", err)
	}
	args := []string{"daemon", "--ephemeral"}
	if passRoot {
		args = append(args, "--config-dir", layout.Root)
	}
	// Not CommandContext: the daemon must outlive this command, and our ctx ends with it.
	cmd := exec.Command(exe, args...)
	cmd.Env = append(slices.Clip(env.Environ), install.EnvSocket+"="+endpoint)
	logPath, logFile := openSpawnLog(layout)
	if logFile != nil {
		cmd.Stderr = logFile // nil Stdin/Stdout/Stderr are /dev/null
	}
	detach(cmd)
	err = cmd.Start()
	if logFile != nil {
		logFile.Close() // the child has its own descriptor
	}
	if err != nil {
		return nil, say("cli-spawn-failed-exe", "program", exe, "error", err)
	}
	// The waiter reaps the child when it exits; it ends with the daemon (or with this process).
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()

	try := func(err error) *hint.Error { return hinted(err, "cli-spawn-hint") }
	if logPath != "" {
		try = func(err error) *hint.Error { return hinted(err, "cli-spawn-log-hint", "path", logPath) }
	}
	deadline := time.NewTimer(spawnWait)
	defer deadline.Stop()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		nc, err := dial(ctx, target)
		if err == nil {
			return nc, nil
		}
		if !errors.Is(err, errNoDaemon) {
			return nil, err
		}
		select {
		case <-ctx.Done():
			return nil, say("cli-spawn-wait-cancelled", "error", ctx.Err())
		case werr := <-exited:
			// Another client may have started a daemon at the same time and won the endpoint: use it.
			if nc, err := dial(ctx, target); err == nil {
				return nc, nil
			}
			if werr == nil {
				werr = errors.New("exit status 0")
			}
			return nil, try(say("cli-spawn-exited", "target", target, "error", werr))
		case <-deadline.C:
			return nil, try(say("cli-spawn-timeout", "target", target, "wait", spawnWait))
		case <-tick.C:
		}
	}
}

// openSpawnLog opens <data_dir>/daemon-ephemeral.log for appending, creating the directories 0700. On any
// failure the daemon's stderr goes to the null device instead and the path is "".
func openSpawnLog(layout install.Layout) (string, *os.File) {
	dir := layout.DataDir // not state/: a legacy install migrates its state/ into data/state on first start
	if err := layout.Ensure(); err != nil {
		return "", nil
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", nil
	}
	p := filepath.Join(dir, "daemon-ephemeral.log")
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return "", nil
	}
	return p, f
}

// waitForLockHolder returns nil, nil once nobody holds the install lock, a connection to target if the holder
// starts serving it, or an error if neither happens within spawnWait.
func waitForLockHolder(ctx context.Context, layout install.Layout, target string) (net.Conn, error) {
	deadline := time.Now().Add(spawnWait)
	for {
		lock, err := install.LockInstall(layout)
		if err == nil {
			lock.Release()
			return nil, nil
		}
		var le *install.LockedError
		if !errors.As(err, &le) {
			return nil, nil // not ours to judge: the spawned daemon reports it
		}
		if nc, err := dial(ctx, target); err == nil {
			return nc, nil
		}
		if time.Now().After(deadline) {
			return nil, hinted(say("cli-spawn-lock-held", "pid", le.PID, "lock", layout.InstallLockPath(), "target", target), "cli-spawn-lock-held-hint")
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
}

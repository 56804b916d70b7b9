package tools

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"time"
)

// defaultPath is given to commands whose Environ has no PATH.
const defaultPath = "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

// drainGrace bounds how long output is still collected after the process group was killed; only a process
// that left the group (setsid) can hold the pipe open past it.
const drainGrace = 2 * time.Second

func runShell(ctx context.Context, env Env, call Call) Result {
	var a shellArgs
	if err := decodeArgs(call.Arguments, &a); err != nil {
		return errorf("shell: %v", err)
	}
	command, err := required(a.Command, "command")
	if err != nil {
		return errorf("shell: %v", err)
	}
	ws, err := canonicalWorkspace(env.Workspace)
	if err != nil {
		return errorf("shell: %v", err)
	}
	if fi, err := os.Stat(ws); err != nil || !fi.IsDir() {
		return errorf("shell: workspace %s is not a directory", ws)
	}
	if env.Policy.Protected.covers(ws) {
		return errorf("shell: refused: the working directory %s is inside the daemon's install root (config, secrets and data)", ws)
	}

	timeout := env.shellTimeout()
	runCtx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()

	pr, pw, err := os.Pipe()
	if err != nil {
		return errorf("shell: %v", err)
	}
	cmd := exec.Command(shellPath(), "-c", command)
	cmd.Dir = ws
	cmd.Env = commandEnv(env.Environ)
	// Handing the child an *os.File (not an io.Writer) means exec starts no copy goroutine, so Wait returns
	// when sh exits even if a background child still holds the pipe; we then kill the whole group.
	cmd.Stdout, cmd.Stderr = pw, pw
	setProcessGroup(cmd)
	if err := cmd.Start(); err != nil {
		pr.Close()
		pw.Close()
		return errorf("shell: start: %v", err)
	}
	pw.Close()

	out := &capWriter{max: env.outputCap()}
	drained := make(chan struct{})
	go func() {
		defer close(drained)
		_, _ = io.Copy(out, pr)
	}()

	waitErr := make(chan error, 1)
	// No orphans: once sh exits, whatever it left running in its group is killed with it.
	go func() { waitErr <- waitAndKillGroup(cmd) }()
	var werr error
	stopped := false // killed because of the timeout or cancellation, not exited on its own
	select {
	case werr = <-waitErr:
	case <-runCtx.Done():
		killProcessGroup(cmd)
		werr = <-waitErr
		stopped = true
	}
	grace := time.NewTimer(drainGrace)
	select {
	case <-drained:
	case <-grace.C:
	}
	grace.Stop()
	pr.Close()
	<-drained

	var b strings.Builder
	b.WriteString(strings.ToValidUTF8(out.buf.String(), "\uFFFD"))
	if out.dropped > 0 {
		fmt.Fprintf(&b, "\n[output truncated: %d bytes omitted]", out.dropped)
	}
	if b.Len() > 0 && !strings.HasSuffix(b.String(), "\n") {
		b.WriteByte('\n')
	}
	switch {
	case stopped && ctx.Err() == nil:
		fmt.Fprintf(&b, "[timed out after %s; the command and its child processes were killed]", timeout)
		return Result{Output: b.String(), IsError: true}
	case stopped:
		b.WriteString("[cancelled; the command and its child processes were killed]")
		return Result{Output: b.String(), IsError: true}
	}
	code := 0
	var exitErr *exec.ExitError
	switch {
	case errors.As(werr, &exitErr):
		code = exitErr.ExitCode()
	case werr != nil:
		fmt.Fprintf(&b, "[error: %v]", werr)
		return Result{Output: b.String(), IsError: true}
	}
	if code < 0 {
		fmt.Fprintf(&b, "[killed: %v]", werr)
		return Result{Output: b.String(), IsError: true}
	}
	fmt.Fprintf(&b, "[exit code: %d]", code)
	return Result{Output: b.String(), IsError: code != 0}
}

// shellPath is /bin/sh when present, so the interpreter does not depend on the daemon's PATH.
func shellPath() string {
	if _, err := os.Stat("/bin/sh"); err == nil {
		return "/bin/sh"
	}
	return "sh"
}

// commandEnv is exactly environ plus a default PATH when it has none. Never nil: a nil Env would make exec
// inherit the daemon's environment.
func commandEnv(environ []string) []string {
	out := make([]string, 0, len(environ)+1)
	hasPath := false
	for _, kv := range environ {
		if strings.HasPrefix(kv, "PATH=") {
			hasPath = true
		}
		out = append(out, kv)
	}
	if !hasPath {
		out = append(out, defaultPath)
	}
	return out
}

// capWriter keeps the first max bytes and counts the rest, so a chatty command never blocks on its pipe.
type capWriter struct {
	max     int
	buf     bytes.Buffer
	dropped int64
}

func (w *capWriter) Write(p []byte) (int, error) {
	room := w.max - w.buf.Len()
	if room >= len(p) {
		w.buf.Write(p)
		return len(p), nil
	}
	if room > 0 {
		w.buf.Write(p[:room])
	}
	w.dropped += int64(len(p) - max(room, 0))
	return len(p), nil
}

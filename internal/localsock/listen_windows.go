//go:build windows

package localsock

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"time"

	"github.com/Microsoft/go-winio"
	"golang.org/x/sys/windows"
)

// Listener serves the named pipe it took ownership of with Listen. It implements net.Listener.
type Listener struct {
	endpoint string
	pl       net.Listener

	mu     sync.Mutex // guards closed
	closed bool
}

// Listen creates the named pipe endpoint, readable and writable only by the creating user and SYSTEM. The pipe
// is created as the first instance, so a name already served by another daemon yields *InUseError (with the
// server's pid when it can be asked) rather than a second server.
func Listen(endpoint string) (*Listener, error) {
	sddl, err := pipeSDDL()
	if err != nil {
		return nil, err
	}
	pl, err := winio.ListenPipe(endpoint, &winio.PipeConfig{SecurityDescriptor: sddl})
	if err != nil {
		if pid, live := probePipe(endpoint); live {
			return nil, &InUseError{Endpoint: endpoint, PID: pid}
		}
		if errors.Is(err, windows.ERROR_ACCESS_DENIED) || errors.Is(err, windows.ERROR_ALREADY_EXISTS) ||
			errors.Is(err, windows.ERROR_PIPE_BUSY) {
			return nil, &InUseError{Endpoint: endpoint}
		}
		return nil, fmt.Errorf("install: listen %s: %w", endpoint, err)
	}
	return &Listener{endpoint: endpoint, pl: pl}, nil
}

// pipeSDDL grants full access to SYSTEM and the current user, nobody else, and blocks inheritance.
func pipeSDDL() (string, error) {
	tu, err := windows.GetCurrentProcessToken().GetTokenUser()
	if err != nil {
		return "", fmt.Errorf("install: current user: %w", err)
	}
	return fmt.Sprintf("D:P(A;;GA;;;SY)(A;;GA;;;%s)", tu.User.Sid.String()), nil
}

// probePipe reports whether something serves endpoint and, if it can tell, the server's pid.
func probePipe(endpoint string) (pid int, live bool) {
	timeout := time.Second
	c, err := winio.DialPipe(endpoint, &timeout)
	if err != nil {
		return 0, false
	}
	defer c.Close()
	if f, ok := c.(interface{ Fd() uintptr }); ok {
		var p uint32
		if windows.GetNamedPipeServerProcessId(windows.Handle(f.Fd()), &p) == nil {
			return int(p), true
		}
	}
	return 0, true
}

// Accept waits for the next client. After Close it returns an error matching net.ErrClosed.
func (l *Listener) Accept() (net.Conn, error) { return l.pl.Accept() }

// Addr is the pipe's address.
func (l *Listener) Addr() net.Addr { return l.pl.Addr() }

// Endpoint is the pipe name this listener owns.
func (l *Listener) Endpoint() string { return l.endpoint }

// Close stops accepting; the pipe name disappears with its last handle. Close is idempotent: calls after the
// first return nil.
func (l *Listener) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return nil
	}
	l.closed = true
	if err := l.pl.Close(); !isClosedErr(err) { // StopAccepting may have closed it already
		return err
	}
	return nil
}

// Dial connects to the daemon's named pipe. When no daemon serves it the error matches ErrNotRunning as well as
// the underlying cause.
func Dial(ctx context.Context, endpoint string) (net.Conn, error) {
	c, err := winio.DialPipeContext(ctx, endpoint)
	if err != nil {
		if errors.Is(err, windows.ERROR_FILE_NOT_FOUND) || errors.Is(err, windows.ERROR_PATH_NOT_FOUND) {
			return nil, fmt.Errorf("install: dial %s: %w: %w", endpoint, ErrNotRunning, err)
		}
		return nil, fmt.Errorf("install: dial %s: %w", endpoint, err)
	}
	return c, nil
}

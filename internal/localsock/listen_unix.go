//go:build unix

package localsock

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"github.com/zeroclaw-go/zeroclaw/internal/install"
)

// probeTimeout bounds the connect that tells a live server from a stale socket. A refused connect on a Unix
// socket returns at once; the timeout only matters for a live server with a full backlog.
const probeTimeout = 2 * time.Second

// Listener serves the local endpoint it took ownership of with Listen. It implements net.Listener; Accept
// returns *net.UnixConn values, which Peer understands.
type Listener struct {
	endpoint string
	ul       *net.UnixListener
	id       fileID // the socket we bound

	mu     sync.Mutex // guards lock and closed
	lock   *install.Lock
	closed bool
}

// Listen takes ownership of the Unix socket endpoint as protocol.md §1.1 prescribes: it creates the parent
// directory and makes it 0700, takes the flock on <endpoint>.lock (held: *InUseError with the holder's pid),
// refuses a path that answers a connect (*InUseError) or is not a socket (ErrNotSocket, never removed), removes
// a stale socket only if it is still the same file, binds, and makes the socket 0600.
//
// A parent directory with the sticky bit (a shared /tmp, reachable through ZEROCLAW_SOCKET) is not chmodded:
// it belongs to everyone, and the socket's own 0600 still applies.
func Listen(endpoint string) (*Listener, error) {
	if err := secureDir(filepath.Dir(endpoint)); err != nil {
		return nil, err
	}
	lock, err := install.AcquireLock(endpoint + ".lock")
	if err != nil {
		if le, ok := errors.AsType[*install.LockedError](err); ok {
			return nil, &InUseError{Endpoint: endpoint, PID: le.PID}
		}
		return nil, err
	}
	l, err := bind(endpoint, lock.PrevPID())
	if err != nil {
		lock.Release()
		return nil, err
	}
	l.lock = lock
	return l, nil
}

func secureDir(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("install: create socket dir %s: %w", dir, err)
	}
	fi, err := os.Stat(dir)
	if err != nil {
		return fmt.Errorf("install: socket dir %s: %w", dir, err)
	}
	if fi.Mode()&fs.ModeSticky != 0 || fi.Mode().Perm() == 0o700 {
		return nil
	}
	if err := os.Chmod(dir, 0o700); err != nil {
		return fmt.Errorf("install: chmod socket dir %s: %w", dir, err)
	}
	return nil
}

// bind clears the way at endpoint and binds it. The caller holds <endpoint>.lock.
func bind(endpoint string, prevPID int) (*Listener, error) {
	if err := clearStale(endpoint, prevPID); err != nil {
		return nil, err
	}
	ul, err := net.ListenUnix("unix", &net.UnixAddr{Name: endpoint, Net: "unix"})
	if err != nil {
		return nil, fmt.Errorf("install: bind %s: %w", endpoint, err)
	}
	// We unlink ourselves in Close, and only if the path is still our socket.
	ul.SetUnlinkOnClose(false)
	id, ok := statID(endpoint)
	if !ok {
		ul.Close()
		return nil, fmt.Errorf("install: bind %s: socket vanished right after bind", endpoint)
	}
	if err := os.Chmod(endpoint, 0o600); err != nil {
		ul.Close()
		if now, ok := statID(endpoint); ok && now == id {
			os.Remove(endpoint)
		}
		return nil, fmt.Errorf("install: chmod socket %s: %w", endpoint, err)
	}
	return &Listener{endpoint: endpoint, ul: ul, id: id}, nil
}

// clearStale handles a file already at endpoint: live server => *InUseError, not a socket => ErrNotSocket,
// refused connect => removed if it is still the same file.
func clearStale(endpoint string, prevPID int) error {
	before, err := os.Lstat(endpoint)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("install: stat %s: %w", endpoint, err)
	}
	if before.Mode().Type() != fs.ModeSocket {
		return fmt.Errorf("%w: %s", ErrNotSocket, endpoint)
	}
	conn, err := net.DialTimeout("unix", endpoint, probeTimeout)
	switch {
	case err == nil:
		conn.Close()
		return &InUseError{Endpoint: endpoint, PID: prevPID}
	case errors.Is(err, syscall.ENOENT):
		return nil // removed under us; nothing to clear
	case errors.Is(err, syscall.EAGAIN) || errors.Is(err, os.ErrDeadlineExceeded):
		return &InUseError{Endpoint: endpoint, PID: prevPID} // live, just busy
	case !errors.Is(err, syscall.ECONNREFUSED):
		return fmt.Errorf("install: probe %s: %w", endpoint, err)
	}
	after, err := os.Lstat(endpoint)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("install: stat %s: %w", endpoint, err)
	}
	if fileIDOf(after) != fileIDOf(before) {
		return fmt.Errorf("install: %s changed while checking whether it was stale; not removing it", endpoint)
	}
	if err := os.Remove(endpoint); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("install: remove stale socket %s: %w", endpoint, err)
	}
	return nil
}

// Accept waits for the next connection. After Close it returns an error matching net.ErrClosed.
func (l *Listener) Accept() (net.Conn, error) { return l.ul.Accept() }

// Addr is the socket's address.
func (l *Listener) Addr() net.Addr { return l.ul.Addr() }

// Endpoint is the socket path this listener owns.
func (l *Listener) Endpoint() string { return l.endpoint }

// Close stops accepting, unlinks the socket only if the path still names the socket we bound (a replacement is
// never removed), and releases <endpoint>.lock. Connections already accepted stay open. Close is idempotent:
// calls after the first return nil.
func (l *Listener) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return nil
	}
	l.closed = true
	var errs []error
	if err := l.ul.Close(); !isClosedErr(err) { // StopAccepting may have closed it already
		errs = append(errs, err)
	}
	if id, ok := statID(l.endpoint); ok && id == l.id {
		if err := os.Remove(l.endpoint); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, fmt.Errorf("install: remove socket %s: %w", l.endpoint, err))
		}
	}
	errs = append(errs, l.lock.Release())
	return errors.Join(errs...)
}

// Dial connects to the daemon's Unix socket. When nothing serves it (no socket file, or a stale one) the error
// matches ErrNotRunning as well as the underlying cause.
func Dial(ctx context.Context, endpoint string) (net.Conn, error) {
	var d net.Dialer
	c, err := d.DialContext(ctx, "unix", endpoint)
	if err != nil {
		if errors.Is(err, syscall.ENOENT) || errors.Is(err, syscall.ECONNREFUSED) {
			return nil, fmt.Errorf("install: dial %s: %w: %w", endpoint, ErrNotRunning, err)
		}
		return nil, fmt.Errorf("install: dial %s: %w", endpoint, err)
	}
	return c, nil
}

// fileID identifies a file across renames: device and inode.
type fileID struct{ dev, ino uint64 }

func fileIDOf(fi fs.FileInfo) fileID {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return fileID{}
	}
	return fileID{dev: uint64(st.Dev), ino: uint64(st.Ino)}
}

func statID(path string) (fileID, bool) {
	fi, err := os.Lstat(path)
	if err != nil || fi.Mode().Type() != fs.ModeSocket {
		return fileID{}, false
	}
	return fileIDOf(fi), true
}

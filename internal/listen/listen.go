// Package listen serves the connections of one or more listeners with one policy: the connection limit and its
// refusal frame, the ephemeral exit after the last client, and the shutdown order. A listener (the socket, an ACP
// socket, the gateway) gets all of it by being served here.
package listen

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"sync"
	"syscall"
	"time"

	"github.com/zeroclaw-go/zeroclaw/internal/api"
	"github.com/zeroclaw-go/zeroclaw/internal/jsonrpc"
)

// Defaults of Options (protocol.md §2.1 and §9).
const (
	DefaultDrainTimeout   = 5500 * time.Millisecond
	DefaultEphemeralGrace = time.Second
)

// A refused connection is half-closed and its input discarded for at most refusalLinger and refusalLingerBytes
// before it closes: closing a socket with unread input (the client's initialize, typically) resets the
// connection, and the client would see a reset instead of the refusal frame followed by EOF.
const (
	refusalLinger      = time.Second
	refusalLingerBytes = 1 << 20
)

// acceptRetry is the pause after an accept error that is not the listener closing (e.g. too many open files).
const acceptRetry = 50 * time.Millisecond

// Handler serves one admitted connection and returns when it has ended. ctx is cancelled when the Server shuts
// down, after Options.Drain: the handler then ends the connection gracefully (flushing what it queued). The
// connection is closed after the handler returns, if the handler did not close it.
type Handler func(ctx context.Context, nc net.Conn)

// Options configure a Server. Zero values take the defaults; every func may be nil.
type Options struct {
	// MaxConns returns the connection limit in force, read at each accept; <= 0 means no limit. A connection past
	// it receives the -32004 connection_limit frame (id null), then EOF.
	MaxConns func() int
	// Ephemeral: once the last connection has closed (and at least one was ever admitted), Idle is called after
	// EphemeralGrace unless a connection arrives meanwhile.
	Ephemeral      bool
	EphemeralGrace time.Duration
	Idle           func() // must not block
	// DrainTimeout bounds Drain and the connections' own ending, together.
	DrainTimeout time.Duration
	// Drain is called by Shutdown once accepting has stopped and before the connections' ctx is cancelled, with
	// a ctx that ends at the drain deadline: the place to cancel running work and wait for in-flight requests.
	Drain func(ctx context.Context)
	// Abort is called by Shutdown when connections are still open at the drain deadline: it ends them outright.
	Abort func()
	// Settled is called once the connections have come and gone in a burst (at least SettleChurn admitted or
	// closed since the last call) and then none has come or gone for SettleQuiet; calls are at least
	// SettleEvery apart and never concurrent. The daemon returns the memory the burst left behind to the OS
	// there. It runs on its own goroutine, which Shutdown waits for.
	Settled     func()
	SettleChurn int           // default 64
	SettleQuiet time.Duration // default 250 ms
	SettleEvery time.Duration // default 10 s
	// SpareFD keeps one fd in reserve (an open /dev/null): when accept fails because the process is out of fds,
	// the spare is given up for that one connection, so the owner's client still gets in while something else
	// (a flood of gateway clients) holds every other fd. It is taken again as soon as an fd is free.
	SpareFD bool
	Logger  *slog.Logger
}

// Defaults of the Settled options: a burst is far more connections than an interactive user opens, the quiet
// period is short enough that memory is back soon after the burst, and the spacing bounds the cost (a GC and
// returning free pages) under a steady stream of bursts.
const (
	DefaultSettleChurn = 64
	DefaultSettleQuiet = 250 * time.Millisecond
	DefaultSettleEvery = 10 * time.Second
)

// Server admits, counts and drains the connections of the listeners it serves. They share the connection limit,
// the ephemeral count and the shutdown. All methods are safe for concurrent use.
type Server struct {
	opts Options
	log  *slog.Logger

	accepting sync.WaitGroup // accept loops
	conns     sync.WaitGroup // connection and refusal goroutines

	mu      sync.Mutex // guards the fields below
	lns     []net.Listener
	cancels []context.CancelFunc // of each Serve's connection context
	shut    bool                 // Shutdown has begun: Serve admits nothing more
	clients int                  // admitted connections still open
	seen    bool                 // a connection was ever admitted
	idle    *time.Timer          // the armed ephemeral exit, or nil
	churn   int                  // connections admitted or closed since the last Settled
	settle  *time.Timer          // the armed Settled call, or nil
	settled time.Time            // when Settled was last called
	settles sync.WaitGroup       // a running Settled call

	spareMu sync.Mutex // guards spare; taken alone
	spare   *os.File   // the reserved fd (SpareFD), nil while given up
}

// New returns a Server; it serves nothing until Serve.
func New(opts Options) *Server {
	if opts.DrainTimeout <= 0 {
		opts.DrainTimeout = DefaultDrainTimeout
	}
	if opts.EphemeralGrace <= 0 {
		opts.EphemeralGrace = DefaultEphemeralGrace
	}
	if opts.SettleChurn <= 0 {
		opts.SettleChurn = DefaultSettleChurn
	}
	if opts.SettleQuiet <= 0 {
		opts.SettleQuiet = DefaultSettleQuiet
	}
	if opts.SettleEvery <= 0 {
		opts.SettleEvery = DefaultSettleEvery
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	s := &Server{opts: opts, log: opts.Logger}
	s.keepSpare()
	return s
}

// keepSpare takes the reserved fd when SpareFD is on and it is not held (a failure leaves it for the next try).
func (s *Server) keepSpare() {
	if !s.opts.SpareFD {
		return
	}
	s.spareMu.Lock()
	defer s.spareMu.Unlock()
	if s.spare == nil {
		s.spare, _ = os.Open(os.DevNull)
	}
}

// acceptWithSpare is ln.Accept after giving the reserved fd back to the process, for an accept that failed with
// err for want of fds; ok is false when there is no spare to give (or err is something else).
func (s *Server) acceptWithSpare(ln net.Listener, err error) (net.Conn, bool) {
	if !errors.Is(err, syscall.EMFILE) && !errors.Is(err, syscall.ENFILE) {
		return nil, false
	}
	s.spareMu.Lock()
	spare := s.spare
	s.spare = nil
	s.spareMu.Unlock()
	if spare == nil {
		return nil, false
	}
	_ = spare.Close()
	nc, err := ln.Accept()
	if err != nil {
		return nil, false
	}
	s.log.Warn("out of file descriptors: a connection was accepted on the reserved one", "component", "listen")
	return nc, true
}

// SpareMissing reports whether the reserved fd is given up (SpareFD on, and a connection took it or the last
// attempt to take it again failed): another part of the process that accepts connections should hand an fd
// back with RefillSpare rather than keep it.
func (s *Server) SpareMissing() bool {
	if !s.opts.SpareFD {
		return false
	}
	s.spareMu.Lock()
	defer s.spareMu.Unlock()
	return s.spare == nil
}

// RefillSpare takes the reserved fd again if it is given up; it reports whether the reserve is held after the
// call. Called right after closing a connection, it gets that connection's fd (the lowest free one) before a
// flood's next accept can.
func (s *Server) RefillSpare() bool {
	if !s.opts.SpareFD {
		return false
	}
	s.keepSpare()
	return !s.SpareMissing()
}

// closeSpare gives the reserved fd back at shutdown.
func (s *Server) closeSpare() {
	s.spareMu.Lock()
	defer s.spareMu.Unlock()
	if s.spare != nil {
		_ = s.spare.Close()
		s.spare = nil
	}
}

// Serve accepts connections on ln and serves each admitted one with h on its own goroutine until Shutdown stops
// accepting; it then returns nil without waiting for the connections (Shutdown does). The connections' ctx
// carries ctx's values but ends only with Shutdown. Serve may be called for several listeners.
func (s *Server) Serve(ctx context.Context, ln net.Listener, h Handler) error {
	connCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	s.mu.Lock()
	if s.shut {
		s.mu.Unlock()
		cancel()
		stopAccepting(ln)
		return nil
	}
	s.lns = append(s.lns, ln)
	s.cancels = append(s.cancels, cancel)
	s.accepting.Add(1)
	s.mu.Unlock()
	defer s.accepting.Done()
	for {
		s.keepSpare()
		nc, err := ln.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return nil
			}
			var ok bool
			if nc, ok = s.acceptWithSpare(ln, err); !ok {
				s.log.Warn("accept failed", "component", "listen", "err", err)
				time.Sleep(acceptRetry)
				continue
			}
		}
		limit := 0
		if s.opts.MaxConns != nil {
			limit = s.opts.MaxConns()
		}
		s.conns.Add(1)
		if !s.admit(limit) {
			go func() {
				defer s.conns.Done()
				refuse(nc, limit)
			}()
			continue
		}
		go func() {
			defer s.conns.Done()
			defer s.release()
			defer nc.Close()
			h(connCtx, nc)
		}()
	}
}

// Shutdown ends the service in this order: stop accepting on every listener (a listener with a StopAccepting
// method, such as localsock.Listener, keeps its endpoint until its owner closes it; any other is closed) and wait
// for the accept loops; call Drain; cancel the connections' ctx, so each handler flushes and closes; wait for
// them until the drain deadline (DrainTimeout after Shutdown began); past it call Abort and wait for them. It
// returns once every connection has ended. ctx passes its values on; the deadline is DrainTimeout's, whether or
// not ctx is already cancelled (it usually is: it is what asked for the shutdown). Calls after the first only wait.
func (s *Server) Shutdown(ctx context.Context) {
	s.mu.Lock()
	first := !s.shut
	s.shut = true
	lns, cancels := s.lns, s.cancels
	if s.idle != nil {
		s.idle.Stop()
		s.idle = nil
	}
	if s.settle != nil && s.settle.Stop() {
		s.settles.Done() // the call it would have made
	}
	s.settle = nil
	s.mu.Unlock()
	defer s.settles.Wait()
	defer s.closeSpare()
	if !first {
		s.accepting.Wait()
		s.conns.Wait()
		return
	}
	for _, ln := range lns {
		stopAccepting(ln)
	}
	s.accepting.Wait()
	drainCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.opts.DrainTimeout)
	defer cancel()
	if s.opts.Drain != nil {
		s.opts.Drain(drainCtx)
	}
	for _, c := range cancels {
		c()
	}
	if !waitDone(drainCtx, &s.conns) {
		s.log.Warn("drain deadline passed: closing connections", "component", "listen")
		if s.opts.Abort != nil {
			s.opts.Abort()
		}
		s.conns.Wait()
	}
}

// Serve serves ln alone until ctx ends, then shuts down as Server.Shutdown does and returns.
func Serve(ctx context.Context, ln net.Listener, h Handler, opts Options) error {
	s := New(opts)
	errc := make(chan error, 1)
	go func() { errc <- s.Serve(ctx, ln, h) }()
	<-ctx.Done()
	s.Shutdown(ctx)
	return <-errc
}

// Clients returns the number of admitted connections still open.
func (s *Server) Clients() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.clients
}

// admit counts a new connection, refusing it past the limit. A connection cancels a pending ephemeral exit.
func (s *Server) admit(limit int) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if limit > 0 && s.clients >= limit {
		return false
	}
	s.clients++
	s.seen = true
	if s.idle != nil {
		s.idle.Stop()
		s.idle = nil
	}
	s.churned()
	return true
}

// churned counts a connection come or gone and, past SettleChurn, (re)arms the Settled call SettleQuiet from now
// (or from SettleEvery after the last call, if later). The caller holds mu.
func (s *Server) churned() {
	s.churn++
	if s.opts.Settled == nil || s.churn < s.opts.SettleChurn || s.shut {
		return
	}
	wait := s.opts.SettleQuiet
	if next := time.Until(s.settled.Add(s.opts.SettleEvery)); next > wait {
		wait = next
	}
	if s.settle != nil {
		if s.settle.Stop() {
			s.settle.Reset(wait)
		}
		return // a call is already running and has reset churn: this one counts towards the next
	}
	s.settles.Add(1)
	var t *time.Timer
	t = time.AfterFunc(wait, func() {
		defer s.settles.Done()
		s.mu.Lock()
		if s.settle != t {
			s.mu.Unlock()
			return
		}
		s.churn = 0
		s.mu.Unlock()
		s.opts.Settled()
		s.mu.Lock()
		s.settle, s.settled = nil, time.Now()
		s.mu.Unlock()
	})
	s.settle = t
}

// release uncounts a closed connection; in ephemeral mode the last one arms the exit timer.
func (s *Server) release() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.clients--
	s.churned()
	if !s.opts.Ephemeral || s.clients != 0 || !s.seen || s.shut {
		return
	}
	var t *time.Timer
	t = time.AfterFunc(s.opts.EphemeralGrace, func() {
		s.mu.Lock()
		// Only the timer still armed may fire: an older one whose callback was already waiting for mu when a
		// client came and went must not cut the new grace period short.
		still := s.clients == 0 && s.idle == t
		if still {
			s.idle = nil
		}
		s.mu.Unlock()
		if still && s.opts.Idle != nil {
			s.opts.Idle()
		}
	})
	s.idle = t
}

// refuse writes the connection-limit frame, then lingers so the peer reads it and EOF rather than a reset.
func refuse(nc net.Conn, limit int) {
	defer nc.Close()
	err := jsonrpc.WriteRefusal(nc, jsonrpc.NewError(api.CodeConnectionLimitReached,
		fmt.Sprintf("Connection limit reached (%d)", limit),
		map[string]any{"reason": "connection_limit", "limit": limit}))
	if err != nil {
		return
	}
	if cw, ok := nc.(interface{ CloseWrite() error }); ok {
		_ = cw.CloseWrite()
	}
	_ = nc.SetReadDeadline(time.Now().Add(refusalLinger))
	_, _ = io.Copy(io.Discard, io.LimitReader(nc, refusalLingerBytes))
}

func stopAccepting(ln net.Listener) {
	if sa, ok := ln.(interface{ StopAccepting() error }); ok {
		_ = sa.StopAccepting()
		return
	}
	_ = ln.Close()
}

// waitDone waits for wg until ctx ends; it reports whether wg finished.
func waitDone(ctx context.Context, wg *sync.WaitGroup) bool {
	done := make(chan struct{})
	go func() {
		wg.Wait()
		close(done)
	}()
	select {
	case <-done:
		return true
	case <-ctx.Done():
		return false
	}
}

package gateway

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"

	"github.com/zeroclaw-go/zeroclaw/internal/config"
)

// RPC over WSS keeps a silent client alive with a ping after wssIdle without a frame, and gives it up when
// the pong has not come wssPongWait later (upstream's rpc/wss.rs heartbeat).
const (
	wssIdle     = 20 * time.Second
	wssPongWait = 10 * time.Second
)

// wssListener is the [wss] TLS listener: the native RPC protocol over WebSocket for remote TUIs. mu guards
// the fields below it.
type wssListener struct {
	mu     sync.Mutex
	cur    *wssBinding
	closed bool
}

// wssBinding is one bound [wss] address. Its certificate is swapped in place when only the files changed.
type wssBinding struct {
	addr     string
	srv      *http.Server
	bound    net.Addr
	cert     atomic.Pointer[tls.Certificate]
	certPath string
	keyPath  string
}

// ApplyWSS makes the [wss] listener match cfg: started when enabled, stopped when
// disabled, rebound when bind or port changed, and its certificate reloaded when cert_path or key_path
// changed. A failed bind or certificate load keeps what runs. Connections already upgraded live on.
func (s *Server) ApplyWSS(cfg *config.Config) error {
	l := &s.wss
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return errors.New("gateway: wss: closed")
	}
	w := cfg.WSS
	if !w.Enabled {
		if l.cur != nil {
			_ = l.cur.srv.Close()
			s.log.Info("wss listener stopped", "addr", l.cur.bound.String())
			l.cur = nil
		}
		return nil
	}
	addr := net.JoinHostPort(w.Bind, strconv.Itoa(w.Port))
	if l.cur != nil && l.cur.addr == addr {
		if l.cur.certPath == w.CertPath && l.cur.keyPath == w.KeyPath {
			return nil
		}
		cert, err := tls.LoadX509KeyPair(w.CertPath, w.KeyPath)
		if err != nil {
			return fmt.Errorf("gateway: wss: load %s and %s: %w", w.CertPath, w.KeyPath, err)
		}
		l.cur.cert.Store(&cert)
		l.cur.certPath, l.cur.keyPath = w.CertPath, w.KeyPath
		s.log.Info("wss certificate reloaded", "addr", l.cur.bound.String())
		return nil
	}
	b, err := s.bindWSS(w, addr)
	if err != nil {
		return err
	}
	if l.cur != nil {
		_ = l.cur.srv.Close()
	}
	l.cur = b
	return nil
}

// bindWSS loads the certificate, listens and serves. wss.mu is held.
func (s *Server) bindWSS(w config.WSSConfig, addr string) (*wssBinding, error) {
	cert, err := tls.LoadX509KeyPair(w.CertPath, w.KeyPath)
	if err != nil {
		return nil, fmt.Errorf("gateway: wss: load %s and %s: %w", w.CertPath, w.KeyPath, err)
	}
	b := &wssBinding{addr: addr, certPath: w.CertPath, keyPath: w.KeyPath}
	b.cert.Store(&cert)
	tlsCfg := &tls.Config{MinVersion: tls.VersionTLS12,
		GetCertificate: func(*tls.ClientHelloInfo) (*tls.Certificate, error) { return b.cert.Load(), nil }}
	ln, err := s.o.WSSListen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("gateway: wss: listen on %s: %w", addr, err)
	}
	b.bound = ln.Addr()
	b.srv = &http.Server{
		Handler:           withSecurityHeaders(s.withGuard(false, s.serve(s.wssUpgrade))),
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       120 * time.Second,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          slog.NewLogLogger(s.log.Handler(), slog.LevelDebug),
	}
	tln := tls.NewListener(s.capped(ln), tlsCfg)
	s.wg.Go(func() {
		if err := b.srv.Serve(tln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			s.log.Warn("wss listener stopped", "err", err)
		}
	})
	s.log.Info("wss listening", "addr", b.bound.String())
	if s.o.WSSReady != nil {
		s.o.WSSReady(b.bound)
	}
	return b, nil
}

// WSSAddr is the bound [wss] address, nil when not listening.
func (s *Server) WSSAddr() net.Addr {
	s.wss.mu.Lock()
	defer s.wss.mu.Unlock()
	if s.wss.cur == nil {
		return nil
	}
	return s.wss.cur.bound
}

// shutdown stops accepting; the upgraded connections end with the gateway's WebSocket tracking.
func (l *wssListener) shutdown(ctx context.Context) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.closed = true
	if l.cur != nil {
		if err := l.cur.srv.Shutdown(ctx); err != nil {
			_ = l.cur.srv.Close()
		}
		l.cur = nil
	}
}

// wssUpgrade serves one RPC-over-WSS client on any path: a paired bearer token in Authorization at the upgrade
// (401 before it otherwise), then the native protocol, one JSON-RPC message per text frame, with the peer label
// wss:<addr> and a remote transport (uploads and path attachments refused, protocol.md §7).
func (s *Server) wssUpgrade(w http.ResponseWriter, r *http.Request) error {
	if _, ok := bearer(r); !ok {
		return fail(http.StatusUnauthorized, unauthorized)
	}
	c, err := s.authenticate(r)
	if err != nil {
		return err
	}
	return s.upgrade(w, r, nil, func(ctx context.Context, conn *websocket.Conn) {
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		f := s.framer(ctx, conn)
		var wg sync.WaitGroup
		defer wg.Wait()
		defer cancel()
		wg.Go(func() { keepAlive(ctx, conn, wssIdle, wssPongWait, f.idleSince) })
		id := c.identity()
		id.Label = "wss:" + r.RemoteAddr
		s.o.Daemon.ServeRPC(ctx, f, id)
	})
}

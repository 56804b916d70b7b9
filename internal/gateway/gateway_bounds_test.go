package gateway_test

import (
	"bufio"
	"crypto/rand"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/zeroclaw-go/zeroclaw/internal/rpctest"
)

// gwHostPort is the gateway's host:port.
func gwHostPort(t *testing.T, g *rpctest.Gateway) string {
	t.Helper()
	return strings.TrimPrefix(g.Base, "http://")
}

// rawDial opens a TCP connection to the gateway, closed at the end of the test.
func rawDial(t *testing.T, g *rpctest.Gateway) net.Conn {
	t.Helper()
	nc, err := net.DialTimeout("tcp", gwHostPort(t, g), 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	return nc
}

// readResponse reads one HTTP response from nc within timeout.
func readResponse(t *testing.T, nc net.Conn, br *bufio.Reader, timeout time.Duration) *http.Response {
	t.Helper()
	_ = nc.SetReadDeadline(time.Now().Add(timeout))
	res, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatalf("no response within %s: %v", timeout, err)
	}
	_, _ = io.Copy(io.Discard, res.Body)
	res.Body.Close()
	return res
}

// closedBy reports whether the peer closed nc (EOF or a reset) within timeout; a timeout is false.
func closedBy(nc net.Conn, br *bufio.Reader, timeout time.Duration) (bool, error) {
	_ = nc.SetReadDeadline(time.Now().Add(timeout))
	_, err := io.Copy(io.Discard, br)
	if err == nil || errors.Is(err, io.EOF) {
		return true, nil
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return false, err
	}
	return true, err // a reset
}

// gateway.max_connections caps the open TCP connections: one past it is answered 503 and closed at accept,
// and a slot freed by a closed connection is served again.
func TestGatewayConnectionCap(t *testing.T) {
	t.Parallel()
	_, g, _ := rpctest.StartGateway(t, rpctest.GatewayConfig+"\n[gateway]\nmax_connections = 4\n")
	held := make([]net.Conn, 4)
	for i := range held {
		held[i] = rawDial(t, g)
		// A started request keeps the connection open on the server (the header timeout is 10 s).
		if _, err := io.WriteString(held[i], "GET /health HTTP/1.1\r\n"); err != nil {
			t.Fatal(err)
		}
	}
	// The connections above are accepted in order; this one is the fifth.
	deadline := time.Now().Add(10 * time.Second)
	for {
		nc := rawDial(t, g)
		br := bufio.NewReader(nc)
		_ = nc.SetReadDeadline(time.Now().Add(5 * time.Second))
		res, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatalf("the connection past the cap got no answer: %v", err)
		}
		body, _ := io.ReadAll(res.Body)
		if res.StatusCode == http.StatusServiceUnavailable {
			if !strings.Contains(string(body), "Too many connections") || !res.Close {
				t.Fatalf("refusal: %v %s", res.Header, body)
			}
			if closed, err := closedBy(nc, br, 5*time.Second); !closed {
				t.Fatalf("the refused connection stays open: %v", err)
			}
			break
		}
		// The server had not yet accepted all four held connections when this one arrived.
		if time.Now().After(deadline) {
			t.Fatalf("a fifth connection is served: %d %s", res.StatusCode, body)
		}
		nc.Close()
		time.Sleep(20 * time.Millisecond)
	}
	held[0].Close()
	waitFor(t, "a freed slot is served again", func() bool {
		nc, err := net.DialTimeout("tcp", gwHostPort(t, g), 5*time.Second)
		if err != nil {
			return false
		}
		defer nc.Close()
		_, _ = io.WriteString(nc, "GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
		_ = nc.SetReadDeadline(time.Now().Add(5 * time.Second))
		res, err := http.ReadResponse(bufio.NewReader(nc), nil)
		return err == nil && res.StatusCode == 200
	})
}

// A body that trickles in slower than body_min_bytes_per_sec is cut with 408 and the connection closed, well
// before the request timeout (60 s here); the handler is not left reading it.
func TestGatewaySlowBodyCut(t *testing.T) {
	t.Parallel()
	_, g, _ := rpctest.StartGateway(t, rpctest.GatewayConfig+"\n[gateway]\nrequest_timeout_secs = 60\nbody_min_bytes_per_sec = 100\n")
	nc := rawDial(t, g)
	if _, err := io.WriteString(nc, "POST /api/pair HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"+
		"Content-Length: 1000\r\n\r\n{"); err != nil {
		t.Fatal(err)
	}
	// A byte a second: under 100 B/s, so past the 5 s grace the body is too slow.
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		for {
			select {
			case <-stop:
				return
			case <-time.After(time.Second):
				if _, err := nc.Write([]byte(" ")); err != nil {
					return
				}
			}
		}
	}()
	br := bufio.NewReader(nc)
	res := readResponse(t, nc, br, 30*time.Second)
	if res.StatusCode != http.StatusRequestTimeout || !res.Close {
		t.Fatalf("slow body: %d %v", res.StatusCode, res.Header)
	}
	if closed, err := closedBy(nc, br, 10*time.Second); !closed {
		t.Fatalf("the connection stays open after the 408: %v", err)
	}
	// /metrics counts the 408 the client saw, not the status the handler wrote after its read failed.
	want := `zeroclaw_gateway_requests_total{code="408",method="POST",route="/api/pair"} 1`
	if m := g.Do("GET", "/metrics", nil).Want(t, 200); !strings.Contains(string(m.Raw), want) {
		t.Errorf("metrics lack %s:\n%s", want, m.Raw)
	}
	// A body at a normal pace is unaffected.
	g.Do("POST", "/api/pair", `{"code":"x"}`).Want(t, 400)
}

// A handler that does not read the body is answered at once, and the connection closed instead of drained:
// net/http would otherwise read up to 256 KiB of it, at the client's pace, before answering.
func TestGatewayUnreadBodyNotDrained(t *testing.T) {
	t.Parallel()
	_, g, _ := rpctest.StartGateway(t, rpctest.GatewayConfig)
	nc := rawDial(t, g)
	// A declared 64 KiB body that never comes.
	if _, err := io.WriteString(nc, "POST /pair HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Pairing-Code: 000000\r\n"+
		"Content-Length: 65536\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(nc)
	res := readResponse(t, nc, br, 10*time.Second)
	if res.StatusCode != http.StatusForbidden || !res.Close {
		t.Fatalf("unread body: %d %v", res.StatusCode, res.Header)
	}
	if closed, err := closedBy(nc, br, 10*time.Second); !closed {
		t.Fatalf("the connection stays open: %v", err)
	}
}

// A WebSocket peer that starts a message and stalls is closed once rpc.frame_timeout_ms has passed, on /acp
// and /ws/chat alike; an idle socket between messages is not.
func TestGatewayWebSocketFrameDeadline(t *testing.T) {
	t.Parallel()
	_, g, code := rpctest.StartGateway(t, rpctest.GatewayConfig+"\n[gateway]\nwebsocket_ping_interval_secs = 0\n\n[rpc]\nframe_timeout_ms = 500\n")
	tok := g.Do("POST", "/pair", nil, "X-Pairing-Code: "+code).Want(t, 200).Body["token"].(string)
	for _, route := range []struct{ path, proto string }{
		{"/acp", "zeroclaw.acp.v1"}, {"/ws/chat?agent=default", "zeroclaw.v1"},
	} {
		t.Run(route.path, func(t *testing.T) {
			nc, br := wsUpgrade(t, g, route.path, route.proto, tok)
			// Idle for longer than the frame timeout: still open.
			if closed, _ := closedBy(nc, br, 1500*time.Millisecond); closed {
				t.Fatal("an idle socket was closed")
			}
			// A text frame declaring 1000 bytes, 10 of them sent.
			var hdr [8]byte
			hdr[0], hdr[1] = 0x81, 0x80|126
			binary.BigEndian.PutUint16(hdr[2:], 1000)
			_, _ = rand.Read(hdr[4:8])
			if _, err := nc.Write(append(hdr[:], make([]byte, 10)...)); err != nil {
				t.Fatal(err)
			}
			if closed, err := closedBy(nc, br, 15*time.Second); !closed {
				t.Fatalf("a stalled message keeps the socket open: %v", err)
			}
		})
	}
}

// wsUpgrade upgrades a raw connection to a WebSocket on path with the subprotocol and token, and returns it
// with its reader.
func wsUpgrade(t *testing.T, g *rpctest.Gateway, path, proto, token string) (net.Conn, *bufio.Reader) {
	t.Helper()
	nc := rawDial(t, g)
	var key [16]byte
	_, _ = rand.Read(key[:])
	req := fmt.Sprintf("GET %s HTTP/1.1\r\nHost: %s\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"+
		"Sec-WebSocket-Key: %s\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Protocol: %s\r\n"+
		"Authorization: Bearer %s\r\n\r\n", path, gwHostPort(t, g), base64.StdEncoding.EncodeToString(key[:]), proto, token)
	if _, err := io.WriteString(nc, req); err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(nc)
	_ = nc.SetReadDeadline(time.Now().Add(10 * time.Second))
	res, err := http.ReadResponse(br, nil)
	if err != nil || res.StatusCode != http.StatusSwitchingProtocols {
		t.Fatalf("upgrade of %s: %v %v", path, res, err)
	}
	return nc, br
}

package rpctest

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// The gateway's WebSockets have golden transcripts of their own, in the native format: /acp (JSON-RPC, ACP's
// camelCase names, an unknown method as the sentinel) and /ws/chat (typed JSON frames, no requests, so the end
// is checked by silence).
var (
	acpDialect = Dialect{
		Sentinel:   `{"jsonrpc":"2.0","method":"__transcript_end__","id":"__transcript_end__"}`,
		Identities: map[string]string{"sessionId": "session_id", "toolCallId": "tool_call_id"},
	}
	wsChatDialect = Dialect{Identities: map[string]string{"request_id": "request_id"}}
)

// wsTranscriptConfig is the daemon every WebSocket transcript runs against: the echo model, a supervised agent
// (so a shell call asks for approval) and no pings, which would come at any time.
const wsTranscriptConfig = `schema_version = 3

[providers.models.echo.default]
model = "echo"

[agents.default]
model_provider = "echo.default"
risk_profile = "supervised"

[risk_profiles.supervised]
level = "supervised"

[gateway]
websocket_ping_interval_secs = 0
`

func TestACPTranscripts(t *testing.T) {
	t.Parallel()
	runWSTranscripts(t, "testdata/transcripts/acp", "/acp?agent=default", "zeroclaw.acp.v1", acpDialect)
}

func TestWSChatTranscripts(t *testing.T) {
	t.Parallel()
	runWSTranscripts(t, "testdata/transcripts/ws_chat", "/ws/chat?agent=default", "zeroclaw.v1", wsChatDialect)
}

// runWSTranscripts plays every dir/*.txt on a fresh daemon's gateway WebSocket at path.
func runWSTranscripts(t *testing.T, dir, path, subprotocol string, dia Dialect) {
	files, err := filepath.Glob(filepath.Join(dir, "*.txt"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no transcripts in %s (%v)", dir, err)
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			t.Parallel()
			src, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			d, token := startPairedGateway(t)
			w := dialWire(t, d.GatewayURL(t), path, subprotocol, token)
			out, err := playOn(w, dia, d.ConfigDir, string(src), handshake{}, *update)
			if err != nil {
				t.Fatalf("%s:%v", f, err)
			}
			if *update {
				if err := os.WriteFile(f, out, 0o644); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
}

// startPairedGateway starts a daemon on wsTranscriptConfig and pairs one device (the owner's equal) with the
// code its banner printed; it returns the device's token.
func startPairedGateway(t *testing.T) (*Daemon, string) {
	t.Helper()
	d, g, code := StartGateway(t, wsTranscriptConfig)
	auth := PairOnce(t, g, code)
	return d, strings.TrimPrefix(auth, "Authorization: Bearer ")
}

// wsWire is a transcript's Wire on a WebSocket: one message per frame. A reader goroutine feeds frames, so a
// Recv that times out leaves the connection open (a cancelled Read would close it).
type wsWire struct {
	c      *websocket.Conn
	frames chan string
	err    error // set before frames closes
}

func dialWire(t *testing.T, base, path, subprotocol, token string) *wsWire {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	c, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(base, "http")+path, &websocket.DialOptions{
		HTTPHeader: http.Header{"Authorization": {"Bearer " + token}}, Subprotocols: []string{subprotocol}})
	if err != nil {
		t.Fatalf("dial %s: %v", path, err)
	}
	w := &wsWire{c: c, frames: make(chan string, 64)}
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer close(w.frames)
		for {
			_, b, err := c.Read(context.Background())
			if err != nil {
				w.err = err
				return
			}
			w.frames <- string(b)
		}
	}()
	t.Cleanup(func() {
		_ = c.CloseNow()
		<-done
	})
	return w
}

func (w *wsWire) Write(b []byte) error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return w.c.Write(ctx, websocket.MessageText, bytes.TrimSuffix(b, []byte("\n")))
}

func (w *wsWire) Recv(timeout time.Duration) (string, error) {
	select {
	case f, ok := <-w.frames:
		if !ok {
			if websocket.CloseStatus(w.err) != -1 || errors.Is(w.err, io.EOF) {
				return "", io.EOF
			}
			return "", w.err
		}
		return f, nil
	case <-time.After(timeout):
		return "", errors.New("timeout waiting for a frame")
	}
}

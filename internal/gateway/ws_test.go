package gateway

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/zeroclaw-go/zeroclaw/internal/jsonrpc"
)

// framerPair serves one upgraded connection as a wsFramer and returns it with the client's end.
func framerPair(t *testing.T) (*wsFramer, *websocket.Conn) {
	t.Helper()
	got := make(chan *wsFramer, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := websocket.Accept(w, r, nil)
		if err != nil {
			return
		}
		f := newWSFramer(context.WithoutCancel(r.Context()), c, 5*time.Second)
		got <- f
		<-r.Context().Done()
	}))
	t.Cleanup(srv.Close)
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	cli, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(srv.URL, "http"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cli.CloseNow() })
	return <-got, cli
}

// One message is one frame: read whole with every byte charged to Grow first, written without the NDJSON
// terminator; a message one byte over the limit is ErrFrameTooLarge; a clean close is io.EOF.
func TestWSFramer(t *testing.T) {
	f, cli := framerPair(t)
	ctx := t.Context()
	msg := `{"jsonrpc":"2.0","id":1,"method":"status"}`
	if err := cli.Write(ctx, websocket.MessageText, []byte(msg)); err != nil {
		t.Fatal(err)
	}
	grown := 0
	got, err := f.ReadFrame(&jsonrpc.FrameLimits{Max: len(msg), Grow: func(n int) error { grown += n; return nil }})
	if err != nil || string(got) != msg || grown != len(msg) {
		t.Fatalf("ReadFrame = %q, %v (grown %d)", got, err, grown)
	}
	if n, err := f.WriteFrame([]byte(msg + "\n")); err != nil || n != len(msg)+1 {
		t.Fatalf("WriteFrame = %d, %v", n, err)
	}
	if _, data, err := cli.Read(ctx); err != nil || string(data) != msg {
		t.Fatalf("the client read %q, %v", data, err)
	}
	if err := cli.Write(ctx, websocket.MessageText, []byte(msg+" ")); err != nil {
		t.Fatal(err)
	}
	if _, err := f.ReadFrame(&jsonrpc.FrameLimits{Max: len(msg)}); !errors.Is(err, jsonrpc.ErrFrameTooLarge) {
		t.Fatalf("a message one byte over the limit: %v", err)
	}

	f2, cli2 := framerPair(t)
	go func() { _ = cli2.Close(websocket.StatusNormalClosure, "") }()
	if _, err := f2.ReadFrame(&jsonrpc.FrameLimits{Max: 64}); !errors.Is(err, io.EOF) {
		t.Fatalf("a clean close: %v, want io.EOF", err)
	}
}

// wsToken takes the token from Authorization, then a bearer.<token> subprotocol, then ?token=.
func TestWSToken(t *testing.T) {
	r := httptest.NewRequest("GET", "/ws/chat?token=q", nil)
	if wsToken(r) != "q" {
		t.Fatalf("query token: %q", wsToken(r))
	}
	r.Header.Set("Sec-WebSocket-Protocol", "zeroclaw.v1, bearer.p")
	if wsToken(r) != "p" {
		t.Fatalf("subprotocol token: %q", wsToken(r))
	}
	r.Header.Set("Authorization", "Bearer h")
	if wsToken(r) != "h" {
		t.Fatalf("header token: %q", wsToken(r))
	}
}

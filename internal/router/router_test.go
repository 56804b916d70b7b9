package router_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/zeroclaw-go/zeroclaw/internal/jsonrpc"
	"github.com/zeroclaw-go/zeroclaw/internal/router"
	"github.com/zeroclaw-go/zeroclaw/internal/rpctest/ndjson"
)

// shopPeer is a protocol's own per-connection state, as acp's or the gateway's would be.
type shopPeer struct {
	user  string // bound at accept
	calls int    // add calls on this connection; add runs inline, so only the connection's reader touches it
}

var errNoSuchThing = errors.New("shop: no such thing")

type addParams struct {
	First  int `json:"first_value"`
	Second int `json:"second_value"`
}

type lookupParams struct {
	Name string `json:"name"`
}

// shopTable is a tiny protocol built on the router: two methods, a grant check and an error mapper of its own.
func shopTable(log *slog.Logger) *router.Table[*shopPeer] {
	t := router.New(router.Options[*shopPeer]{
		Authorize: func(_ context.Context, p *shopPeer, grant string) error {
			if grant == "stock:read" && p.user != "clerk" {
				return jsonrpc.NewError(-32012, "Forbidden: missing grant stock:read", nil)
			}
			return nil
		},
		MapError: func(err error) *jsonrpc.Error {
			if errors.Is(err, errNoSuchThing) {
				return jsonrpc.NewError(-32044, err.Error(), map[string]string{"kind": "thing"})
			}
			return nil
		},
		Logger: log,
	})
	add := router.Handle("", func(_ context.Context, p *shopPeer, in *addParams) (map[string]any, error) {
		p.calls++
		return map[string]any{"sum": in.First + in.Second, "calls": p.calls, "user": p.user}, nil
	})
	add.Inline = true
	t.Register("add", add)
	t.Register("lookup", router.Handle("stock:read", func(_ context.Context, _ *shopPeer, in *lookupParams) (any, error) {
		if in.Name == "boom" {
			return nil, errors.New("disk on fire at /secret/path")
		}
		return nil, fmt.Errorf("lookup %s: %w", in.Name, errNoSuchThing)
	}))
	return t
}

// serve listens on a real Unix socket and serves each accepted connection with a jsonrpc.Conn over the table,
// binding the next user to the connection's peer.
func serve(t *testing.T, tbl *router.Table[*shopPeer], users ...string) string {
	dir, err := os.MkdirTemp("", "rt") // short: socket paths are limited to about 100 bytes
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	path := filepath.Join(dir, "s.sock")
	ln, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	var wg sync.WaitGroup
	t.Cleanup(func() {
		cancel()
		ln.Close()
		wg.Wait()
	})
	wg.Go(func() {
		for _, user := range users {
			nc, err := ln.Accept()
			if err != nil {
				return
			}
			p := &shopPeer{user: user}
			conn := jsonrpc.NewConn(jsonrpc.NewStream(nc), jsonrpc.HandlerFunc(func(ctx context.Context, _ *jsonrpc.Conn, req *jsonrpc.Request) (any, error) {
				return tbl.Dispatch(ctx, p, req)
			}), jsonrpc.Options{Inline: tbl.Inline, Concurrent: tbl.Concurrent})
			wg.Go(func() { _ = conn.Serve(ctx) })
		}
	})
	return path
}

func result(t *testing.T, f ndjson.Frame) map[string]any {
	t.Helper()
	var r map[string]any
	if f.Error != nil || json.Unmarshal(f.Result, &r) != nil {
		t.Fatalf("expected a result, got %s", f.Raw)
	}
	return r
}

func wantError(t *testing.T, f ndjson.Frame, code int, msg string) {
	t.Helper()
	if f.Error == nil || f.Error.Code != code || f.Error.Message != msg {
		t.Fatalf("expected error %d %q, got %s", code, msg, f.Raw)
	}
}

// A protocol other than rpc builds its own table, peer type and error mapper on the router and serves it over a
// real jsonrpc.Conn: typed params with camelCase aliases, per-connection peer state, the grant hook, the mapper
// for its domain errors, -32603 (logged) for the rest, -32601 for unknown methods.
func TestTableServedOverConn(t *testing.T) {
	var logs bytes.Buffer
	tbl := shopTable(slog.New(slog.NewTextHandler(&logs, nil)))
	if got := tbl.Names(); !slices.Equal(got, []string{"add", "lookup"}) {
		t.Fatalf("names %v", got)
	}
	if !tbl.Inline("add") || tbl.Inline("lookup") || !tbl.Inline("unknown") || tbl.Concurrent("add") {
		t.Fatal("scheduling flags not as registered")
	}
	path := serve(t, tbl, "visitor", "clerk")

	visitor := ndjson.Dial(t, path)
	visitor.Send(`{"jsonrpc":"2.0","id":1,"method":"add","params":{"firstValue":2,"second_value":3}}`)
	if r := result(t, visitor.Frame()); r["sum"] != 5.0 || r["calls"] != 1.0 || r["user"] != "visitor" {
		t.Fatalf("add: %v", r)
	}
	visitor.Send(`{"jsonrpc":"2.0","id":2,"method":"add","params":{"first_value":1,"firstValue":2}}`)
	wantError(t, visitor.Frame(), -32602, `invalid params: conflicting values for first_value (given as "first_value" and "firstValue")`)
	visitor.Send(`{"jsonrpc":"2.0","id":3,"method":"add","params":{"second_value":"x"}}`)
	wantError(t, visitor.Frame(), -32602, "invalid params: second_value must be an integer")
	visitor.Send(`{"jsonrpc":"2.0","id":4,"method":"lookup","params":{"name":"x"}}`)
	wantError(t, visitor.Frame(), -32012, "Forbidden: missing grant stock:read")
	visitor.Send(`{"jsonrpc":"2.0","method":"nope"}`) // an unknown notification gets no reply...
	visitor.Send(`{"jsonrpc":"2.0","id":5,"method":"nope"}`)
	if f := visitor.Frame(); string(f.ID) != "5" { // ...so the next frame answers id 5
		t.Fatalf("expected the reply to id 5 next, got %s", f.Raw)
	} else {
		wantError(t, f, -32601, "Unknown method: nope")
	}

	clerk := ndjson.Dial(t, path)
	clerk.Send(`{"jsonrpc":"2.0","id":1,"method":"add","params":{"first_value":10}}`)
	if r := result(t, clerk.Frame()); r["sum"] != 10.0 || r["calls"] != 1.0 || r["user"] != "clerk" {
		t.Fatalf("add on the second connection: %v (the peer state is per connection)", r)
	}
	clerk.Send(`{"jsonrpc":"2.0","id":2,"method":"lookup","params":{"name":"x"}}`)
	f := clerk.Frame()
	wantError(t, f, -32044, "lookup x: shop: no such thing")
	if string(f.Error.Data) != `{"kind":"thing"}` {
		t.Fatalf("mapped error data %s", f.Error.Data)
	}
	if logs.Len() != 0 {
		t.Fatalf("a mapped error was logged: %s", logs.String())
	}
	clerk.Send(`{"jsonrpc":"2.0","id":"b","method":"lookup","params":{"name":"boom"}}`)
	wantError(t, clerk.Frame(), -32603, "Internal error")
	if l := logs.String(); !strings.Contains(l, "request failed") || !strings.Contains(l, "method=lookup") ||
		!strings.Contains(l, `rpc_id="\"b\""`) || !strings.Contains(l, "disk on fire") {
		t.Fatalf("the unmapped error was not logged once with method and id: %q", l)
	}
}

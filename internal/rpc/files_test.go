package rpc_test

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/zeroclaw-go/zeroclaw/internal/auth"
	"github.com/zeroclaw-go/zeroclaw/internal/config"
	"github.com/zeroclaw-go/zeroclaw/internal/rpc"
	"github.com/zeroclaw-go/zeroclaw/internal/rpctest/ndjson"
	"github.com/zeroclaw-go/zeroclaw/internal/session"
	"github.com/zeroclaw-go/zeroclaw/internal/store"
)

// serve runs the real server on a Unix socket in a temp dir, presenting every connection as info (the way a WSS
// listener or another local user would reach it), and returns a dialer of initialized clients.
func serve(t *testing.T, cfg *config.Config, info rpc.PeerInfo) func() *ndjson.Client {
	t.Helper()
	dir, err := os.MkdirTemp("", "zcrpc")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	chat, err := store.OpenChat(t.Context(), filepath.Join(dir, "sessions.db"))
	if err != nil {
		t.Fatal(err)
	}
	sessions := session.NewManager(session.Options{Chat: chat, Config: func() *config.Config { return cfg }, InstallRoot: dir})
	srv := rpc.New(rpc.Options{Config: func() *config.Config { return cfg }, Sessions: sessions, Info: rpc.Info{UID: os.Getuid()}})
	ln, err := net.Listen("unix", filepath.Join(dir, "s.sock"))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			nc, err := ln.Accept()
			if err != nil {
				return
			}
			wg.Go(func() { _ = srv.ServeConn(ctx, nc, info, rpc.Limits{MaxFrameBytes: 8 << 20}) })
		}
	})
	t.Cleanup(func() {
		ln.Close()
		cancel()
		srv.CloseAll()
		wg.Wait()
		sessions.Shutdown(context.Background())
		chat.Close()
	})
	return func() *ndjson.Client {
		c := ndjson.Dial(t, filepath.Join(dir, "s.sock"))
		c.Initialize()
		return c
	}
}

func errorOf(t *testing.T, m map[string]any) (int, string) {
	t.Helper()
	e, ok := m["error"].(map[string]any)
	if !ok {
		t.Fatalf("expected an error, got %v", m)
	}
	code, _ := e["code"].(float64)
	msg, _ := e["message"].(string)
	return int(code), msg
}

// The three upload methods answer -32012 on a remote (WSS) transport; file/attach with data_b64 still works
// there, but a path entry is refused.
func TestUploadsLocalOnly(t *testing.T) {
	cfg := config.Default()
	dial := serve(t, cfg, rpc.PeerInfo{UID: os.Getuid(), Label: "wss:test", Transport: auth.TransportWSS})
	c := dial()
	sid := c.Call("session/new", map[string]any{}, 1)["result"].(map[string]any)["session_id"]
	for i, m := range []string{"file/upload/begin", "file/upload/chunk", "file/upload/commit"} {
		code, msg := errorOf(t, c.Call(m, map[string]any{"session_id": sid, "size_bytes": 1, "upload_id": "x", "offset": 0}, 10+i))
		if code != -32012 || !strings.Contains(msg, "local") {
			t.Fatalf("%s over WSS: %d %q", m, code, msg)
		}
	}
	r := c.Call("file/attach", map[string]any{"session_id": sid, "files": []map[string]any{{"data_b64": "eA==", "filename": "x.txt"}}}, 20)
	if r["result"] == nil {
		t.Fatalf("data_b64 attach over WSS: %v", r)
	}
	src := filepath.Join(t.TempDir(), "secret.txt")
	if err := os.WriteFile(src, []byte("s"), 0o600); err != nil {
		t.Fatal(err)
	}
	if code, _ := errorOf(t, c.Call("file/attach", map[string]any{"session_id": sid, "files": []map[string]any{{"path": src}}}, 21)); code != -32012 {
		t.Fatalf("path attach over WSS: %d", code)
	}
}

// A local peer of another uid, mapped to a non-admin user, may not make the daemon read files by path: it would
// read them with the daemon's rights. It sends data_b64 instead.
func TestPathAttachRefusedForOtherUsers(t *testing.T) {
	cfg := config.Default()
	other := os.Getuid() + 1
	cfg.Users = map[string]config.UserConfig{"bob": {UID: other, PermissionProfiles: []string{"p"}}}
	cfg.PermissionProfiles = map[string]config.PermissionProfile{"p": {Grants: []string{"sessions:create", "files:create"}}}
	dial := serve(t, cfg, rpc.PeerInfo{UID: other, Label: "unix:other", Transport: auth.TransportUnix})
	c := dial()
	sid := c.Call("session/new", map[string]any{}, 1)["result"].(map[string]any)["session_id"]
	src := filepath.Join(t.TempDir(), "daemon-owned.txt")
	if err := os.WriteFile(src, []byte("private"), 0o600); err != nil {
		t.Fatal(err)
	}
	code, msg := errorOf(t, c.Call("file/attach", map[string]any{"session_id": sid, "files": []map[string]any{{"path": src}}}, 2))
	if code != -32012 || !strings.Contains(msg, "data_b64") {
		t.Fatalf("path attach by another uid: %d %q", code, msg)
	}
	if r := c.Call("file/attach", map[string]any{"session_id": sid, "files": []map[string]any{{"data_b64": "eA=="}}}, 3); r["result"] == nil {
		t.Fatalf("data_b64 attach by another uid: %v", r)
	}
	// The upload methods are local: bob may use them.
	if r := c.Call("file/upload/begin", map[string]any{"session_id": sid, "size_bytes": 1}, 4); r["result"] == nil {
		t.Fatalf("begin by a local user: %v", r)
	}
}

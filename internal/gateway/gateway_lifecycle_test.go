package gateway_test

import (
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/zeroclaw-go/zeroclaw/internal/rpctest"
)

// POST /admin/shutdown from loopback stops the daemon in its usual order (Run returns), after answering; the
// gateway's goroutines are gone with it, keep-alive connections included.
func TestGatewayAdminShutdown(t *testing.T) {
	t.Parallel() // the leak check counts this daemon's goroutines only
	d, g, code := rpctest.StartGateway(t, rpctest.GatewayConfig)
	auth := rpctest.PairOnce(t, g, code)
	g.Do("GET", "/api/status", nil, auth).Want(t, 200) // leaves a keep-alive connection open
	r := g.Do("POST", "/admin/shutdown", nil, auth).Want(t, 200)
	if r.Body["success"] != true {
		t.Fatalf("shutdown body %s", r.Raw)
	}
	select {
	case err := <-d.Done():
		if err != nil {
			t.Fatalf("Run returned %v", err)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("the daemon did not stop after POST /admin/shutdown")
	}
	g.Client.Transport.(*http.Transport).CloseIdleConnections()
	if _, err := g.Client.Get(g.Base + "/health"); err == nil {
		t.Fatal("the gateway still answers after shutdown")
	}
	d.CheckNoGoroutines(t)
}

// A bind on a non-loopback host without allow_public_bind is served, with a warning in the log.
func TestGatewayPublicBindWarning(t *testing.T) {
	t.Parallel()
	var logs rpctest.SyncBuf
	log := slog.New(slog.NewTextHandler(&logs, nil))
	_, g, _ := rpctest.StartGateway(t, rpctest.GatewayConfig+"\n[gateway]\nhost = \"0.0.0.0\"\n", rpctest.WithLogger(log))
	g.Do("GET", "/health", nil).Want(t, 200)
	if !strings.Contains(logs.String(), "gateway bound to a public address") {
		t.Fatalf("no public-bind warning in:\n%s", logs.String())
	}
	var quiet rpctest.SyncBuf
	_, g2, _ := rpctest.StartGateway(t, rpctest.GatewayConfig+"\n[gateway]\nhost = \"0.0.0.0\"\nallow_public_bind = true\n",
		rpctest.WithLogger(slog.New(slog.NewTextHandler(&quiet, nil))))
	g2.Do("GET", "/health", nil).Want(t, 200)
	if strings.Contains(quiet.String(), "public address") {
		t.Fatalf("warned despite allow_public_bind:\n%s", quiet.String())
	}
	// The code is never logged.
	if strings.Contains(logs.String(), "pairing code") {
		t.Fatalf("the log mentions the pairing code:\n%s", logs.String())
	}
}

// Rotating a device's token revokes it and hands out a new code, which pairs again.
func TestGatewayRotate(t *testing.T) {
	t.Parallel()
	_, g, code := rpctest.StartGateway(t, rpctest.GatewayConfig)
	auth := rpctest.PairOnce(t, g, code)
	g.Do("POST", "/api/devices/me/capabilities", map[string]any{"capabilities": []string{"camera", "gps"}}, auth).Want(t, 200)
	dev := g.Do("GET", "/api/devices", nil, auth).Want(t, 200).Body["devices"].([]any)[0].(map[string]any)
	if caps := dev["capabilities"].([]any); len(caps) != 2 || caps[0] != "camera" {
		t.Fatalf("capabilities %v", dev["capabilities"])
	}
	id := dev["id"].(string)
	r := g.Do("POST", "/api/devices/"+id+"/token/rotate", nil, auth).Want(t, 200)
	next, _ := r.Body["pairing_code"].(string)
	if r.Body["device_id"] != id || len(next) != 6 {
		t.Fatalf("rotate body %s", r.Raw)
	}
	g.Do("GET", "/api/status", nil, auth).Want(t, 401)
	auth2 := rpctest.PairOnce(t, g, next)
	g.Do("GET", "/api/status", nil, auth2).Want(t, 200)
}

// POST /admin/paircode/new?rotate=all revokes every device and hands out a fresh code.
func TestGatewayRotateAll(t *testing.T) {
	t.Parallel()
	_, g, code := rpctest.StartGateway(t, rpctest.GatewayConfig)
	auth := rpctest.PairOnce(t, g, code)
	pending := g.Do("GET", "/admin/paircode", nil, auth).Want(t, 200).Body["pairing_code"].(string)
	auth2 := rpctest.PairOnce(t, g, pending)
	g.Do("GET", "/api/status", nil, auth).Want(t, 200)
	r := g.Do("POST", "/admin/paircode/new?rotate=all", nil, auth).Want(t, 200)
	next, _ := r.Body["pairing_code"].(string)
	if len(next) != 6 {
		t.Fatalf("rotate=all body %s", r.Raw)
	}
	g.Do("GET", "/api/status", nil, auth).Want(t, 401)
	g.Do("GET", "/api/status", nil, auth2).Want(t, 401)
	if h := g.Do("GET", "/health", nil).Want(t, 200); h.Body["paired"] != false {
		t.Fatalf("health after rotate=all: %s", h.Raw)
	}
	auth3 := rpctest.PairOnce(t, g, next)
	if n := g.Do("GET", "/api/devices", nil, auth3).Want(t, 200).Body["count"]; n != float64(1) {
		t.Fatalf("devices after re-pairing: %v", n)
	}
}

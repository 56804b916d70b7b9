package rpctest

import (
	"log/slog"
	"net/http"
	"runtime"
	"strings"
	"testing"
	"time"
)

// POST /admin/shutdown from loopback stops the daemon in its usual order (Run returns), after answering; the
// gateway's goroutines are gone with it, keep-alive connections included.
func TestGatewayAdminShutdown(t *testing.T) {
	before := runtime.NumGoroutine()
	d, g, code := startGateway(t, gwBaseConfig)
	auth := pairOnce(t, g, code)
	g.do("GET", "/api/status", nil, auth).want(t, 200) // leaves a keep-alive connection open
	r := g.do("POST", "/admin/shutdown", nil, auth).want(t, 200)
	if r.body["success"] != true {
		t.Fatalf("shutdown body %s", r.raw)
	}
	select {
	case err := <-d.Done():
		if err != nil {
			t.Fatalf("Run returned %v", err)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("the daemon did not stop after POST /admin/shutdown")
	}
	g.c.Transport.(*http.Transport).CloseIdleConnections()
	if _, err := g.c.Get(g.base + "/health"); err == nil {
		t.Fatal("the gateway still answers after shutdown")
	}
	deadline := time.Now().Add(10 * time.Second)
	for runtime.NumGoroutine() > before {
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<20)
			n := runtime.Stack(buf, true)
			t.Fatalf("%d goroutines after the daemon stopped, %d before:\n%s", runtime.NumGoroutine(), before, buf[:n])
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// A bind on a non-loopback host without allow_public_bind is served, with a warning in the log.
func TestGatewayPublicBindWarning(t *testing.T) {
	var logs lockedBuffer
	log := slog.New(slog.NewTextHandler(&logs, nil))
	_, g, _ := startGateway(t, gwBaseConfig+"\n[gateway]\nhost = \"0.0.0.0\"\n", WithLogger(log))
	g.do("GET", "/health", nil).want(t, 200)
	if !strings.Contains(logs.String(), "gateway bound to a public address") {
		t.Fatalf("no public-bind warning in:\n%s", logs.String())
	}
	var quiet lockedBuffer
	_, g2, _ := startGateway(t, gwBaseConfig+"\n[gateway]\nhost = \"0.0.0.0\"\nallow_public_bind = true\n",
		WithLogger(slog.New(slog.NewTextHandler(&quiet, nil))))
	g2.do("GET", "/health", nil).want(t, 200)
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
	_, g, code := startGateway(t, gwBaseConfig)
	auth := pairOnce(t, g, code)
	g.do("POST", "/api/devices/me/capabilities", map[string]any{"capabilities": []string{"camera", "gps"}}, auth).want(t, 200)
	dev := g.do("GET", "/api/devices", nil, auth).want(t, 200).body["devices"].([]any)[0].(map[string]any)
	if caps := dev["capabilities"].([]any); len(caps) != 2 || caps[0] != "camera" {
		t.Fatalf("capabilities %v", dev["capabilities"])
	}
	id := dev["id"].(string)
	r := g.do("POST", "/api/devices/"+id+"/token/rotate", nil, auth).want(t, 200)
	next, _ := r.body["pairing_code"].(string)
	if r.body["device_id"] != id || len(next) != 6 {
		t.Fatalf("rotate body %s", r.raw)
	}
	g.do("GET", "/api/status", nil, auth).want(t, 401)
	auth2 := pairOnce(t, g, next)
	g.do("GET", "/api/status", nil, auth2).want(t, 200)
}

// POST /admin/paircode/new?rotate=all revokes every device and hands out a fresh code.
func TestGatewayRotateAll(t *testing.T) {
	_, g, code := startGateway(t, gwBaseConfig)
	auth := pairOnce(t, g, code)
	pending := g.do("GET", "/admin/paircode", nil, auth).want(t, 200).body["pairing_code"].(string)
	auth2 := pairOnce(t, g, pending)
	g.do("GET", "/api/status", nil, auth).want(t, 200)
	r := g.do("POST", "/admin/paircode/new?rotate=all", nil, auth).want(t, 200)
	next, _ := r.body["pairing_code"].(string)
	if len(next) != 6 {
		t.Fatalf("rotate=all body %s", r.raw)
	}
	g.do("GET", "/api/status", nil, auth).want(t, 401)
	g.do("GET", "/api/status", nil, auth2).want(t, 401)
	if h := g.do("GET", "/health", nil).want(t, 200); h.body["paired"] != false {
		t.Fatalf("health after rotate=all: %s", h.raw)
	}
	auth3 := pairOnce(t, g, next)
	if n := g.do("GET", "/api/devices", nil, auth3).want(t, 200).body["count"]; n != float64(1) {
		t.Fatalf("devices after re-pairing: %v", n)
	}
}

package gateway

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/zeroclaw-go/zeroclaw/internal/clock/clocktest"
)

// A handler past the timeout is answered 408 and its context is cancelled; one within it passes through with
// its own status and headers.
func TestTimeout408(t *testing.T) {
	cancelled := make(chan struct{})
	slow := withTimeout(func(*http.Request) time.Duration { return 20 * time.Millisecond }, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		<-r.Context().Done()
		close(cancelled)
		w.WriteHeader(200) // too late: dropped
	}))
	rec := httptest.NewRecorder()
	slow.ServeHTTP(rec, httptest.NewRequest("GET", "/", nil))
	if rec.Code != http.StatusRequestTimeout {
		t.Fatalf("slow handler: %d %s", rec.Code, rec.Body)
	}
	<-cancelled

	fast := withTimeout(func(*http.Request) time.Duration { return time.Minute }, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Mine", "1")
		w.WriteHeader(http.StatusTeapot)
		_, _ = w.Write([]byte("body"))
	}))
	rec = httptest.NewRecorder()
	fast.ServeHTTP(rec, httptest.NewRequest("GET", "/", nil))
	if rec.Code != http.StatusTeapot || rec.Header().Get("X-Mine") != "1" || rec.Body.String() != "body" {
		t.Fatalf("fast handler: %d %v %q", rec.Code, rec.Header(), rec.Body)
	}
}

// The sliding window admits limit requests per minute and frees them as they age; the auth limiter locks a key
// out after AuthMaxAttempts failures for AuthLockout.
func TestWindows(t *testing.T) {
	clk := clocktest.New(time.Unix(1_000_000, 0))
	w := newWindow(clk)
	for i := range 3 {
		if !w.allow("a", 3, 100) {
			t.Fatalf("request %d refused", i)
		}
		clk.Advance(10 * time.Second)
	}
	if w.allow("a", 3, 100) || !w.allow("b", 3, 100) {
		t.Fatal("the 4th request in a minute was admitted, or another key was limited")
	}
	clk.Advance(31 * time.Second) // the first request is now 61 s old
	if !w.allow("a", 3, 100) {
		t.Fatal("an aged-out request still counts")
	}

	for range AuthMaxAttempts - 1 {
		w.fail("x", 100)
	}
	if w.locked("x") != 0 {
		t.Fatal("locked before the limit")
	}
	w.fail("x", 100)
	if d := w.locked("x"); d != AuthLockout {
		t.Fatalf("lockout %v", d)
	}
	clk.Advance(AuthLockout)
	if w.locked("x") != 0 {
		t.Fatal("still locked after the lockout")
	}
	// Bounded keys: the least recently seen client is forgotten.
	b := newWindow(clk)
	b.allow("k1", 1, 2)
	clk.Advance(time.Second)
	b.allow("k2", 1, 2)
	b.allow("k3", 1, 2)
	if len(b.hit) != 2 || b.hit["k1"] != nil {
		t.Fatalf("keys kept: %v", b.hit)
	}
}

// Idempotency keys are remembered for the TTL.
func TestIdempotency(t *testing.T) {
	clk := clocktest.New(time.Unix(1_000_000, 0))
	d := newIdempotency(clk)
	if !d.first("k", time.Minute, 10) || d.first("k", time.Minute, 10) {
		t.Fatal("a repeated key was not caught")
	}
	clk.Advance(time.Minute)
	if !d.first("k", time.Minute, 10) {
		t.Fatal("an expired key still counts")
	}
}

// A handler that ignores its context and has written nothing is still answered 408 at the deadline, without
// the headers it had set, while it runs on; what it writes afterwards is dropped.
func TestTimeout408WhileTheHandlerRunsOn(t *testing.T) {
	release, returned := make(chan struct{}), make(chan error, 1)
	h := withTimeout(func(*http.Request) time.Duration { return 20 * time.Millisecond }, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Mine", "1")
		<-release // ignores r.Context()
		_, err := w.Write([]byte("late"))
		returned <- err
	}))
	srv := httptest.NewServer(h)
	defer srv.Close()
	res, err := http.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	if res.StatusCode != http.StatusRequestTimeout || res.Header.Get("X-Mine") != "" {
		t.Fatalf("got %d %v while the handler runs, want 408 without its headers", res.StatusCode, res.Header)
	}
	close(release)
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if err := <-returned; !errors.Is(err, http.ErrHandlerTimeout) {
		t.Errorf("the late write returned %v, want http.ErrHandlerTimeout", err)
	}
	if string(body) != `{"error":"request timed out"}`+"\n" {
		t.Errorf("body %q", body)
	}
}

// The security header names are canonical, so withSecurityHeaders can store them without canonicalizing.
func TestSecurityHeaderNamesAreCanonical(t *testing.T) {
	for _, kv := range securityHeaders {
		if http.CanonicalHeaderKey(kv[0]) != kv[0] {
			t.Errorf("%q is not canonical", kv[0])
		}
	}
	if http.CanonicalHeaderKey("Strict-Transport-Security") != "Strict-Transport-Security" {
		t.Error("HSTS name not canonical")
	}
}

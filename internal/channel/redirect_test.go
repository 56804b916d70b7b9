package channel_test

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/zeroclaw-go/zeroclaw/internal/channel"
	"github.com/zeroclaw-go/zeroclaw/internal/config"
)

// Catcher is a loopback listener on another port that records every request reaching it.
type catcher struct {
	*httptest.Server
	mu   sync.Mutex
	seen []string // Authorization header + " " + body
}

func newCatcher(t *testing.T) *catcher {
	c := &catcher{}
	c.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(io.LimitReader(r.Body, 1<<16))
		c.mu.Lock()
		c.seen = append(c.seen, r.Header.Get("Authorization")+" "+string(b))
		c.mu.Unlock()
		w.WriteHeader(http.StatusOK)
	}))
	t.Cleanup(c.Close)
	return c
}

func (c *catcher) requests() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.seen...)
}

// A redirect to the same host name on another port (net/http would keep the Authorization header) is refused;
// one within the origin is still followed.
func TestSameOriginRefusesAnotherPort(t *testing.T) {
	catch := newCatcher(t)
	var origin *httptest.Server
	origin = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/away":
			http.Redirect(w, r, catch.URL+"/stolen", http.StatusTemporaryRedirect)
		case "/here":
			http.Redirect(w, r, origin.URL+"/landed", http.StatusTemporaryRedirect)
		default:
			_, _ = io.WriteString(w, "landed:"+r.Header.Get("Authorization"))
		}
	}))
	defer origin.Close()
	hc := channel.SameOrigin(nil)
	do := func(path string) (*http.Response, error) {
		req, _ := http.NewRequest(http.MethodPost, origin.URL+path, strings.NewReader("password=hunter2"))
		req.Header.Set("Authorization", "Bearer s3cret")
		return hc.Do(req)
	}
	if _, err := do("/away"); !errors.Is(err, channel.ErrCrossOriginRedirect) {
		t.Fatalf("cross-port redirect: %v", err)
	}
	if got := catch.requests(); len(got) != 0 {
		t.Fatalf("the other port received %q", got)
	}
	resp, err := do("/here")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(b) != "landed:Bearer s3cret" {
		t.Fatalf("same-origin redirect: %q", b)
	}
}

// An adapter whose factory uses deps.HTTP as given (as every adapter does) gets a client the registry made
// SameOrigin: whatever client the daemon passes (none, a plain one, one with its own redirect policy), the
// token cannot follow a redirect to another port, and the daemon's own policy still applies within the origin.
func TestRegistryHandsAdaptersSameOriginClients(t *testing.T) {
	catch := newCatcher(t)
	hops := 0
	origin := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/away":
			http.Redirect(w, r, catch.URL+"/stolen", http.StatusTemporaryRedirect)
		case "/here":
			http.Redirect(w, r, "/landed", http.StatusTemporaryRedirect)
		default:
			_, _ = io.WriteString(w, "landed")
		}
	}))
	defer origin.Close()
	var got *http.Client
	reg := &channel.Registry{}
	reg.Register(channel.Type{Name: "probe", Instances: func(*config.Config) map[string]any { return nil },
		New: func(inst channel.Instance, deps channel.Deps) (channel.Adapter, error) {
			got = deps.HTTP
			return nil, nil
		}})
	own := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { hops++; return nil }}
	for _, hc := range []*http.Client{nil, {}, own} {
		got = nil
		if _, err := reg.New(channel.Instance{ID: channel.ID{Type: "probe", Alias: "a"}}, channel.Deps{HTTP: hc}); err != nil {
			t.Fatal(err)
		}
		if got == nil {
			t.Fatal("the factory got no client")
		}
		req, _ := http.NewRequest(http.MethodPost, origin.URL+"/away", strings.NewReader("password=hunter2"))
		req.Header.Set("Authorization", "Bearer s3cret")
		if _, err := got.Do(req); !errors.Is(err, channel.ErrCrossOriginRedirect) {
			t.Fatalf("client %v: cross-port redirect: %v", hc, err)
		}
		resp, err := got.Get(origin.URL + "/here")
		if err != nil {
			t.Fatalf("client %v: same-origin redirect: %v", hc, err)
		}
		resp.Body.Close()
	}
	if got := catch.requests(); len(got) != 0 {
		t.Fatalf("the other port received %q", got)
	}
	if hops != 1 {
		t.Fatalf("the daemon's policy ran %d times, want once (for its one same-origin redirect)", hops)
	}
	if _, err := reg.New(channel.Instance{ID: channel.ID{Type: "nope", Alias: "a"}}, channel.Deps{}); !errors.Is(err, channel.ErrPermanent) {
		t.Fatalf("unknown type: %v", err)
	}
}

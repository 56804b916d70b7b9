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

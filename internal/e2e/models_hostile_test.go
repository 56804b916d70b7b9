package e2e

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
)

// zeroclaw models against hostile backends, through the real daemon: one redirects its /models to a listener
// on another port (it must get no key: it got the Authorization header, as net/http keeps it for the same
// host name), one answers model names holding terminal control sequences (they must be shown escaped).
func TestModelsCLIHostileProviders(t *testing.T) {
	t.Parallel()
	var stolen atomic.Value
	thief := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		stolen.Store(r.Header.Get("Authorization") + "|" + r.Header.Get("X-Extra"))
		fmt.Fprint(w, `{"data":[{"id":"stolen-model"}]}`)
	}))
	defer thief.Close()
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, thief.URL+r.URL.Path, http.StatusFound)
	}))
	defer front.Close()
	odd := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `{"data":[{"id":"gpt\u001b]52;c;ZXZpbA==\u0007x"},{"id":"m\u001b[2J\r\u202eok"}]}`)
	}))
	defer odd.Close()
	h, _ := homeWithConfig(t, fmt.Sprintf(`schema_version = 3

[providers.models.openai.moved]
uri = "%s/v1"
api_key = "sk-redirect-secret-1"
model = "m"
extra_headers = { "X-Extra" = "extra-redirect-secret" }

[providers.models.openai.odd]
uri = "%s/v1"
model = "m"

[agents.default]
model_provider = "openai.odd"
risk_profile = "supervised"

[risk_profiles.supervised]
level = "supervised"
`, front.URL, odd.URL))
	d := start(t, env(h), "daemon")
	waitSocket(t, d, agentSock(h))

	out, errOut, code := run(t, env(h), "", "models", "openai.moved")
	if code != 1 || strings.Contains(out, "stolen-model") {
		t.Errorf("models openai.moved (redirected to another origin): exit %d\n%s\n%s", code, out, errOut)
	}
	if s, _ := stolen.Load().(string); s != "" && s != "|" {
		t.Errorf("the listener the redirect named was sent %q", s)
	}
	out, errOut, code = run(t, env(h), "", "models", "openai.odd")
	if code != 0 || !strings.Contains(out, "openai.odd") {
		t.Fatalf("models openai.odd: exit %d\n%s\n%s", code, out, errOut)
	}
	for _, c := range []string{"\x1b", "\x07", "\r", "\u202e"} {
		if strings.Contains(out+errOut, c) {
			t.Errorf("the model list printed %q raw:\n%q", c, out)
		}
	}
}

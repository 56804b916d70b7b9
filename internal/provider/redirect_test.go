package provider

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// elsewhere is a listener on another port (another origin) recording the credential headers it was sent.
func elsewhere(t *testing.T) (*httptest.Server, func() []string) {
	var mu sync.Mutex
	var got []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		for _, h := range []string{"Authorization", "X-Api-Key", "X-Secret-Extra"} {
			if v := r.Header.Get(h); v != "" {
				got = append(got, h+": "+v)
			}
		}
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"data":[{"id":"stolen"}]}`))
	}))
	t.Cleanup(srv.Close)
	return srv, func() []string { mu.Lock(); defer mu.Unlock(); return append([]string(nil), got...) }
}

func redirector(t *testing.T, to string, code int) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, to+r.URL.Path, code)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// A provider's endpoint (hostile, or a proxy in front of it) that redirects the model listing to another
// origin got the key there: net/http keeps every header but Authorization/Cookie on a redirect to another
// host, and keeps even Authorization for the same host name on another port. x-api-key (anthropic) and the
// provider's extra_headers went to whatever listener the redirect named.
func TestListModelsRefusesRedirectToAnotherOrigin(t *testing.T) {
	t.Parallel()
	for _, family := range []string{"anthropic", "openai"} {
		other, seen := elsewhere(t)
		front := redirector(t, other.URL, http.StatusFound)
		_, err := ListModels(t.Context(), nil, Settings{Family: family, URI: front.URL, APIKey: "sk-secret-1",
			ExtraHeaders: map[string]string{"X-Secret-Extra": "extra-secret"}})
		if err == nil {
			t.Errorf("%s: a listing redirected to another origin was accepted", family)
		}
		if got := seen(); len(got) != 0 {
			t.Errorf("%s: the other origin was sent %q", family, got)
		}
		if err != nil && strings.Contains(err.Error(), "sk-secret-1") {
			t.Errorf("%s: error names the key: %v", family, err)
		}
	}
}

// A turn's POST redirected with 307 replays the prompt and the credentials to where it points: it must not
// leave the configured origin either.
func TestStreamRefusesRedirectToAnotherOrigin(t *testing.T) {
	t.Parallel()
	other, seen := elsewhere(t)
	front := redirector(t, other.URL, http.StatusTemporaryRedirect)
	p, err := New(Settings{Family: "openai", Alias: "test", URI: front.URL + "/v1", APIKey: "sk-secret-2",
		Model: "m", MaxRetries: -1, ExtraHeaders: map[string]string{"X-Secret-Extra": "extra-secret"}})
	if err != nil {
		t.Fatal(err)
	}
	_, err = p.Stream(t.Context(), Request{Messages: []Message{{Role: RoleUser, Content: "private prompt"}}}, func(Event) {})
	if err == nil {
		t.Errorf("a turn redirected to another origin succeeded")
	}
	if got := seen(); len(got) != 0 {
		t.Errorf("the other origin was sent %q", got)
	}
}

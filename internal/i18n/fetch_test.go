package i18n

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

func TestFetch(t *testing.T) {
	var mu sync.Mutex
	var asked []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		asked = append(asked, r.URL.Path)
		mu.Unlock()
		switch r.URL.Path {
		case "/master/crates/zeroclaw-runtime/locales/fr/tools.ftl": // the tag has none, master has it
			w.Write([]byte("tool-shell = Exécuter une commande\n"))
		case "/v0.8.6/apps/zerocode/locales/fr/zerocode.ftl":
			w.Write([]byte("zc-pane-chat = Discussion\n"))
		case "/v0.8.6/apps/zerocode/locales/ja/zerocode.ftl":
			w.Write([]byte(strings.Repeat("x", 2048))) // larger than the cap below
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	f := Fetcher{Client: srv.Client(), BaseURL: srv.URL, Version: "0.8.6", MaxBytes: 1024}
	ctx := context.Background()

	got, skipped, err := f.Fetch(ctx, "fr", nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 || got[0].Name != "cli" || got[0].Filename != "cli.ftl" || !strings.Contains(got[0].Content, "doctor-file-mode =") ||
		got[1].Name != "tools" || got[1].Content != "tool-shell = Exécuter une commande\n" || got[2].Filename != "zerocode.ftl" || len(skipped) != 0 {
		t.Fatalf("got %+v skipped %v", got, skipped)
	}
	// es has no tools file anywhere: skipped after both refs.
	got, skipped, err = f.Fetch(ctx, "es", []string{"tools"})
	if err != nil || len(got) != 0 || len(skipped) != 1 || skipped[0] != "tools" {
		t.Fatalf("es: %+v %v %v", got, skipped, err)
	}
	// A body over the cap fails the call (ErrFetch), it is not truncated.
	if _, _, err := f.Fetch(ctx, "ja", []string{"zerocode"}); !errors.Is(err, ErrFetch) {
		t.Fatalf("oversized: %v", err)
	}
	mu.Lock()
	n := len(asked)
	mu.Unlock()
	for _, c := range []struct {
		locale string
		names  []string
		msg    string
	}{
		{"", nil, "invalid locale ''"},
		{"fr/../../x", nil, "invalid locale 'fr/../../x'"},
		{"abcdefghijklmnopq", nil, "invalid locale 'abcdefghijklmnopq'"},
		{"de", nil, "locale 'de' not in registry"},
		{"fr-FR", nil, "locale 'fr-FR' not in registry"},
		{"fr", []string{"cli", "web"}, "unknown catalog 'web'"},
	} {
		_, _, err := f.Fetch(ctx, c.locale, c.names)
		if !errors.Is(err, ErrBadRequest) || err.Error() != c.msg {
			t.Errorf("Fetch(%q, %v) = %v, want %q", c.locale, c.names, err, c.msg)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if len(asked) != n {
		t.Errorf("validation errors made requests: %v", asked[n:])
	}
	// A server that is gone is a transport error.
	srv.Close()
	if _, _, err := f.Fetch(ctx, "fr", []string{"tools"}); !errors.Is(err, ErrFetch) {
		t.Fatalf("closed server: %v", err)
	}
	// No BaseURL: the cli catalogue only.
	got, skipped, err = Fetcher{}.Fetch(ctx, "en", nil)
	if err != nil || len(got) != 1 || got[0].Name != "cli" || len(skipped) != 2 {
		t.Fatalf("offline: %+v %v %v", got, skipped, err)
	}
}

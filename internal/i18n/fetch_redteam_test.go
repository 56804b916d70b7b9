package i18n

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
)

// Security-matrix row (locales/fetch): a caller naming one catalogue many times must not make the daemon
// download it, hold it or answer it more than once. Without that, ["tools" x 100000] in one request is
// 200000 downloads of up to 1 MiB each held in one answer (and ["cli" x N] N copies of the built-in file).
func TestFetchDuplicateCataloguesAreFetchedOnce(t *testing.T) {
	var asked atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		asked.Add(1)
		_, _ = w.Write([]byte("tool-shell = x\n"))
	}))
	defer srv.Close()
	f := Fetcher{Client: srv.Client(), BaseURL: srv.URL, Version: "0.8.6"}
	names := make([]string, 0, 600)
	for range 200 {
		names = append(names, "tools", "cli", "tools")
	}
	got, skipped, err := f.Fetch(context.Background(), "fr", names)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].Name != "tools" || got[1].Name != "cli" || len(skipped) != 0 {
		t.Fatalf("got %d catalogues (want tools and cli once each), skipped %v", len(got), skipped)
	}
	if n := asked.Load(); n != 1 {
		t.Fatalf("%d downloads for one catalogue named 400 times", n)
	}
}

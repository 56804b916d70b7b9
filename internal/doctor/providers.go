package doctor

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"sort"
	"sync"

	"github.com/zeroclaw-go/zeroclaw/internal/config"
	"github.com/zeroclaw-go/zeroclaw/internal/provider"
)

// checkProviders probes the base URL of every configured provider that needs the network, all at once, each
// bounded by o.ProbeTimeout. Any HTTP answer, even 401 or 404, proves the endpoint reachable; no credential is
// sent. It reports whether ctx ended first.
func checkProviders(ctx context.Context, r *report, o Options, cfg *config.Config) bool {
	type target struct{ name, url string }
	var targets []target
	for family, aliases := range cfg.Providers.Models {
		for alias, p := range aliases {
			base := p.URI
			if base == "" {
				base = map[string]string{"openai": provider.DefaultOpenAIURI, "ollama": provider.DefaultOllamaURI,
					"anthropic": provider.DefaultAnthropicURI}[family]
			}
			if family == "echo" || base == "" {
				continue // offline
			}
			targets = append(targets, target{family + "." + alias, base})
		}
	}
	sort.Slice(targets, func(i, j int) bool { return targets[i].name < targets[j].name })
	results := make([]error, len(targets))
	codes := make([]int, len(targets))
	var wg sync.WaitGroup
	for i, t := range targets {
		wg.Add(1)
		go func() {
			defer wg.Done()
			codes[i], results[i] = probe(ctx, o, t.url)
		}()
	}
	wg.Wait()
	for i, t := range targets {
		shown := redact(t.url)
		id := "providers.models." + t.name
		if err := results[i]; err != nil {
			r.warn(CategoryProviders, "provider-unreachable", id, r.t("doctor-provider-unreachable", "name", t.name, "url", shown, "error", err),
				r.t("doctor-provider-unreachable-fix", "property", id+".uri"))
			continue
		}
		r.ok(CategoryProviders, "provider-reachable", r.t("doctor-provider-reachable", "name", t.name, "url", shown, "status", codes[i]))
	}
	return ctx.Err() != nil
}

func probe(ctx context.Context, o Options, raw string) (int, error) {
	ctx, cancel := context.WithTimeout(ctx, o.ProbeTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, raw, nil)
	if err != nil {
		return 0, fmt.Errorf("bad URL: %w", err)
	}
	req.URL.User = nil // never send credentials a URL might carry
	resp, err := o.HTTPClient.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return 0, fmt.Errorf("no answer within %s", o.ProbeTimeout)
		}
		var ue *url.Error
		if errors.As(err, &ue) {
			return 0, ue.Err
		}
		return 0, err
	}
	resp.Body.Close()
	return resp.StatusCode, nil
}

// redact drops the user info and the query of a URL before it is shown.
func redact(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(unparsable URL)"
	}
	u.User, u.RawQuery, u.Fragment = nil, "", ""
	return u.String()
}

package i18n

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"time"
)

// ErrBadRequest is what every locales/fetch validation error wraps (a locale of the wrong shape or not in the
// registry, an unknown catalogue): the caller's params are wrong. Its messages are upstream's.
var ErrBadRequest = errors.New("i18n: bad locales request")

// ErrFetch is a catalogue download that failed in transport (no answer, a body too large): upstream aborts the
// whole call.
var ErrFetch = errors.New("i18n: catalogue download failed")

type requestError struct{ msg string }

func (e *requestError) Error() string        { return e.msg }
func (e *requestError) Is(target error) bool { return target == ErrBadRequest }

// Catalogue is one of the catalogues locales/fetch knows, upstream's FTL_CATALOGS: its name, its path in
// upstream's repository ({locale} replaced) and the file name the client writes it as.
type Catalogue struct {
	Name     string
	Path     string
	Filename string
}

// Catalogues returns upstream's catalogue table, in its order.
func Catalogues() []Catalogue {
	return []Catalogue{
		{"cli", "crates/zeroclaw-runtime/locales/{locale}/cli.ftl", "cli.ftl"},
		{"tools", "crates/zeroclaw-runtime/locales/{locale}/tools.ftl", "tools.ftl"},
		{"zerocode", "apps/zerocode/locales/{locale}/zerocode.ftl", "zerocode.ftl"},
	}
}

// Fetched is one catalogue's bytes.
type Fetched struct {
	Name, Filename, Content string
}

// Fetcher downloads catalogues for locales/fetch. The cli catalogue is this daemon's own (its keys are not
// upstream's), served from the binary; the others (tools, zerocode) come from upstream's repository under
// BaseURL, at tag v<Version> then at master, the first 2xx winning, as upstream does. Unlike upstream every
// request is bounded in time and size.
type Fetcher struct {
	Client  *http.Client
	BaseURL string // e.g. https://raw.githubusercontent.com/zeroclaw-labs/zeroclaw; "" skips the downloads
	Version string // the upstream release whose tag is tried first
	// Timeout bounds each request (0: 15s); MaxBytes each body (0: MaxCatalogBytes).
	Timeout  time.Duration
	MaxBytes int64
}

// ValidateLocale checks a locales/fetch locale as upstream does: 1 to 16 ASCII letters, digits or '-', and a
// code of the registry.
func ValidateLocale(code string) error {
	if len(code) == 0 || len(code) > 16 {
		return &requestError{fmt.Sprintf("invalid locale '%s'", code)}
	}
	for i := 0; i < len(code); i++ {
		c := code[i]
		if !isLetter(c) && !(c >= '0' && c <= '9') && c != '-' {
			return &requestError{fmt.Sprintf("invalid locale '%s'", code)}
		}
	}
	if !Known(code) {
		return &requestError{fmt.Sprintf("locale '%s' not in registry", code)}
	}
	return nil
}

// Fetch returns the named catalogues of a locale, each once (all of them when names is empty), and the names that have no
// file (every ref answered non-2xx, or no BaseURL to ask). Validation errors wrap ErrBadRequest and come before
// any request; a transport error wraps ErrFetch.
func (f Fetcher) Fetch(ctx context.Context, locale string, names []string) (got []Fetched, skipped []string, err error) {
	if err := ValidateLocale(locale); err != nil {
		return nil, nil, err
	}
	selected := Catalogues()
	if len(names) > 0 {
		selected = nil
		for _, n := range names {
			c, ok := catalogueNamed(n)
			if !ok {
				return nil, nil, &requestError{fmt.Sprintf("unknown catalog '%s'", n)}
			}
			if !slices.Contains(selected, c) { // a name given twice is fetched and answered once
				selected = append(selected, c)
			}
		}
	}
	got, skipped = []Fetched{}, []string{}
	for _, c := range selected {
		if c.Name == "cli" {
			b, err := builtinFS.ReadFile("locales/" + locale + "/" + CatalogFile)
			if err != nil {
				skipped = append(skipped, c.Name)
				continue
			}
			got = append(got, Fetched{c.Name, c.Filename, string(b)})
			continue
		}
		body, ok, err := f.download(ctx, strings.ReplaceAll(c.Path, "{locale}", locale))
		if err != nil {
			return nil, nil, err
		}
		if !ok {
			skipped = append(skipped, c.Name)
			continue
		}
		got = append(got, Fetched{c.Name, c.Filename, body})
	}
	return got, skipped, nil
}

func catalogueNamed(n string) (Catalogue, bool) {
	for _, c := range Catalogues() {
		if c.Name == n {
			return c, true
		}
	}
	return Catalogue{}, false
}

// download tries each ref in turn; ok is false when none answered 2xx.
func (f Fetcher) download(ctx context.Context, path string) (string, bool, error) {
	if f.BaseURL == "" {
		return "", false, nil
	}
	client := f.Client
	if client == nil {
		client = http.DefaultClient
	}
	timeout := f.Timeout
	if timeout <= 0 {
		timeout = 15 * time.Second
	}
	limit := f.MaxBytes
	if limit <= 0 {
		limit = MaxCatalogBytes
	}
	refs := []string{"master"}
	if f.Version != "" {
		refs = []string{"v" + f.Version, "master"}
	}
	for _, ref := range refs {
		u := strings.TrimRight(f.BaseURL, "/") + "/" + ref + "/" + path
		body, status, err := get(ctx, client, u, timeout, limit)
		if err != nil {
			return "", false, fmt.Errorf("%w: %s: %v", ErrFetch, u, err)
		}
		if status >= 200 && status < 300 {
			return body, true, nil
		}
	}
	return "", false, nil
}

func get(ctx context.Context, c *http.Client, u string, timeout time.Duration, limit int64) (string, int, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return "", 0, err
	}
	resp, err := c.Do(req)
	if err != nil {
		return "", 0, err
	}
	defer resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode >= 300 {
		return "", resp.StatusCode, nil
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, limit+1))
	if err != nil {
		return "", 0, err
	}
	if int64(len(b)) > limit {
		return "", 0, fmt.Errorf("catalogue larger than %d bytes", limit)
	}
	return string(b), resp.StatusCode, nil
}

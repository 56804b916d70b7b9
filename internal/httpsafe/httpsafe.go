// Package httpsafe holds the one redirect policy every outbound client that carries a credential uses: LLM
// providers (their key, extra_headers, the prompt) and channel adapters (their bot token, a login body).
package httpsafe

import (
	"errors"
	"net/http"
)

// ErrCrossOriginRedirect: a server redirected a call to another origin (scheme, host or port).
var ErrCrossOriginRedirect = errors.New("redirect to another origin refused (it would carry the credential)")

// maxRedirects is how many redirects a client follows within the origin.
const maxRedirects = 10

// SameOrigin is a copy of hc (nil: a plain client) that follows a redirect only within the first request's
// origin, at most 10 times, then hc's own policy. net/http forwards every header but Authorization and Cookie
// to another host, and those too to the same host name on another port or from https to http, and a 307/308
// replays the body: a hostile server (or a proxy in front of it) would otherwise send the caller's key, token
// or login body to a listener they were never meant for.
func SameOrigin(hc *http.Client) *http.Client {
	c := &http.Client{}
	if hc != nil {
		*c = *hc
	}
	prev := c.CheckRedirect
	c.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		first := via[0].URL
		if req.URL.Scheme != first.Scheme || req.URL.Host != first.Host {
			return ErrCrossOriginRedirect
		}
		if len(via) >= maxRedirects {
			return errors.New("stopped after 10 redirects")
		}
		if prev != nil {
			return prev(req, via)
		}
		return nil
	}
	return c
}

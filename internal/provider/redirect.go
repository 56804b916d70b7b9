package provider

import (
	"errors"
	"net/http"
)

// ErrCrossOriginRedirect: a backend redirected a call to another origin (scheme, host or port).
var ErrCrossOriginRedirect = errors.New("provider: redirect to another origin refused (it would carry the key)")

// sameOrigin is a copy of hc (nil: a plain client) that follows a redirect only within the first request's
// origin, at most 10 times. net/http forwards every header but Authorization and Cookie to another host, and
// those too to the same host name on another port or from https to http; a 307/308 replays the body. So a
// backend that redirects (hostile, or a proxy in front of it) would send the key, extra_headers and the
// prompt to a listener they were never meant for.
func sameOrigin(hc *http.Client) *http.Client {
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
		if len(via) >= 10 {
			return errors.New("provider: stopped after 10 redirects")
		}
		if prev != nil {
			return prev(req, via)
		}
		return nil
	}
	return c
}

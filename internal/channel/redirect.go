package channel

import (
	"errors"
	"net/http"
)

// ErrCrossOriginRedirect: a platform server redirected a call to another origin (scheme, host or port).
var ErrCrossOriginRedirect = errors.New("redirect to another origin refused (it would carry the token)")

// SameOrigin is a copy of hc (nil: a plain client) that follows a redirect only within the first request's
// origin, at most 10 times. net/http's own policy keeps the Authorization header on a redirect to the same
// host name on another port, or from https to http, so a hostile or misconfigured platform server could send
// the adapter's bearer token (and a 307/308 replays a login body with its password) to a listener the token
// was never meant for. An adapter that authenticates with a header uses this client.
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
		if len(via) >= 10 {
			return errors.New("stopped after 10 redirects")
		}
		if prev != nil {
			return prev(req, via)
		}
		return nil
	}
	return c
}

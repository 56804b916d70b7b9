package provider

import (
	"net/http"

	"github.com/zeroclaw-go/zeroclaw/internal/httpsafe"
)

// ErrCrossOriginRedirect: a backend redirected a call to another origin (scheme, host or port); the key,
// extra_headers and the prompt would have gone with it.
var ErrCrossOriginRedirect = httpsafe.ErrCrossOriginRedirect

// sameOrigin is hc following redirects within its first request's origin only (httpsafe.SameOrigin).
func sameOrigin(hc *http.Client) *http.Client { return httpsafe.SameOrigin(hc) }

package channel

import (
	"net/http"

	"github.com/zeroclaw-go/zeroclaw/internal/httpsafe"
)

// ErrCrossOriginRedirect: a platform server redirected a call to another origin (scheme, host or port); the
// adapter's bearer token (or a login body) would have gone with it.
var ErrCrossOriginRedirect = httpsafe.ErrCrossOriginRedirect

// SameOrigin is hc following redirects within its first request's origin only (httpsafe.SameOrigin); the
// registry gives every adapter such a client (Registry.New).
func SameOrigin(hc *http.Client) *http.Client { return httpsafe.SameOrigin(hc) }

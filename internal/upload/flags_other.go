//go:build !unix

package upload

// Where open has no such flags: the Lstat before an open and the Stat after it still refuse a link, and named
// pipes are not files there.
const (
	oNoFollow = 0
	oNonBlock = 0
)

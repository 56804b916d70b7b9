//go:build !unix

package matrix

// oNoFollow is 0 where the platform has no O_NOFOLLOW.
const oNoFollow = 0

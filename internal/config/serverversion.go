package config

import (
	"regexp"
	"sync"
)

// releaseVersion is the shape of rpc.server_version: major.minor.patch, with an optional pre-release or build
// suffix (zerocode compares the whole string with its own CARGO_PKG_VERSION).
var releaseVersion = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[0-9]+\.[0-9]+\.[0-9]+([-+][0-9A-Za-z.-]+)?$`) })

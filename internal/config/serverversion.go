package config

import "regexp"

// releaseVersion is the shape of rpc.server_version: major.minor.patch, with an optional pre-release or build
// suffix (zerocode compares the whole string with its own CARGO_PKG_VERSION).
var releaseVersion = regexp.MustCompile(`^[0-9]+\.[0-9]+\.[0-9]+([-+][0-9A-Za-z.-]+)?$`)

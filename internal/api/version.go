package api

import "runtime/debug"

// Version is this project's own release, the fallback of BuildVersion.
const Version = "0.1.0"

// stamped is set by a release build: go build -ldflags "-X github.com/zeroclaw-go/zeroclaw/internal/api.stamped=v1.2.3".
var stamped string

// BuildVersion is the version of this build, reported as build_version in initialize and status and by
// `zeroclaw version`: the stamped version if any, else the module version the binary was built from
// (go install ...@v1.2.3), else Version.
func BuildVersion() string {
	if stamped != "" {
		return stamped
	}
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return Version
}

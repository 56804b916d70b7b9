package api

import (
	"runtime/debug"
	"sync"
)

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
	return moduleVersion()
}

// moduleVersion is the module version from the binary's build info, else Version. The build info is parsed
// once: it cannot change while the process runs, and parsing it is most of a status call's work.
var moduleVersion = sync.OnceValue(func() string {
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return Version
})

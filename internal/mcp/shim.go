package mcp

import (
	"os"
	"strings"
	"sync/atomic"
)

// ShimEnv, set in a process's environment, makes the zeroclaw binary (or a test binary whose TestMain calls
// RunShimIfAsked) act as the stdio server's keeper instead of itself: os.Args[1:] is the server's command line
// and the value is the daemon's pid. See shim_linux.go for what the keeper does.
const ShimEnv = "ZEROCLAW_MCP_SHIM"

// RunShimIfAsked runs the keeper and exits when the process was started as one; otherwise it returns at once.
// main calls it first thing.
func RunShimIfAsked() {
	v, ok := os.LookupEnv(ShimEnv)
	if !ok {
		keeperCapable.Store(true)
		return
	}
	os.Exit(runShim(v, os.Args[1:]))
}

// keeperCapable: this process's main called RunShimIfAsked, so its binary can be a keeper.
var keeperCapable atomic.Bool

// SelfShim returns the path of this binary when it can act as a keeper (Options.Shim), else "" (a test
// binary running a daemon in-process, or a platform without the keeper).
func SelfShim() string {
	if !shimSupported || !keeperCapable.Load() {
		return ""
	}
	exe, err := os.Executable()
	if err != nil {
		return ""
	}
	return exe
}

// withoutShimEnv drops ShimEnv from env: a server that is itself zeroclaw (`zeroclaw mcp serve`) must not
// become a keeper in turn.
func withoutShimEnv(env []string) []string {
	out := env[:0:0]
	for _, kv := range env {
		if !strings.HasPrefix(kv, ShimEnv+"=") {
			out = append(out, kv)
		}
	}
	return out
}

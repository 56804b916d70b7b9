//go:build !linux

package mcp

import (
	"fmt"
	"os"
)

// shimSupported: the keeper needs PR_SET_CHILD_SUBREAPER and Pdeathsig; elsewhere children are started
// directly (their own process group where there is one).
const shimSupported = false

func runShim(string, []string) int {
	fmt.Fprintln(os.Stderr, "zeroclaw: the MCP server keeper runs on Linux only")
	return 127
}

// Command mcptestserver runs the mcptest MCP server on stdio (see internal/mcp/mcptest for the variables that
// shape it); the end-to-end tests give it to the real daemon as an [[mcp.servers]] command. Started with
// mcp.ShimEnv it is a stdio server's keeper instead, as the zeroclaw binary is (a small keeper for the tests
// that start a thousand).
package main

import (
	"os"

	"github.com/zeroclaw-go/zeroclaw/internal/mcp"
	"github.com/zeroclaw-go/zeroclaw/internal/mcp/mcptest"
)

func main() {
	mcp.RunShimIfAsked()
	os.Exit(mcptest.RunStdio())
}

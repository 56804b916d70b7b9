// Command mcptestserver runs the mcptest MCP server on stdio (see internal/mcp/mcptest for the variables that
// shape it); the end-to-end tests give it to the real daemon as an [[mcp.servers]] command.
package main

import (
	"os"

	"github.com/zeroclaw-go/zeroclaw/internal/mcp/mcptest"
)

func main() { os.Exit(mcptest.RunStdio()) }

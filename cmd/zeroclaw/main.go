// Command zeroclaw is the personal AI agent runtime daemon and its command-line client.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/zeroclaw-go/zeroclaw/internal/cli"
	"github.com/zeroclaw-go/zeroclaw/internal/mcp"
)

func main() {
	mcp.RunShimIfAsked() // started as a stdio MCP server's keeper: never returns
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	home, _ := os.UserHomeDir()
	code := cli.Run(ctx, cli.Env{
		Stdin:   os.Stdin,
		Stdout:  os.Stdout,
		Stderr:  os.Stderr,
		Environ: os.Environ(),
		Home:    home,
	}, os.Args[1:])
	stop()
	for _, f := range atExit {
		f()
	}
	os.Exit(code)
}

// atExit runs before the process exits: the profiling hooks of a -tags zcprof build (prof_zcprof.go); a normal
// build has none.
var atExit []func()

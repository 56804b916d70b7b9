package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"

	"github.com/zeroclaw-go/zeroclaw/internal/api"
	"github.com/zeroclaw-go/zeroclaw/internal/cli/client"
	"github.com/zeroclaw-go/zeroclaw/internal/jsonrpc"
	"github.com/zeroclaw-go/zeroclaw/internal/mcpserver"
)

const mcpSynopsis = "serve [--config-dir DIR]"

// mcpTokenEnv, when set, is a paired gateway token `mcp serve` acts as (that device's grants) instead of the
// socket peer; an environment variable, not a flag, so that it shows in no process listing.
const mcpTokenEnv = "ZEROCLAW_MCP_TOKEN"

// runMCP is `zeroclaw mcp`: the daemon as an MCP server.
func runMCP(ctx context.Context, env Env, args []string) error {
	return group{name: "mcp", synopsis: mcpSynopsis, subs: []subcommand{sub("serve", mcpServe)}}.run(ctx, env, args)
}

// mcpServe is `zeroclaw mcp serve`, the command an MCP client runs: an MCP server on stdin and stdout whose
// tools call the daemon's methods over its local socket (an ephemeral daemon is started when none runs, as for
// `zeroclaw agent`), acting as that socket peer (the daemon's own uid is the owner, another uid its [users]
// entry) or, with ZEROCLAW_MCP_TOKEN set, as the paired device whose token it is. Stdout carries the protocol
// only; errors go to stderr. It ends when the client closes stdin or the daemon goes away.
func mcpServe(ctx context.Context, env Env, args []string) error {
	f := newDaemonFlags(env, "mcp serve", "[--config-dir DIR]  (ZEROCLAW_MCP_TOKEN=<paired token>: act as that device)")
	if err := parseFlags(f.FlagSet, args); err != nil {
		return err
	}
	nc, err := dialOrSpawn(ctx, env, *f.configDir)
	if err != nil {
		return err
	}
	conn, err := client.NewAs(ctx, nc, nil, env.Getenv(mcpTokenEnv), nil)
	var we *jsonrpc.Error
	if errors.As(err, &we) && we.Code == api.CodeAuthRequired {
		return hinted(say("cli-mcp-not-paired", "variable", mcpTokenEnv, "error", err), "cli-mcp-not-paired-hint", "variable", mcpTokenEnv)
	}
	if err != nil {
		return err
	}
	defer conn.Close()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() { // the daemon went away: the session ends, and the client sees its server exit
		select {
		case <-conn.Done():
			cancel()
		case <-ctx.Done():
		}
	}()
	srv := mcpserver.New(mcpserver.Options{Version: api.BuildVersion(),
		Logger: slog.New(slog.NewTextHandler(env.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))})
	defer srv.Close()
	peer := &mcpserver.Peer{Label: "stdio", Call: func(ctx context.Context, method string, params json.RawMessage) (any, error) {
		var raw json.RawMessage
		if err := conn.Call(ctx, method, params, &raw); err != nil {
			if errors.Is(err, client.ErrClosed) {
				return nil, fmt.Errorf("%w: %w", mcpserver.ErrDaemonGone, err)
			}
			return nil, err
		}
		return raw, nil
	}}
	if err := srv.ServeStdio(ctx, io.NopCloser(env.Stdin), nopWriteCloser{env.Stdout}, peer); err != nil {
		return say("cli-mcp-session-ended", "limit", mcpserver.DefaultMaxFrameBytes, "error", err)
	}
	return nil
}

// nopWriteCloser leaves stdout open when the session closes its writer.
type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }

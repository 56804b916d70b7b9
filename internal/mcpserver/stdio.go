package mcpserver

import (
	"context"
	"errors"
	"io"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/zeroclaw-go/zeroclaw/internal/router"
)

// ServeStdio serves one MCP session over newline-delimited JSON on in and out for peer, until the client ends
// its input, ctx ends, or Close; a frame longer than MaxFrameBytes ends the session with an error. It is what
// `zeroclaw mcp serve` runs.
func (s *Server) ServeStdio(ctx context.Context, in io.ReadCloser, out io.WriteCloser, peer *Peer) error {
	srv := s.newSDKServer(peer, "")
	ss, err := srv.Connect(ctx, &mcp.IOTransport{Reader: in, Writer: out, MaxLineLength: s.opts.MaxFrameBytes}, nil)
	if err != nil {
		return err
	}
	conn := router.NewConnID()
	if !s.peers.Add(conn, peer, func() { _ = ss.Close() }) {
		_ = ss.Close()
		return errShuttingDown
	}
	defer s.peers.Remove(conn)
	stop := context.AfterFunc(ctx, func() { _ = ss.Close() })
	defer stop()
	err = ss.Wait()
	if err == nil || errors.Is(err, io.EOF) || errors.Is(err, mcp.ErrConnectionClosed) || ctx.Err() != nil {
		return nil
	}
	return err
}

package gateway

import (
	"context"
	"net/http"
	"time"

	"github.com/coder/websocket"
)

// ACPSubprotocol is the subprotocol /acp echoes when a client offers it.
const ACPSubprotocol = "zeroclaw.acp.v1"

// wsRoutes mounts the WebSocket routes. They skip the body limit and the request timeout (a socket lives as
// long as its client) but keep the metrics, the security headers and the path prefix.
func (s *Server) wsRoutes(mux *http.ServeMux) {
	s.patterns = append(s.patterns, "GET /ws/chat", "GET /acp")
	mux.Handle("GET /ws/chat", s.counted("/ws/chat", s.serve(s.wsChat)))
	mux.Handle("GET /acp", s.counted("/acp", s.serve(s.wsACP)))
}

// wsACP is GET /acp: the ACP server over WebSocket, one JSON-RPC message per text frame, ws-bearer auth, the
// device principal, ?agent= as the default agent of session/new.
func (s *Server) wsACP(w http.ResponseWriter, r *http.Request) error {
	c, err := s.wsAuthenticate(r)
	if err != nil {
		return err
	}
	agent := agentParam(r)
	if _, known := s.o.Daemon.Config().Agents[agent]; agent != "" && !known {
		return fail(http.StatusBadRequest, "Unknown agent: "+agent)
	}
	if agent != "" && !c.principal.AllowsAgent(agent) {
		return fail(http.StatusForbidden, "Forbidden: this device's permission profiles do not allow agent "+agent+
			" (allowed_agents)")
	}
	return s.upgrade(w, r, []string{ACPSubprotocol}, func(ctx context.Context, conn *websocket.Conn) {
		id := c.identity()
		id.Label = "ws:" + c.key
		s.o.Daemon.ServeACP(ctx, s.framer(ctx, conn), id, agent)
	})
}

// writeTimeout bounds one frame write on a gateway socket: rpc.write_timeout_ms, as on the local socket.
func (s *Server) writeTimeout() time.Duration {
	if ms := s.o.Daemon.Config().RPC.WriteTimeoutMS; ms > 0 {
		return time.Duration(ms) * time.Millisecond
	}
	return 30 * time.Second
}

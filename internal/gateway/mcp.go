package gateway

import "net/http"

// mcpRoutes mounts /mcp, the daemon as an MCP server over streamable HTTP (POST a message, GET the session's
// stream, DELETE to end it). They keep the body limit, the metrics, the guard (Host, Origin, content type) and
// the path prefix, and skip the request timeout: a session's stream lives as long as its client.
func (s *Server) mcpRoutes(mux *http.ServeMux) {
	for _, m := range []string{"POST", "GET", "DELETE"} {
		s.patterns = append(s.patterns, m+" /mcp")
		mux.Handle(m+" /mcp", s.counted("/mcp", withBodyLimit(s.serve(s.authed(s.mcp)))))
	}
}

// mcp serves one streamable HTTP request of a paired device (Authorization: Bearer; never a token in the URL),
// acting with the device's grants. A session is bound to the token that opened it.
func (s *Server) mcp(w http.ResponseWriter, r *http.Request, c caller) error {
	owner := c.tokenHash
	if owner == "" { // pairing off: every client is the same unpaired device; its sessions are its address's
		owner = "unpaired:" + c.key
	}
	id := c.identity()
	id.Label = "mcp:" + c.key
	s.o.Daemon.ServeMCP(w, r, id, owner)
	return nil
}

package gateway

import (
	"net/http"

	"github.com/zeroclaw-go/zeroclaw/internal/api"
)

// approvalRoutes are the cross-session approvals (issue 27): GET /api/approvals lists what waits on a person
// that the device may see (approvals/list: the tool calls of its sessions, every session's for the owner, and
// the SOP gates with sops:read), POST /api/approvals/{id} {decision[, reason]} answers one (approvals/answer,
// under session/approve's or sops/approve's rules).
func (s *Server) approvalRoutes(mux *http.ServeMux) {
	s.handle(mux, "GET /api/approvals", s.authed(s.rpcRoute(api.MethodApprovalsList, noParams)))
	s.handle(mux, "POST /api/approvals/{id}", s.authed(s.rpcRoute(api.MethodApprovalsAnswer, merged([]string{"id"}, true))))
}

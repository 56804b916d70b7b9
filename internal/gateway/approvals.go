package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"

	"github.com/zeroclaw-go/zeroclaw/internal/api"
	"github.com/zeroclaw-go/zeroclaw/internal/sop/engine"
)

// approvalRoutes are the cross-session approvals (issue 27): GET /api/approvals lists what waits on a person
// that the device may see (approvals/list: the tool calls of its sessions, every session's for the owner, and
// the SOP gates with sops:read), POST /api/approvals/{id} {decision[, reason][, replacement]} answers one
// (approvals/answer, under session/approve's or sops/approve's rules), and GET /api/approvals/events pushes
// the list as it changes (approvalStream).
func (s *Server) approvalRoutes(mux *http.ServeMux) {
	s.handle(mux, "GET /api/approvals", s.authed(s.rpcRoute(api.MethodApprovalsList, noParams)))
	s.handle(mux, "POST /api/approvals/{id}", s.authed(s.rpcRoute(api.MethodApprovalsAnswer, merged([]string{"id"}, true))))
	s.patterns = append(s.patterns, "GET /api/approvals/events")
	mux.Handle("GET /api/approvals/events", s.counted("/api/approvals/events", s.serve(s.authed(s.approvalStream))))
}

// approvalStream is GET /api/approvals/events: Server-Sent Events, one `data:` line holding approvals/list's
// answer for the caller (the same JSON as GET /api/approvals) when the stream opens and again each time it
// changes: a tool call asked, answered, expired or dropped in any live session (the session manager's
// signal), a SOP run's transition (the engine's feed, for a caller with sops:read), and a look every
// streamKeepAlive (a comment line keeps proxies open). The list is asked for as the caller each time, under
// approvals/list's grants, so a device revoked or stripped of them loses the stream at the next change or
// keep-alive (an `event: error` frame, then the end). The streams count against /api/events' maxEventStreams;
// like it the route skips the request timeout and body limit. A slow reader holds nothing: each wake reads the
// list afresh, and an unchanged one is not sent again.
func (s *Server) approvalStream(w http.ResponseWriter, r *http.Request, c caller) error {
	list := func() ([]byte, error) {
		res, err := callAs[api.ApprovalsListResult](s, r, c, api.MethodApprovalsList, nil)
		if err != nil {
			return nil, err
		}
		return json.Marshal(res)
	}
	changed := s.o.Daemon.ApprovalsChanged()
	first, err := list() // refused (401/403) before the stream starts
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	id, ok := s.events.add(cancel)
	if !ok {
		return fail(http.StatusServiceUnavailable, "too many event streams open; try again later")
	}
	defer s.events.remove(id)
	var runs <-chan engine.RunSummary
	if e := s.o.Daemon.SopEngine(); e != nil && c.principal.Allows(api.GrantSopsRead) {
		sub := e.Subscribe(4)
		defer sub.Close()
		runs = sub.C
	}
	write := s.startSSE(w)
	var last []byte
	send := func(b []byte) bool {
		if bytes.Equal(b, last) {
			return true
		}
		last = b
		return write([]byte("data: "), b, []byte("\n\n"))
	}
	if !write([]byte(": connected\n\n")) || !send(first) {
		return nil
	}
	for {
		keep := s.o.Clock.NewTimer(streamKeepAlive)
		select {
		case <-ctx.Done():
			keep.Stop()
			return nil
		case <-changed:
		case _, open := <-runs:
			if !open {
				runs = nil
			}
		case <-keep.C:
			if !write([]byte(": keep-alive\n\n")) {
				return nil
			}
		}
		keep.Stop()
		changed = s.o.Daemon.ApprovalsChanged() // before the list, so no change after it is missed
		// The token and grants again, against the config in force: a revoked device's stream ends here.
		if c.resolve != nil {
			pr := c.resolve(s.o.Daemon.Config())
			if pr == nil {
				write([]byte("event: error\ndata: {\"error\":\"Unauthorized: this device's token is no longer paired\"}\n\n"))
				return nil
			}
			c.principal = pr
		}
		b, err := list()
		if err != nil {
			msg, _ := json.Marshal(map[string]string{"error": err.Error()})
			write([]byte("event: error\ndata: "), msg, []byte("\n\n"))
			return nil
		}
		if !send(b) {
			return nil
		}
	}
}

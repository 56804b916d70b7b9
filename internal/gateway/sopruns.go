package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"

	"github.com/coder/websocket"

	"github.com/zeroclaw-go/zeroclaw/internal/api"
	"github.com/zeroclaw-go/zeroclaw/internal/jsonrpc"
	"github.com/zeroclaw-go/zeroclaw/internal/sop/engine"
)

// The SOP run routes (upstream's api_sop.rs, api_sop_author.rs and ws_sop_runs.rs), each one sops/* method
// behind the gateway's checks. The methods carry in their error's data the status upstream's route answers
// (http_status), which sopCall sends; the approval routes /admin/sop/* are the owner's, as every /admin route
// here (upstream lets any loopback caller in).

// sopWatchBuffer is the room of one /ws/sops/runs feed: a socket that falls this far behind loses changes
// and gets {"type":"lagged","missed":n}, so a slow client holds at most this many summaries.
const sopWatchBuffer = 64

func (s *Server) sopRoutes(mux *http.ServeMux) {
	s.handle(mux, "GET /admin/sop/pending", s.adminSop(api.MethodSopsPending, noParams))
	s.handle(mux, "POST /admin/sop/approve", s.adminSop(api.MethodSopsApprove, sopResolveBody))
	s.handle(mux, "POST /admin/sop/deny", s.adminSop(api.MethodSopsDeny, sopResolveBody))
	s.handle(mux, "POST /api/sops/{name}/run", s.authed(s.sopCall(api.MethodSopsRun, fromRequest(optionalBody, "name"))))
	s.handle(mux, "GET /api/sops/runs", s.authed(s.sopCall(api.MethodSopsRuns, queryParams)))
	s.handle(mux, "GET /api/sops/{name}/runs/{run_id}/overlay", s.authed(s.sopCall(api.MethodSopsRunOverlay, fromRequest(noBody, "name", "run_id"))))
	s.handle(mux, "POST /api/sops/{name}/runs/{run_id}/decide", s.authed(s.sopCall(api.MethodSopsDecide, sopDecideBody)))
	s.patterns = append(s.patterns, "GET /ws/sops/runs")
	mux.Handle("GET /ws/sops/runs", s.counted("/ws/sops/runs", s.serve(s.wsSopRuns)))
}

// adminSop is an /admin/sop route: the owner's, then the method.
func (s *Server) adminSop(method string, params paramsFunc) handlerFunc {
	call := s.sopCall(method, params)
	return func(w http.ResponseWriter, r *http.Request) error {
		c, err := s.owner(r)
		if err != nil {
			return err
		}
		return call(w, r, c)
	}
}

// sopCall calls method and writes its result: 200, or 202 for a decision that counted one vote short of a
// quorum (upstream's decide). An error that names its status (data.http_status) is sent with it, and with
// upstream's {outcome, run_id} body when it names an outcome; any other goes to handleError.
func (s *Server) sopCall(method string, params paramsFunc) callerFunc {
	return func(w http.ResponseWriter, r *http.Request, c caller) error {
		p, err := params(r)
		if err != nil {
			return fail(http.StatusBadRequest, err.Error())
		}
		res, err := s.o.Daemon.Call(r.Context(), c.identity(), method, p)
		var je *jsonrpc.Error
		if errors.As(err, &je) {
			if data, ok := je.Data.(map[string]any); ok {
				if code, ok := data["http_status"].(int); ok {
					if outcome, ok := data["outcome"].(string); ok {
						return failWith(code, map[string]any{"outcome": outcome, "run_id": data["run_id"]})
					}
					return failWith(code, map[string]any{"error": je.Message, "code": je.Code})
				}
			}
		}
		if err != nil {
			return err
		}
		status := http.StatusOK
		switch o := res.(type) {
		case api.SopRunOverlay:
			if strings.HasPrefix(o.Outcome, api.SopOutcomePendingQuorum) {
				status = http.StatusAccepted
			}
		case api.SopResolveResult:
			if strings.HasPrefix(o.Outcome, api.SopOutcomePendingQuorum) {
				status = http.StatusAccepted
			}
		}
		writeJSON(w, status, res)
		return nil
	}
}

// sopResolveBody is upstream's {run_id, reason?} (an absent body is missing run_id, as a JSON object without it).
func sopResolveBody(r *http.Request) (json.RawMessage, error) {
	return fromRequest(optionalBody)(r)
}

// sopDecideBody is the decision (the whole body, upstream's raw ApprovalDecision) with the path's SOP and run.
func sopDecideBody(r *http.Request) (json.RawMessage, error) {
	raw, err := io.ReadAll(r.Body)
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return nil, errors.New("request body too large")
		}
		return nil, err
	}
	if !json.Valid(raw) {
		return nil, errors.New("body must be a decision: \"approve\" or {\"deny\":{\"reason\"?}}, {\"amend\":{\"text\"}}, {\"revise\":{\"guidance\"}}")
	}
	return json.Marshal(map[string]any{"name": r.PathValue("name"), "run_id": r.PathValue("run_id"), "decision": json.RawMessage(raw)})
}

// wsSopRuns is GET /ws/sops/runs: {"type":"snapshot","runs"} then {"type":"run","run"} per change, and
// {"type":"lagged","missed"} when this socket fell a ring behind; {"type":"disabled"} without a SOP engine.
// It needs sops:read. The token comes in the Authorization header or a bearer.<token> subprotocol, never the
// URL (where logs and proxies keep it).
func (s *Server) wsSopRuns(w http.ResponseWriter, r *http.Request) error {
	if r.URL.Query().Has("token") {
		return fail(http.StatusBadRequest, "token in the URL refused: send it as Authorization: Bearer <token> or the WebSocket subprotocol bearer.<token>")
	}
	c, err := s.wsAuthenticate(r)
	if err != nil {
		return err
	}
	if !c.principal.Allows(api.GrantSopsRead) {
		return fail(http.StatusForbidden, "Forbidden: missing grant "+api.GrantSopsRead)
	}
	e := s.o.Daemon.SopEngine()
	return s.upgrade(w, r, []string{"zeroclaw.v1"}, func(ctx context.Context, conn *websocket.Conn) {
		s.serveSopRuns(ctx, conn, c, e)
	})
}

func (s *Server) serveSopRuns(ctx context.Context, conn *websocket.Conn, c caller, e *engine.Engine) {
	send := func(v any) bool {
		b, err := json.Marshal(v)
		if err != nil {
			return false
		}
		wctx, cancel := context.WithTimeout(ctx, s.writeTimeout())
		defer cancel()
		return conn.Write(wctx, websocket.MessageText, b) == nil
	}
	if e == nil {
		send(map[string]string{"type": "disabled"})
		_ = conn.Close(websocket.StatusNormalClosure, "SOP subsystem not enabled")
		return
	}
	sub := e.Subscribe(sopWatchBuffer)
	defer sub.Close()
	res, err := s.o.Daemon.Call(ctx, c.identity(), api.MethodSopsRuns, nil)
	if err != nil {
		send(map[string]string{"type": "error", "error": errorText(err)})
		return
	}
	var snap api.SopRunsResult
	if b, err := json.Marshal(res); err != nil || json.Unmarshal(b, &snap) != nil {
		send(map[string]string{"type": "error", "error": "Internal error"})
		return
	}
	if !send(map[string]any{"type": "snapshot", "runs": snap.Runs}) {
		return
	}
	// The client sends nothing; reading finds its close (and answers pings).
	ctx = conn.CloseRead(ctx)
	for {
		select {
		case <-ctx.Done():
			return
		case run, ok := <-sub.C:
			if !ok {
				return
			}
			if n := sub.Lagged(); n > 0 && !send(map[string]any{"type": "lagged", "missed": n}) {
				return
			}
			if !send(map[string]any{"type": "run", "run": run}) {
				return
			}
		}
	}
}

// errorText is what a client is told of a failed call: a method's message, never an internal error's.
func errorText(err error) string {
	var je *jsonrpc.Error
	if errors.As(err, &je) {
		return je.Message
	}
	return "Internal error"
}

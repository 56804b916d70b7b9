package gateway

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/zeroclaw-go/zeroclaw/internal/api"
	"github.com/zeroclaw-go/zeroclaw/internal/jsonrpc"
)

// sopFrame answers upstream's SOP gate frame on /ws/chat (ws.rs handle_ws_sop_frame): an approval_response
// with kind "sop", a run_id and decision "approve" or "deny" (reason optional) resolves that run's gate as the
// connection's device, through sops/approve or sops/deny (so the grant, approval_mode and the step's policy
// apply), and answers {"type":"sop_approval_result", run_id, outcome}. It reports whether data was such a frame.
func (ch *chatConn) sopFrame(ctx context.Context, data []byte) bool {
	var f struct {
		Kind     string  `json:"kind"`
		RunID    string  `json:"run_id"`
		Decision string  `json:"decision"`
		Reason   *string `json:"reason"`
	}
	if json.Unmarshal(data, &f) != nil || f.Kind != "sop" {
		return false
	}
	method := map[string]string{"approve": api.MethodSopsApprove, "deny": api.MethodSopsDeny}[f.Decision]
	if method == "" || f.RunID == "" {
		ch.send(ctx, chatErrorFrame(&ChatError{Code: "INVALID_APPROVAL_RESPONSE",
			Message: `a SOP approval needs run_id and decision "approve" or "deny"`}))
		return true
	}
	p := api.SopResolveParams{RunID: f.RunID}
	if f.Decision == "deny" {
		p.Reason = f.Reason
	}
	params, _ := json.Marshal(p)
	res, err := ch.s.o.Daemon.Call(ctx, ch.c.identity(), method, params)
	outcome := ""
	var je *jsonrpc.Error
	switch {
	case err == nil:
		if r, ok := res.(api.SopResolveResult); ok {
			outcome = r.Outcome
		}
	case errors.As(err, &je):
		if data, ok := je.Data.(map[string]any); ok {
			if o, ok := data["outcome"].(string); ok {
				outcome = o // resolved nothing (not waiting, refused, at capacity): upstream still says so as a result
				break
			}
			if data["http_status"] == 503 && je.Code == api.CodeInternalError {
				ch.send(ctx, chatErrorFrame(&ChatError{Code: "SOP_DISABLED", Message: je.Message}))
				return true
			}
		}
		ch.send(ctx, chatErrorFrame(&ChatError{Code: "SOP_RESOLVE_FAILED", Message: je.Message}))
		return true
	default:
		ch.send(ctx, chatErrorFrame(&ChatError{Code: "SOP_RESOLVE_FAILED", Message: "Internal error"}))
		return true
	}
	ch.send(ctx, map[string]any{"type": "sop_approval_result", "run_id": f.RunID, "outcome": outcome})
	return true
}

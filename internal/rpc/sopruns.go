package rpc

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/zeroclaw-go/zeroclaw/internal/api"
	"github.com/zeroclaw-go/zeroclaw/internal/jsonrpc"
	"github.com/zeroclaw-go/zeroclaw/internal/router"
	"github.com/zeroclaw-go/zeroclaw/internal/sop/engine"
)

// The sops/* run methods (upstream/sop.md §3) over the SOP engine: sops/run, runs, run-overlay and decide as
// upstream, and ours for what upstream does only through its gateway or not at all (run-get, cancel, pending,
// approve, deny, subscribe). Every error carries upstream's message, and in data the status upstream's
// gateway route answers for it (http_status), which the gateway's SOP routes send.

// SopFeedBuffer is the room of one live runs feed (sops/subscribe, /ws/sops/runs): a subscriber that falls
// this far behind loses changes and is told how many, so a slow one holds at most this much.
const SopFeedBuffer = 64

func sopErr(code, status int, msg string) *jsonrpc.Error {
	return jsonrpc.NewError(code, msg, map[string]any{"http_status": status})
}

func sopInvalid(status int, msg string) *jsonrpc.Error {
	return sopErr(api.CodeInvalidParams, status, msg)
}

func sopDisabled() *jsonrpc.Error {
	return sopErr(api.CodeInternalError, 503, "SOP subsystem not enabled")
}

// SopActor is the engine principal a connection acts as, in upstream's terms: cli:<name> for a local socket
// client ([users] name, or the operator), http:<sha256 of the bearer> for a paired gateway device (upstream's
// subject, so its approval groups list devices so), http:<principal name> for another remote peer.
func SopActor(p *Peer) engine.Principal {
	a := engine.Principal{Kind: engine.PrincipalHTTP}
	if p.Info.Transport.Local() {
		a.Kind = engine.PrincipalCLI
	}
	if pr := p.Principal(); pr != nil {
		a.ID = pr.Name
	}
	if a.Kind == engine.PrincipalHTTP && p.Info.Subject != "" {
		a.ID = p.Info.Subject
	}
	return a
}

// SopDecider is the principal a connection answers a SOP gate as: SopActor, except that a local peer whose
// process descends from the daemon's (an agent's shell tool running `zeroclaw sop approve`) answers as an
// agent, so approval_mode = "out_of_band_required" refuses it (-32010) as it refuses sop_approve. A process
// that double-forked and was re-parented to init is no longer a descendant and is not caught.
func SopDecider(p *Peer) engine.Principal {
	a := SopActor(p)
	if p.Info.DaemonChild && a.Kind == engine.PrincipalCLI {
		a.Kind = engine.PrincipalAgent
	}
	return a
}

// sopErrors are the engine's sentinels with the code and route status upstream answers for each. They are
// not errmap rows: upstream's SOP routes answer statuses that their codes do not imply (409 and 503 for a
// -32602, 403 for a -32010), which errmap's one rule (status follows code) forbids; every sops/* method maps
// through this table, and the gateway's SOP routes send the status it names.
var sopErrors = []struct {
	err          error
	code, status int
}{
	{engine.ErrNotFound, api.CodeInvalidParams, 404},
	{engine.ErrNoManualTrigger, api.CodeInvalidParams, 404},
	{engine.ErrSOPNotFound, api.CodeInvalidParams, 404},
	{engine.ErrWrongSOP, api.CodeInvalidParams, 400},
	{engine.ErrInvalidDecision, api.CodeInvalidParams, 400},
	{engine.ErrInvalidPayload, api.CodeInvalidParams, 400},
	{engine.ErrNoSteps, api.CodeInvalidParams, 400},
	{engine.ErrDriven, api.CodeInvalidParams, 400},
	{engine.ErrNotWaiting, api.CodeInvalidParams, 409},
	{engine.ErrGateMoved, api.CodeInvalidParams, 409},
	{engine.ErrNotActive, api.CodeInvalidParams, 409},
	{engine.ErrAtCapacity, api.CodeInvalidParams, 503},
	{engine.ErrSelfApproval, api.CodeAuthRequired, 403},
	{engine.ErrNotDriver, api.CodeAuthRequired, 403},
	{engine.ErrNotAuthorized, api.CodeAuthRequired, 403},
	{engine.ErrPolicyMissing, api.CodeInternalError, 500},
	{engine.ErrClosed, api.CodeInternalError, 503},
}

// sopError maps an engine error to its wire error. The message is the detail the engine wrapped its sentinel
// with ("%w: run 'x' not found" gives upstream's "run 'x' not found"); an error no row matches is returned as
// it is (the table's -32603, logged).
func sopError(err error) error {
	var je *jsonrpc.Error
	if err == nil || errors.As(err, &je) {
		return err
	}
	for _, row := range sopErrors {
		if errors.Is(err, row.err) {
			msg := strings.TrimPrefix(err.Error(), row.err.Error()+": ")
			return sopErr(row.code, row.status, msg).WithCause(err)
		}
	}
	return err
}

// wire re-encodes an engine value as its api type: the engine's JSON is upstream's shape plus our fields,
// and the api type keeps the ones the protocol documents.
func wire[T any](v any) (T, error) {
	var out T
	b, err := json.Marshal(v)
	if err == nil {
		err = json.Unmarshal(b, &out)
	}
	return out, err
}

func (s *Server) registerSopRuns(e *engine.Engine) {
	s.register(api.MethodSopsRun, handle(api.GrantSopsExecute, func(ctx context.Context, p *Peer, params *api.SopRunParams) (api.SopRunResult, error) {
		payload := ""
		if params.Payload != nil {
			payload = strings.TrimSpace(*params.Payload)
		}
		if payload != "" && !json.Valid([]byte(payload)) {
			return api.SopRunResult{}, sopInvalid(400, "payload is not valid JSON")
		}
		if e == nil {
			return api.SopRunResult{}, sopDisabled()
		}
		if err := requireName(params.Name); err != nil {
			return api.SopRunResult{}, err
		}
		if pr := p.Principal(); pr != nil && !pr.Admin && (pr.Agents != nil || pr.Tools != nil) {
			for _, def := range e.Definitions() {
				if def.Name == params.Name {
					if err := checkSopRun(pr, s.config(), def); err != nil {
						return api.SopRunResult{}, err
					}
				}
			}
		}
		res, err := e.Start(ctx, params.Name, payload, SopActor(p))
		if err != nil {
			return api.SopRunResult{}, sopError(err)
		}
		switch res.Kind {
		case engine.Started, engine.Coalesced:
			return api.SopRunResult{RunID: res.RunID}, nil
		case engine.Skipped:
			return api.SopRunResult{}, sopInvalid(409, res.Reason)
		case engine.BlockedUnsafe:
			return api.SopRunResult{}, sopInvalid(422, res.Reason)
		case engine.Deferred:
			return api.SopRunResult{}, sopInvalid(503, res.Reason)
		}
		return api.SopRunResult{}, sopInvalid(404, fmt.Sprintf("SOP '%s' has no matching manual trigger", params.Name))
	}))
	s.register(api.MethodSopsRuns, handle(api.GrantSopsRead, func(_ context.Context, _ *Peer, params *api.SopRunsParams) (api.SopRunsResult, error) {
		if e == nil {
			return api.SopRunsResult{}, sopDisabled()
		}
		sop := ""
		if params.Sop != nil {
			sop = *params.Sop
		}
		runs, err := wire[[]api.SopRunSummary](e.Runs(sop))
		if runs == nil {
			runs = []api.SopRunSummary{}
		}
		return api.SopRunsResult{Runs: runs}, err
	}))
	s.register(api.MethodSopsRunOverlay, handle(api.GrantSopsRead, func(_ context.Context, _ *Peer, params *api.SopRunOverlayParams) (api.SopRunOverlay, error) {
		if e == nil {
			return api.SopRunOverlay{}, sopDisabled()
		}
		if err := requireLoaded(e, params.Name); err != nil {
			return api.SopRunOverlay{}, err
		}
		ov, err := e.Overlay(params.Name, params.RunID)
		if err != nil {
			return api.SopRunOverlay{}, sopError(err)
		}
		return wire[api.SopRunOverlay](ov)
	}))
	s.register(api.MethodSopsDecide, handle(api.GrantSopsApprove, func(ctx context.Context, p *Peer, params *api.SopDecideParams) (api.SopRunOverlay, error) {
		var d api.SopDecision
		if err := json.Unmarshal(params.Decision, &d); err != nil {
			return api.SopRunOverlay{}, sopInvalid(400, "decision is not a valid approval decision: "+err.Error())
		}
		if e == nil {
			return api.SopRunOverlay{}, sopDisabled()
		}
		if err := requireLoaded(e, params.Name); err != nil {
			return api.SopRunOverlay{}, err
		}
		dec := engineDecision(d)
		if params.Step != nil {
			dec.Step = int(*params.Step)
		}
		dec.GateRevision = params.GateRevision
		out, ov, err := e.Decide(ctx, params.Name, params.RunID, dec, SopDecider(p))
		if err != nil {
			return api.SopRunOverlay{}, sopError(err)
		}
		o, err := wire[api.SopRunOverlay](ov)
		o.Outcome = outcomeLabel(ctx, e, out, params.RunID)
		return o, err
	}))
	s.register(api.MethodSopsRunGet, handle(api.GrantSopsRead, func(_ context.Context, _ *Peer, params *api.SopRunIDParams) (api.SopRun, error) {
		if e == nil {
			return api.SopRun{}, sopDisabled()
		}
		if params.RunID == "" {
			return api.SopRun{}, router.InvalidParams("run_id is required")
		}
		run, _, err := e.Run(params.RunID)
		if err != nil {
			return api.SopRun{}, sopError(err)
		}
		return wireRun(run)
	}))
	s.register(api.MethodSopsCancel, handle(api.GrantSopsExecute, func(ctx context.Context, p *Peer, params *api.SopCancelParams) (api.SopRun, error) {
		if e == nil {
			return api.SopRun{}, sopDisabled()
		}
		if params.RunID == "" {
			return api.SopRun{}, router.InvalidParams("run_id is required")
		}
		if _, err := e.Cancel(ctx, params.RunID, SopActor(p), params.Reason); err != nil {
			if errors.Is(err, engine.ErrNotActive) {
				run, _, _ := e.Run(params.RunID)
				return api.SopRun{}, sopInvalid(409, fmt.Sprintf("run '%s' has already ended (%s)", params.RunID, run.Status))
			}
			return api.SopRun{}, sopError(err)
		}
		run, _, err := e.Run(params.RunID)
		if err != nil {
			return api.SopRun{}, sopError(err)
		}
		return wireRun(run)
	}))
	s.register(api.MethodSopsPending, handle(api.GrantSopsRead, func(_ context.Context, _ *Peer, _ *struct{}) (api.SopPendingResult, error) {
		if e == nil {
			return api.SopPendingResult{}, sopDisabled()
		}
		return sopPending(e), nil
	}))
	resolve := func(approve bool) method {
		return handle(api.GrantSopsApprove, func(ctx context.Context, p *Peer, params *api.SopResolveParams) (api.SopResolveResult, error) {
			if e == nil {
				return api.SopResolveResult{}, sopDisabled()
			}
			if params.RunID == "" {
				return api.SopResolveResult{}, router.InvalidParams("run_id is required")
			}
			d := engine.Decision{Kind: engine.Approve}
			if !approve {
				d = engine.Decision{Kind: engine.Deny}
				if params.Reason != nil {
					d.Reason = *params.Reason
				}
			}
			if params.Step != nil {
				d.Step = int(*params.Step)
			}
			d.GateRevision = params.GateRevision
			out, _, err := e.Decide(ctx, "", params.RunID, d, SopDecider(p))
			res := api.SopResolveResult{Outcome: outcomeLabel(ctx, e, out, params.RunID), RunID: params.RunID}
			if err != nil && !errors.Is(err, engine.ErrNotFound) {
				if code := resolveHTTPStatus(out); code >= 300 {
					return res, jsonrpc.NewError(resolveCode(code), fmt.Sprintf("%s: %s", res.Outcome, sopError(err).Error()),
						map[string]any{"outcome": res.Outcome, "run_id": params.RunID, "http_status": code})
				}
				return res, sopError(err)
			}
			if err != nil { // upstream's broker answers not_waiting for a run it does not hold
				return res, jsonrpc.NewError(api.CodeInvalidParams, fmt.Sprintf("run '%s' not found", params.RunID),
					map[string]any{"outcome": api.SopOutcomeNotWaiting, "run_id": params.RunID, "http_status": 404})
			}
			return res, nil
		})
	}
	s.register(api.MethodSopsApprove, resolve(true))
	s.register(api.MethodSopsDeny, resolve(false))
	s.register(api.MethodSopsSubscribe, router.HandleRequest(api.GrantSopsRead, func(ctx context.Context, p *Peer, _ *struct{}, req *jsonrpc.Request) (api.SopSubscribeResult, error) {
		if e == nil {
			return api.SopSubscribeResult{}, sopDisabled()
		}
		return s.subscribeSops(ctx, p, e, req)
	}))
	s.register(api.MethodSopsUnsubscribe, handle(api.GrantSopsRead, func(_ context.Context, p *Peer, params *api.SopUnsubscribeParams) (api.SopUnsubscribeResult, error) {
		if !strings.HasPrefix(params.SubscriptionID, sopSubPrefix) {
			return api.SopUnsubscribeResult{}, nil
		}
		s.feeds.mu.Lock()
		fh, ok := s.feeds.subs[p][params.SubscriptionID]
		delete(s.feeds.subs[p], params.SubscriptionID)
		s.feeds.mu.Unlock()
		if ok {
			fh.cancel()
		}
		return api.SopUnsubscribeResult{Unsubscribed: ok}, nil
	}))
}

// requireName refuses an empty SOP name as -32602 naming the field.
func requireName(name string) error {
	if strings.TrimSpace(name) == "" {
		return sopInvalid(400, "name is required")
	}
	return nil
}

// requireLoaded is upstream's first check of run-overlay and decide: the SOP named must load.
func requireLoaded(e *engine.Engine, name string) error {
	if err := requireName(name); err != nil {
		return err
	}
	for _, d := range e.Definitions() {
		if d.Name == name {
			return nil
		}
	}
	return sopInvalid(404, fmt.Sprintf("SOP '%s': not found or not loaded", name))
}

func engineDecision(d api.SopDecision) engine.Decision {
	out := engine.Decision{Kind: engine.DecisionKind(d.Kind)}
	switch d.Kind {
	case api.SopDecisionDeny:
		out.Reason = d.Text
	case api.SopDecisionAmend:
		out.Text = d.Text
	case api.SopDecisionRevise:
		out.Guidance = d.Text
	}
	return out
}

// outcomeLabel is an outcome as upstream's gateway writes it: a vote short of quorum is "pending_quorum
// (have/need)", the counts the ledger's last gate_vote recorded.
func outcomeLabel(ctx context.Context, e *engine.Engine, out engine.Outcome, runID string) string {
	if out != engine.OutcomePendingQuorum {
		return string(out)
	}
	evs, err := e.Ledger(ctx, runID)
	for i := len(evs) - 1; err == nil && i >= 0; i-- {
		if evs[i].Kind == "gate_vote" {
			var v struct{ Have, Need int }
			if json.Unmarshal(evs[i].Payload, &v) == nil && v.Need > 0 {
				return fmt.Sprintf("%s (%d/%d)", out, v.Have, v.Need)
			}
			break
		}
	}
	return string(out)
}

func wireRun(r engine.Run) (api.SopRun, error) {
	run, err := wire[api.SopRun](r)
	if run.StepResults == nil {
		run.StepResults = []api.SopStepResult{}
	}
	return run, err
}

// resolveHTTPStatus is upstream's /admin/sop/approve|deny status for an outcome: 200 resolved, 202 a vote
// short of quorum, 404 not waiting, 403 refused, 503 at capacity, 500 a policy defect.
func resolveHTTPStatus(out engine.Outcome) int {
	switch out {
	case engine.OutcomeResumed, engine.OutcomeDenied, engine.OutcomeRevised, engine.OutcomeAlreadyResolved:
		return 200
	case engine.OutcomePendingQuorum:
		return 202
	case engine.OutcomeNotWaiting:
		return 404
	case engine.OutcomeRejectedSelfApproval, engine.OutcomeNotAuthorized:
		return 403
	case engine.OutcomeDeferredAtCapacity:
		return 503
	}
	return 500
}

// resolveCode is the JSON-RPC code for a status of resolveHTTPStatus: as sops/decide's.
func resolveCode(status int) int {
	switch status {
	case 404, 503:
		return api.CodeInvalidParams
	case 403:
		return api.CodeAuthRequired
	}
	return api.CodeInternalError
}

// sopPending is upstream's /admin/sop/pending: the active runs parked on a person.
func sopPending(e *engine.Engine) api.SopPendingResult {
	out := api.SopPendingResult{Pending: []api.SopPendingRun{}}
	for _, sum := range e.Runs("") {
		if !sum.Active || !sum.Status.Parked() {
			continue
		}
		run, active, err := e.Run(sum.RunID)
		if err != nil || !active || !run.Status.Parked() {
			continue // resolved meanwhile
		}
		kind := api.SopPendingApproval
		if run.Status == engine.StatusPausedCheckpoint {
			kind = api.SopPendingCheckpoint
		}
		out.Pending = append(out.Pending, api.SopPendingRun{RunID: run.RunID, SopName: run.SopName, Step: uint32(run.CurrentStep),
			TotalSteps: uint32(run.TotalSteps), WaitingSince: run.WaitingSince, Kind: kind})
	}
	return out
}

// sopSubPrefix starts the id of a runs feed, keeping it apart from the log feeds in the same registry.
const sopSubPrefix = "sops-"

// subscribeSops starts a runs feed for p: the snapshot is read after subscribing, so a change made in between
// is sent again rather than lost (a summary is a state: a repeat is harmless).
func (s *Server) subscribeSops(ctx context.Context, p *Peer, e *engine.Engine, req *jsonrpc.Request) (api.SopSubscribeResult, error) {
	if p.conn == nil { // a gateway request (Call) has no connection to notify; /ws/sops/runs is its feed
		return api.SopSubscribeResult{}, router.InvalidParams("sops/subscribe needs a connection: use GET /ws/sops/runs over HTTP")
	}
	f := &s.feeds
	f.mu.Lock()
	if len(f.subs[p]) >= maxSubscriptionsPerConn {
		f.mu.Unlock()
		return api.SopSubscribeResult{}, router.InvalidParams(fmt.Sprintf("this connection already holds %d subscriptions", maxSubscriptionsPerConn))
	}
	if f.subs == nil {
		f.subs = map[*Peer]map[string]feedHandle{}
	}
	if f.subs[p] == nil {
		f.subs[p] = map[string]feedHandle{}
	}
	f.next++
	id := sopSubPrefix + strconv.FormatUint(f.next, 10)
	subCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	done := make(chan struct{})
	f.subs[p][id] = feedHandle{cancel: cancel, done: done}
	sub := e.Subscribe(SopFeedBuffer)
	f.mu.Unlock()
	runs, err := wire[[]api.SopRunSummary](e.Runs(""))
	if runs == nil {
		runs = []api.SopRunSummary{}
	}
	req.AfterReply(func() {
		go func() {
			defer close(done)
			defer cancel()
			defer sub.Close()
			sopFeed(subCtx, p.conn, id, sub)
		}()
	})
	return api.SopSubscribeResult{SubscriptionID: id, Runs: runs}, err
}

// sopFeed sends a runs feed's changes as notifications until ctx ends, the engine closes or the connection
// does. A subscriber whose outbound queue is full waits here alone; what the engine could not hand it
// meanwhile becomes one sops/lagged.
func sopFeed(ctx context.Context, c *jsonrpc.Conn, id string, sub *engine.Subscription) {
	for {
		select {
		case <-ctx.Done():
			return
		case sum, ok := <-sub.C:
			if !ok {
				return
			}
			if n := sub.Lagged(); n > 0 && c.Notify(api.NotifySopsLagged, api.SopLagged{SubscriptionID: id, Missed: n}) != nil {
				return
			}
			run, err := wire[api.SopRunSummary](sum)
			if err != nil || c.Notify(api.NotifySopsRun, api.SopRunChanged{SubscriptionID: id, Run: run}) != nil {
				return
			}
		}
	}
}

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
	"github.com/zeroclaw-go/zeroclaw/internal/sop/runfeed"
)

// SopRuns is what the sops/* run methods need from the SOP engine; the daemon implements it over
// internal/sop/engine. Every method may be called concurrently.
type SopRuns interface {
	// Start fires a manual trigger of the SOP name with payload (JSON text, "" for none) and drives the run
	// it starts to a terminal state in the background (upstream's sops/run does not: #10513).
	Start(ctx context.Context, name, payload string, by SopActor) (SopStart, error)
	// Runs lists the active and the retained terminal runs, newest started_at first; sop "" lists every SOP's.
	Runs(ctx context.Context, sop string) ([]api.SopRunSummary, error)
	// Run is one run's record; ok is false for a run the engine does not hold.
	Run(ctx context.Context, runID string) (run api.SopRun, ok bool, err error)
	// Check reports why the SOP name cannot be loaded now (nil: it can).
	Check(ctx context.Context, name string) error
	// Resolve applies a decision to the run's gate for by, through the engine's one approval chokepoint, and
	// drives a resumed run on.
	Resolve(ctx context.Context, runID string, d api.SopDecision, by SopActor) (SopResolved, error)
	// Cancel ends an active run as cancelled; ok is false for a run the engine does not hold, and a run that
	// already ended is ErrSopRunEnded.
	Cancel(ctx context.Context, runID, reason string, by SopActor) (run api.SopRun, ok bool, err error)
	// Feed is the hub of run changes sops/subscribe and /ws/sops/runs serve.
	Feed() *runfeed.Hub
}

// ErrSopRunEnded is SopRuns.Cancel's answer for a run already completed, failed or cancelled.
var ErrSopRunEnded = errors.New("sop: run has already ended")

// SopActor is who acts on a run, in upstream's principal terms: Source is cli (a local socket client), http (a
// gateway or WSS client), agent (a turn's sop_* tool) or system; ID names the user, device or agent.
type SopActor struct {
	Source string
	ID     string
}

// SopStart is what admission did with a manual trigger (upstream's DispatchResult).
type SopStart struct {
	Outcome string // one of the SopStart* constants
	RunID   string // started: the new run; coalesced: the run it was folded into
	Reason  string // skipped, deferred, blocked: why
}

// Admission outcomes.
const (
	SopStarted   = "started"
	SopCoalesced = "coalesced"
	SopSkipped   = "skipped"
	SopDeferred  = "deferred"
	SopBlocked   = "blocked"
	SopNoMatch   = "no_match"
)

// SopResolved is what resolving a gate did (upstream's BrokerOutcome over ResolveOutcome): Outcome is one of the
// api.SopOutcome* labels; Have and Need count a quorum's votes, Group is the group an unauthorized principal
// lacks, Policy the approval policy that is missing or unavailable, Reason why.
type SopResolved struct {
	Outcome    string
	Have, Need int
	Group      string
	Policy     string
	Reason     string
}

// Label is the outcome as upstream's gateway writes it: "pending_quorum (1/2)", "not_authorized (requires
// group 'g')", "policy_missing ('p')".
func (r SopResolved) Label() string {
	switch r.Outcome {
	case api.SopOutcomePendingQuorum:
		return fmt.Sprintf("pending_quorum (%d/%d)", r.Have, r.Need)
	case api.SopOutcomeNotAuthorized:
		return fmt.Sprintf("not_authorized (requires group '%s')", r.Group)
	case api.SopOutcomePolicyMissing:
		return fmt.Sprintf("policy_missing ('%s')", r.Policy)
	case "policy_unavailable":
		return fmt.Sprintf("policy_unavailable (%s)", r.Reason)
	}
	return r.Outcome
}

// sopErr is a sops/* error: its code and upstream's message, and in data the status upstream's gateway route
// answers for it (http_status), which the gateway's SOP routes send; other clients may ignore data.
func sopErr(code, status int, msg string) *jsonrpc.Error {
	return jsonrpc.NewError(code, msg, map[string]any{"http_status": status})
}

func sopInvalid(status int, msg string) *jsonrpc.Error {
	return sopErr(api.CodeInvalidParams, status, msg)
}

func sopDisabled() *jsonrpc.Error {
	return sopErr(api.CodeInternalError, 503, "SOP subsystem not enabled")
}

func sopRunNotFound(id string) *jsonrpc.Error {
	return sopInvalid(404, fmt.Sprintf("run '%s' not found", id))
}

// actor is the approving principal of a connection: cli for a local socket client, http for a remote one.
func actor(p *Peer) SopActor {
	a := SopActor{Source: "http"}
	if p.Info.Transport.Local() {
		a.Source = "cli"
	}
	if pr := p.Principal(); pr != nil {
		a.ID = pr.Name
	}
	return a
}

func (s *Server) registerSopRuns(r SopRuns) {
	s.register(api.MethodSopsRun, handle(api.GrantSopsExecute, func(ctx context.Context, p *Peer, params *api.SopRunParams) (api.SopRunResult, error) {
		payload := ""
		if params.Payload != nil {
			payload = strings.TrimSpace(*params.Payload)
		}
		if payload != "" && !json.Valid([]byte(payload)) {
			return api.SopRunResult{}, sopInvalid(400, "payload is not valid JSON")
		}
		if r == nil {
			return api.SopRunResult{}, sopDisabled()
		}
		if err := requireName(params.Name); err != nil {
			return api.SopRunResult{}, err
		}
		st, err := r.Start(ctx, params.Name, payload, actor(p))
		if err != nil {
			return api.SopRunResult{}, err
		}
		switch st.Outcome {
		case SopStarted, SopCoalesced:
			return api.SopRunResult{RunID: st.RunID}, nil
		case SopSkipped:
			return api.SopRunResult{}, sopInvalid(409, st.Reason)
		case SopBlocked:
			return api.SopRunResult{}, sopInvalid(422, st.Reason)
		case SopDeferred:
			return api.SopRunResult{}, sopInvalid(503, st.Reason)
		}
		return api.SopRunResult{}, sopInvalid(404, fmt.Sprintf("SOP '%s' has no matching manual trigger", params.Name))
	}))
	s.register(api.MethodSopsRuns, handle(api.GrantSopsRead, func(ctx context.Context, _ *Peer, params *api.SopRunsParams) (api.SopRunsResult, error) {
		if r == nil {
			return api.SopRunsResult{}, sopDisabled()
		}
		sop := ""
		if params.Sop != nil {
			sop = *params.Sop
		}
		runs, err := r.Runs(ctx, sop)
		if runs == nil {
			runs = []api.SopRunSummary{}
		}
		return api.SopRunsResult{Runs: runs}, err
	}))
	s.register(api.MethodSopsRunOverlay, handle(api.GrantSopsRead, func(ctx context.Context, _ *Peer, params *api.SopRunOverlayParams) (api.SopRunOverlay, error) {
		if r == nil {
			return api.SopRunOverlay{}, sopDisabled()
		}
		run, err := sopRunOf(ctx, r, params.Name, params.RunID)
		if err != nil {
			return api.SopRunOverlay{}, err
		}
		return overlay(run), nil
	}))
	s.register(api.MethodSopsDecide, handle(api.GrantSopsApprove, func(ctx context.Context, p *Peer, params *api.SopDecideParams) (api.SopRunOverlay, error) {
		var d api.SopDecision
		if err := json.Unmarshal(params.Decision, &d); err != nil {
			return api.SopRunOverlay{}, sopInvalid(400, "decision is not a valid approval decision: "+err.Error())
		}
		if r == nil {
			return api.SopRunOverlay{}, sopDisabled()
		}
		run, err := sopRunOf(ctx, r, params.Name, params.RunID)
		if err != nil {
			return api.SopRunOverlay{}, err
		}
		if run.Status != api.SopRunWaitingApproval && run.Status != api.SopRunPausedCheckpoint {
			return api.SopRunOverlay{}, sopInvalid(400, fmt.Sprintf("run '%s' is not waiting for approval or paused at a checkpoint (%s)", params.RunID, run.Status))
		}
		res, err := r.Resolve(ctx, params.RunID, d, actor(p))
		if err != nil {
			return api.SopRunOverlay{}, err
		}
		if err := decideError(params.RunID, res); err != nil {
			return api.SopRunOverlay{}, err
		}
		run, ok, err := r.Run(ctx, params.RunID)
		if err != nil {
			return api.SopRunOverlay{}, err
		}
		if !ok {
			return api.SopRunOverlay{}, sopRunNotFound(params.RunID)
		}
		o := overlay(run)
		o.Outcome = res.Label()
		return o, nil
	}))
	s.register(api.MethodSopsRunGet, handle(api.GrantSopsRead, func(ctx context.Context, _ *Peer, params *api.SopRunIDParams) (api.SopRun, error) {
		if r == nil {
			return api.SopRun{}, sopDisabled()
		}
		if params.RunID == "" {
			return api.SopRun{}, router.InvalidParams("run_id is required")
		}
		run, ok, err := r.Run(ctx, params.RunID)
		if err == nil && !ok {
			err = sopRunNotFound(params.RunID)
		}
		return withSteps(run), err
	}))
	s.register(api.MethodSopsCancel, handle(api.GrantSopsExecute, func(ctx context.Context, p *Peer, params *api.SopCancelParams) (api.SopRun, error) {
		if r == nil {
			return api.SopRun{}, sopDisabled()
		}
		if params.RunID == "" {
			return api.SopRun{}, router.InvalidParams("run_id is required")
		}
		run, ok, err := r.Cancel(ctx, params.RunID, params.Reason, actor(p))
		switch {
		case errors.Is(err, ErrSopRunEnded):
			return api.SopRun{}, sopInvalid(409, fmt.Sprintf("run '%s' has already ended (%s)", params.RunID, run.Status))
		case err == nil && !ok:
			err = sopRunNotFound(params.RunID)
		}
		return withSteps(run), err
	}))
	s.register(api.MethodSopsPending, handle(api.GrantSopsRead, func(ctx context.Context, _ *Peer, _ *struct{}) (api.SopPendingResult, error) {
		if r == nil {
			return api.SopPendingResult{}, sopDisabled()
		}
		return sopPending(ctx, r)
	}))
	resolve := func(approve bool) method {
		return handle(api.GrantSopsApprove, func(ctx context.Context, p *Peer, params *api.SopResolveParams) (api.SopResolveResult, error) {
			if r == nil {
				return api.SopResolveResult{}, sopDisabled()
			}
			if params.RunID == "" {
				return api.SopResolveResult{}, router.InvalidParams("run_id is required")
			}
			d := api.SopDecision{Kind: api.SopDecisionApprove}
			if !approve {
				d = api.SopDecision{Kind: api.SopDecisionDeny}
				if params.Reason != nil {
					d.Text = *params.Reason
				}
			}
			res, err := r.Resolve(ctx, params.RunID, d, actor(p))
			if err != nil {
				return api.SopResolveResult{}, err
			}
			out := api.SopResolveResult{Outcome: res.Label(), RunID: params.RunID}
			if code := resolveHTTPStatus(res.Outcome); code >= 300 {
				return out, jsonrpc.NewError(resolveCode(res.Outcome), fmt.Sprintf("run '%s': %s", params.RunID, out.Outcome),
					map[string]any{"outcome": out.Outcome, "run_id": params.RunID, "http_status": code})
			}
			return out, nil
		})
	}
	s.register(api.MethodSopsApprove, resolve(true))
	s.register(api.MethodSopsDeny, resolve(false))
	s.register(api.MethodSopsSubscribe, router.HandleRequest(api.GrantSopsRead, func(ctx context.Context, p *Peer, _ *struct{}, req *jsonrpc.Request) (api.SopSubscribeResult, error) {
		if r == nil {
			return api.SopSubscribeResult{}, sopDisabled()
		}
		return s.subscribeSops(ctx, p, r, req)
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
		return router.InvalidParams("name is required")
	}
	return nil
}

// sopRunOf finds a run of the SOP name with upstream's checks in upstream's order: the SOP must load, the run
// must exist and belong to it.
func sopRunOf(ctx context.Context, r SopRuns, name, runID string) (api.SopRun, error) {
	if err := requireName(name); err != nil {
		return api.SopRun{}, err
	}
	if err := r.Check(ctx, name); err != nil {
		return api.SopRun{}, sopInvalid(404, fmt.Sprintf("SOP '%s': %v", name, err))
	}
	run, ok, err := r.Run(ctx, runID)
	if err != nil {
		return api.SopRun{}, err
	}
	if !ok {
		return api.SopRun{}, sopRunNotFound(runID)
	}
	if run.SopName != name {
		return api.SopRun{}, sopInvalid(400, fmt.Sprintf("run '%s' belongs to SOP '%s', not '%s'", runID, run.SopName, name))
	}
	return run, nil
}

// overlay projects a run onto its steps, numbered 1..total_steps (steps are numbered by position).
func overlay(run api.SopRun) api.SopRunOverlay {
	steps := make([]uint32, run.TotalSteps)
	for i := range steps {
		steps[i] = uint32(i + 1)
	}
	return run.Overlay(steps)
}

func withSteps(run api.SopRun) api.SopRun {
	if run.StepResults == nil {
		run.StepResults = []api.SopStepResult{}
	}
	return run
}

// decideError is sops/decide's error for an outcome that did not resolve (upstream's handle_sops_decide);
// nil for resumed, denied, revised, already_resolved and pending_quorum.
func decideError(runID string, res SopResolved) error {
	switch res.Outcome {
	case api.SopOutcomeNotWaiting:
		return sopInvalid(409, fmt.Sprintf("run '%s' is not waiting for approval", runID))
	case api.SopOutcomeDeferred:
		return jsonrpc.NewError(api.CodeInvalidParams, fmt.Sprintf("run '%s' cannot resume now: every execution slot is full (deferred_at_capacity)", runID),
			map[string]any{"http_status": 503, "outcome": res.Outcome, "run_id": runID})
	case api.SopOutcomeRejectedSelf:
		return sopErr(api.CodeAuthRequired, 403, "approval_mode forbids this principal from clearing the gate")
	case api.SopOutcomeNotAuthorized:
		return sopErr(api.CodeAuthRequired, 403, fmt.Sprintf("not authorized: requires group '%s'", res.Group))
	case api.SopOutcomePolicyMissing:
		return sopErr(api.CodeInternalError, 500, fmt.Sprintf("approval policy '%s' is not configured (gate left waiting)", res.Policy))
	case "policy_unavailable":
		return sopErr(api.CodeInternalError, 500, "approval policy unavailable: "+res.Reason)
	}
	return nil
}

// resolveHTTPStatus is upstream's /admin/sop/approve|deny status for an outcome: 200 resolved, 202 a vote
// short of quorum, 404 not waiting, 403 refused, 503 at capacity, 500 a policy defect.
func resolveHTTPStatus(outcome string) int {
	switch outcome {
	case api.SopOutcomeResumed, api.SopOutcomeDenied, api.SopOutcomeRevised, api.SopOutcomeAlreadyResolved:
		return 200
	case api.SopOutcomePendingQuorum:
		return 202
	case api.SopOutcomeNotWaiting:
		return 404
	case api.SopOutcomeRejectedSelf, api.SopOutcomeNotAuthorized:
		return 403
	case api.SopOutcomeDeferred:
		return 503
	}
	return 500
}

// resolveCode is the JSON-RPC code of sops/approve|deny for an outcome that did not resolve: as sops/decide.
func resolveCode(outcome string) int {
	switch resolveHTTPStatus(outcome) {
	case 404, 503:
		return api.CodeInvalidParams
	case 403:
		return api.CodeAuthRequired
	}
	return api.CodeInternalError
}

func sopPending(ctx context.Context, r SopRuns) (api.SopPendingResult, error) {
	runs, err := r.Runs(ctx, "")
	if err != nil {
		return api.SopPendingResult{}, err
	}
	out := api.SopPendingResult{Pending: []api.SopPendingRun{}}
	for _, sum := range runs {
		if sum.Status != api.SopRunWaitingApproval && sum.Status != api.SopRunPausedCheckpoint {
			continue
		}
		run, ok, err := r.Run(ctx, sum.RunID)
		if err != nil {
			return api.SopPendingResult{}, err
		}
		if !ok {
			continue // ended meanwhile
		}
		kind := api.SopPendingApproval
		if run.Status == api.SopRunPausedCheckpoint {
			kind = api.SopPendingCheckpoint
		}
		out.Pending = append(out.Pending, api.SopPendingRun{RunID: run.RunID, SopName: run.SopName, Step: run.CurrentStep,
			TotalSteps: run.TotalSteps, WaitingSince: run.WaitingSince, Kind: kind})
	}
	return out, nil
}

// sopSubPrefix starts the id of a runs feed, keeping it apart from the log feeds in the same registry.
const sopSubPrefix = "sops-"

// subscribeSops starts a runs feed for p: the snapshot is read after subscribing, so a change made in between
// is sent again rather than lost (a summary is a state, so a repeat is harmless).
func (s *Server) subscribeSops(ctx context.Context, p *Peer, r SopRuns, req *jsonrpc.Request) (api.SopSubscribeResult, error) {
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
	sub := r.Feed().Subscribe()
	f.mu.Unlock()
	runs, err := r.Runs(ctx, "")
	if err != nil {
		cancel()
		close(done)
		sub.Close()
		f.mu.Lock()
		delete(f.subs[p], id)
		f.mu.Unlock()
		return api.SopSubscribeResult{}, err
	}
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
	return api.SopSubscribeResult{SubscriptionID: id, Runs: runs}, nil
}

// sopFeed sends a runs feed's changes as notifications until ctx ends or the connection does. A subscriber
// whose outbound queue is full waits here alone; what leaves the ring meanwhile becomes one sops/lagged.
func sopFeed(ctx context.Context, c *jsonrpc.Conn, id string, sub *runfeed.Sub) {
	for {
		d, err := sub.Next(ctx, 64)
		if err != nil {
			return
		}
		if d.Missed > 0 && c.Notify(api.NotifySopsLagged, api.SopLagged{SubscriptionID: id, Missed: d.Missed}) != nil {
			return
		}
		for _, run := range d.Runs {
			if ctx.Err() != nil || c.Notify(api.NotifySopsRun, api.SopRunChanged{SubscriptionID: id, Run: run}) != nil {
				return
			}
		}
	}
}

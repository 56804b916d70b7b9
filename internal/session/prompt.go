package session

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/zeroclaw-go/zeroclaw/internal/agent"
	"github.com/zeroclaw-go/zeroclaw/internal/api"
	"github.com/zeroclaw-go/zeroclaw/internal/cost"
	"github.com/zeroclaw-go/zeroclaw/internal/journal"
	"github.com/zeroclaw-go/zeroclaw/internal/logs"
)

// Prompt runs one turn on the session's queue and blocks until it ends. Events go to sink in order, and
// turn_complete is always the last one, sent before Prompt returns. A turn that was cancelled or whose provider
// failed is not an error: it is reported in the result's outcome. Errors are returned only when the turn could
// not start (unknown session, not owned, blank prompt, full queue, store or provider build failure).
//
// Attachments are the caller's to store first (WithFiles), appending their markers to the prompt: Prompt
// refuses a params value that still carries some.
func (m *Manager) Prompt(ctx context.Context, o Owner, p api.SessionPromptParams, sink Sink) (api.SessionPromptResult, error) {
	return m.prompt(ctx, o, p, sink, turnOptions{})
}

func (m *Manager) prompt(ctx context.Context, o Owner, p api.SessionPromptParams, sink Sink, opts turnOptions) (api.SessionPromptResult, error) {
	if len(p.Attachments) > 0 {
		return api.SessionPromptResult{}, fmt.Errorf("%w: attachments must be stored before the prompt runs", ErrInvalid)
	}
	if strings.TrimSpace(p.Prompt) == "" {
		return api.SessionPromptResult{}, fmt.Errorf("%w: prompt is blank", ErrInvalid)
	}
	// A session not live (dropped when idle, closed, or from before a restart) comes back from the store; a
	// durable native ACP session too (protocol.md §6.3).
	s, done, err := m.use(ctx, o, p.SessionID)
	if err != nil {
		return api.SessionPromptResult{}, err
	}
	defer done()
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return api.SessionPromptResult{}, ErrClosed
	}
	if m.sessions[s.id] != s { // dropped since it was looked up
		m.mu.Unlock()
		return api.SessionPromptResult{}, fmt.Errorf("%w: %s", ErrNotFound, s.id)
	}
	// This prompt uses the turn lock until it returns, even if the session is dropped meanwhile, so a revived
	// incarnation shares the lock with it.
	s.lock.refs++
	m.wg.Add(1)
	m.mu.Unlock()
	defer m.wg.Done()
	defer m.unrefLock(s.key, s.lock)

	tctx, cancel := context.WithCancel(ctx)
	defer cancel()
	t := &turn{connID: o.ConnID, cancel: cancel}
	if err := s.enqueue(t, m.now()); err != nil {
		return api.SessionPromptResult{}, err
	}
	defer func() { s.dequeue(t, m.now()); m.signalSlot() }()
	if err := s.acquire(tctx, t, m.o.Clock.NewTimer(m.o.LockTimeout), m.o.LockTimeout); err != nil {
		return api.SessionPromptResult{}, err
	}
	defer s.release()
	return m.runTurn(tctx, o, s, p, sink, opts)
}

// runTurn runs the turn that holds s's lock: it builds the turn, then runs it.
func (m *Manager) runTurn(ctx context.Context, o Owner, s *session, p api.SessionPromptParams, sink Sink, opts turnOptions) (api.SessionPromptResult, error) {
	bt, err := m.buildTurn(ctx, o, s, p.Prompt, sink, opts)
	if err != nil {
		return api.SessionPromptResult{}, err
	}
	bt.generation = p.ClientTurnGeneration
	return m.run(ctx, bt, p.Prompt)
}

// builtTurn is one turn of a session, built and ready to run.
type builtTurn struct {
	s       *session
	tr      *agent.Turn
	j       turnJournal
	events  *turnEvents
	id      string    // the turn's id
	started time.Time // when it was built
	budget  int       // the agent's max_context_tokens: an ACP session's context is compacted past it
	// generation is the prompt's client_turn_generation, echoed in turn_complete.
	generation *uint64
}

// buildTurn builds the turn of s for prompt: the agent's profile narrowed by opts, its provider, tools, memory
// and system prompt, the journal with the history loaded from it, the events that go to sink and the meter.
// Nothing is stored yet: the turn starts when it runs.
func (m *Manager) buildTurn(ctx context.Context, o Owner, s *session, prompt string, sink Sink, opts turnOptions) (*builtTurn, error) {
	cfg := m.o.Config()
	prof, err := agent.Resolve(cfg, s.alias, m.o.InstallRoot)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	opts.restrict(&prof.Policy)
	restrictTools(&prof.Policy, o)
	if m.o.DataDir != "" {
		prof.Policy.Protected.Roots = append(prof.Policy.Protected.Roots, m.o.DataDir)
	}
	files := m.readAgentFiles(cfg, s.alias, prof) // read beside the history load and the memory handle
	defer files()
	prov, err := m.provider(cfg, s, prof.ProviderRef)
	if err != nil {
		return nil, fmt.Errorf("session: prompt %s: %w", s.id, err)
	}
	bt := &builtTurn{s: s, id: m.o.NewID(), started: m.now(), budget: prof.MaxContextTokens}
	bt.j = m.journalOf(s, bt.id, bt.started)
	// The history loads while the memory handle, the recall and the system prompt are prepared; it is joined
	// before the turn runs, so it never sees the prompt the turn's start stores.
	type loaded struct {
		history []agent.Message
		err     error
	}
	loading := make(chan loaded, 1)
	go func() {
		h, err := bt.j.Load(ctx)
		loading <- loaded{h, err}
	}()
	joinHistory := func() ([]agent.Message, error) {
		l := <-loading
		if l.err != nil {
			return nil, fmt.Errorf("session: prompt %s: %w", s.id, l.err)
		}
		return l.history, nil
	}

	mem, err := m.memoryFor(ctx, s, o, bt.id)
	if err != nil {
		_, _ = joinHistory()
		return nil, err
	}
	bt.events = &turnEvents{m: m, s: s, sink: sink, turnID: bt.id}
	mcpTools := m.turnMCP(ctx, cfg, s, prompt)
	if opts.extra != nil {
		if mcpTools == nil {
			mcpTools = opts.extra
		} else {
			mcpTools = externals{opts.extra, mcpTools}
		}
	}
	if mcpTools != nil {
		prof.Policy.External = mcpTools
	}
	tr := &agent.Turn{
		Provider:        prov,
		Policy:          prof.Policy,
		Journal:         startLogged{bt.j, bt.logStart(m)},
		Events:          bt.events,
		Approver:        opts.approverOr(approver{s: s, connID: o.ConnID, clock: m.o.Clock, maxRisk: capOf(o)}),
		SessionID:       s.id,
		Limits:          agent.LimitsFrom(cfg.Limits),
		ContextWindow:   prof.ContextWindow,
		ApprovalTimeout: prof.ApprovalTimeout,
		NewID:           m.o.NewID,
		Logger:          m.log,
	}
	bt.tr = tr
	tr.ToolEnv.Workspace = s.workspace
	tr.ToolEnv.Now = m.o.Clock.Now
	tr.ToolEnv.Environ = environ(prof.Env, o.Env)
	deferred := ""
	if mcpTools != nil {
		tr.ToolEnv.External = mcpTools
		deferred = mcpTools.PromptSection(ctx)
	}
	if mem != nil {
		mem.equip(tr)
		tr.StartMemory(ctx, prompt) // the recall runs while the rest of the turn is set up and the prompt stored
	}
	if m.o.Cron != nil {
		tr.ToolEnv.Cron = restrictCron(m.o.Cron(s.alias), prof.Policy, o)
	}
	if m.o.Delegate != nil {
		tr.ToolEnv.Delegate = restrictDelegate(m.o.Delegate(s.alias), prof.Policy, o)
	}
	if m.o.SOPs != nil {
		tr.ToolEnv.SOPs = m.o.SOPs(s.alias)
	}

	skillSection := m.turnSkills(cfg, s, prof, &tr.ToolEnv, files())
	tr.System = buildSystemPrompt(promptParts{
		now:        m.now(),
		identity:   files().identity,
		workDir:    s.workspace,
		configured: prof.System,
		level:      prof.Policy.Level,
		offered:    offeredTools(prof, tr.ToolEnv),
		skills:     skillSection,
		deferred:   deferred,
		model:      modelOf(cfg, prof.ProviderRef),
	})
	if m.o.Cost != nil {
		tr.Meter = costMeter{t: m.o.Cost, sessionID: s.id, alias: s.alias}
	}
	if tr.History, err = joinHistory(); err != nil {
		tr.Abandon()
		return nil, err
	}
	return bt, nil
}

// logStart returns what publishes the turn's start once its journal has begun it.
func (bt *builtTurn) logStart(m *Manager) func() {
	return func() {
		m.o.Logs.Publish(logs.Entry{Category: logs.CategoryAgent, Action: "start", TraceID: bt.id,
			Message: "turn started", Zeroclaw: bt.s.attribution()})
		m.log.Debug("turn start", "session", bt.s.id, "turn", bt.id)
	}
}

// run runs a built turn for prompt and closes it: the journal ends it (an ACP session's context is compacted
// when it passed its budget), the runtime log gets its outcome and the client its turn_complete, the last event.
// A turn that did not start is an error; any other outcome is the result.
func (m *Manager) run(ctx context.Context, bt *builtTurn, prompt string) (api.SessionPromptResult, error) {
	s := bt.s
	durable := context.WithoutCancel(ctx) // state writes must land even when the turn is cancelled
	outcome, content, runErr := bt.tr.Run(ctx, prompt)
	if se := (*agent.StartError)(nil); errors.As(runErr, &se) {
		return api.SessionPromptResult{}, fmt.Errorf("session: prompt %s: %w", s.id, se.Err)
	}
	if err := bt.j.End(durable, runErr == nil); err != nil && runErr == nil {
		outcome, runErr = api.OutcomeFailed, fmt.Errorf("session: store turn %s of %s: %w", bt.id, s.id, err)
	}
	if aj, ok := bt.j.(*journal.ACP); ok {
		if dropped, turns := aj.Compact(durable, bt.budget); dropped > 0 {
			bt.events.Update(api.SessionUpdate{Type: api.UpdateHistoryTrimmed, DroppedMessages: &dropped, KeptTurns: &turns,
				Reason: journal.CompactReason})
		}
	}
	done := api.SessionUpdate{Type: api.UpdateTurnComplete, Outcome: outcome, Content: &content, ClientTurnGeneration: bt.generation}
	ended := logs.Entry{Category: logs.CategoryAgent, Action: "complete", Outcome: logs.OutcomeSuccess, TraceID: bt.id,
		Message: "turn " + outcome, Zeroclaw: s.attribution("duration_ms", m.now().Sub(bt.started).Milliseconds())}
	if runErr != nil {
		done.Error = runErr.Error()
		m.log.Info("turn failed", "session", s.id, "turn", bt.id, "err", runErr)
		ended.Action, ended.Outcome, ended.Severity = "fail", logs.OutcomeFailure, logs.SeverityWarn
		ended.Attributes = map[string]any{"error": runErr.Error()}
		if pe := (*agent.ProviderError)(nil); errors.As(runErr, &pe) {
			ended.Attributes["error_kind"] = "provider"
		}
	} else if outcome == api.OutcomeCancelled {
		ended.Action, ended.Outcome = "cancel", ""
	}
	m.o.Logs.Publish(ended)
	s.finishActive() // a cancel after turn_complete finds the session idle
	bt.events.Update(done)
	return api.SessionPromptResult{SessionID: s.id, StopReason: api.StopReason(outcome), Outcome: outcome, Content: content}, nil
}

// attribution is the zeroclaw block of s's runtime events: its agent and key, then extra key/value pairs.
func (s *session) attribution(extra ...any) map[string]any {
	zc := map[string]any{"agent_alias": s.alias, "session_key": s.key}
	for i := 0; i+1 < len(extra); i += 2 {
		zc[extra[i].(string)] = extra[i+1]
	}
	return zc
}

// turnEvents is a turn's agent.Events: each update is stamped with the session id, logged as the runtime event
// it stands for and sent to the sink; questions go to the sink.
type turnEvents struct {
	m      *Manager
	s      *session
	sink   Sink
	turnID string
}

func (e *turnEvents) Update(ev api.SessionUpdate) {
	ev.SessionID = e.s.id
	e.m.logUpdate(ev, e.turnID, e.s.attribution)
	e.sink.Update(ev)
}

func (e *turnEvents) Elicit(ctx context.Context, p api.ElicitationParams) (api.ElicitationResult, error) {
	res, err := e.sink.Elicit(ctx, p)
	if errors.Is(err, ErrNoElicitation) {
		return res, fmt.Errorf("%w: %w", agent.ErrNoElicitation, err)
	}
	return res, err
}

// costMeter is a turn's agent.Meter: the cost tracker, for the turn's session and agent.
type costMeter struct {
	t                *cost.Tracker
	sessionID, alias string
}

func (c costMeter) Check() (string, error) { return c.t.Check(c.alias) }

func (c costMeter) Record(ctx context.Context, u agent.Usage) error {
	return c.t.Record(ctx, c.sessionID, c.alias, cost.Usage{Model: u.Model, InputTokens: u.InputTokens, OutputTokens: u.OutputTokens})
}

// capOf is the approval cap of o: none for the owner.
func capOf(o Owner) string {
	if o.Admin {
		return ""
	}
	return o.MaxApproveRisk
}

// environ renders the tool environment as sorted KEY=value pairs: the agent's configured env, then the
// client's forwarded env (initialize's env, local admin only), which wins for the same key.
func environ(configured, forwarded map[string]string) []string {
	merged := make(map[string]string, len(configured)+len(forwarded))
	for _, env := range []map[string]string{configured, forwarded} {
		for k, v := range env {
			if k == "" || strings.ContainsAny(k, "=\x00") || strings.Contains(v, "\x00") {
				continue
			}
			merged[k] = v
		}
	}
	out := make([]string, 0, len(merged))
	for k, v := range merged {
		out = append(out, k+"="+v)
	}
	slices.Sort(out)
	return out
}

// logUpdate publishes the runtime event a turn's update stands for: tool calls and results, approval requests
// (a budget notice is logged by the cost tracker, once per period). Prompts, answers and tool bodies are not logged; the event carries names and outcomes.
func (m *Manager) logUpdate(ev api.SessionUpdate, turnID string, attribution func(...any) map[string]any) {
	e := logs.Entry{TraceID: turnID}
	switch ev.Type {
	case api.UpdateToolCall:
		e.Category, e.Action, e.Message = logs.CategoryTool, "invoke", "tool call "+ev.Name
		e.SpanID, e.Zeroclaw = ev.ToolCallID, attribution("tool", ev.Name)
	case api.UpdateToolResult:
		e.Category, e.Action, e.Outcome, e.Message = logs.CategoryTool, "complete", logs.OutcomeSuccess, "tool result "+ev.Name
		if ev.IsError {
			e.Outcome, e.Severity = logs.OutcomeFailure, logs.SeverityWarn
		}
		e.SpanID, e.Zeroclaw = ev.ToolCallID, attribution("tool", ev.Name)
	case api.UpdateApprovalRequest:
		e.Category, e.Action, e.Message = logs.CategoryTool, "defer", "approval requested for "+ev.ToolName
		e.Zeroclaw = attribution("tool", ev.ToolName)
		e.Attributes = map[string]any{"request_id": ev.RequestID, "timeout_secs": ev.TimeoutSecs}
	default:
		return
	}
	m.o.Logs.Publish(e)
}

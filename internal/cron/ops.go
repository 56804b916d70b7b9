package cron

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/zeroclaw-go/zeroclaw/internal/agent"
	"github.com/zeroclaw-go/zeroclaw/internal/api"
	"github.com/zeroclaw-go/zeroclaw/internal/config"
	"github.com/zeroclaw-go/zeroclaw/internal/store"
	"github.com/zeroclaw-go/zeroclaw/internal/tools"
)

// AddRequest describes a new job.
type AddRequest struct {
	Agent    string
	Schedule api.CronSchedule
	Name     string
	// JobType is shell or agent; "" means agent when only a prompt is given, else shell.
	JobType           string
	Command           string
	Prompt            string
	SessionTarget     string // isolated (default), main, or a session id
	Model             string
	AllowedTools      []string
	DeleteAfterRun    *bool // nil: true for an `at` schedule, else false
	UsesMemory        *bool // nil: true
	Delivery          *api.CronDelivery
	ShellOutputFormat string // wrapped (default) or raw
}

func invalidf(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrInvalid, fmt.Sprintf(format, args...))
}

// Add validates and stores a new imperative job (creating jobs.db if needed) and returns it.
func (s *Scheduler) Add(ctx context.Context, r AddRequest) (api.CronJob, error) {
	cfg := s.o.Config()
	now := s.o.Clock.Now()
	r.Agent = strings.TrimSpace(r.Agent)
	if r.Agent == "" {
		return api.CronJob{}, invalidf("agent is required: a job runs as one configured agent")
	}
	if _, ok := cfg.Agents[r.Agent]; !ok {
		return api.CronJob{}, invalidf("unknown agent %q", r.Agent)
	}
	if r.JobType == "" {
		r.JobType = TypeShell
		if strings.TrimSpace(r.Command) == "" && strings.TrimSpace(r.Prompt) != "" {
			r.JobType = TypeAgent
		}
	}
	r.JobType = strings.ToLower(r.JobType)
	j := store.CronJob{ID: s.o.NewID(), JobType: r.JobType, SessionTarget: TargetIsolated, Enabled: true,
		CreatedAt: now, UsesMemory: r.UsesMemory == nil || *r.UsesMemory, AgentAlias: r.Agent,
		Source: store.CronSourceImperative, ShellOutputFormat: FormatWrapped}
	switch r.JobType {
	case TypeShell:
		if strings.TrimSpace(r.Command) == "" {
			return api.CronJob{}, invalidf("a shell job needs a command")
		}
		j.Command = r.Command
		if err := s.checkCommand(cfg, r.Agent, r.Command); err != nil {
			return api.CronJob{}, err
		}
	case TypeAgent:
		if strings.TrimSpace(r.Prompt) == "" {
			return api.CronJob{}, invalidf("an agent job needs a prompt")
		}
		if r.ShellOutputFormat != "" && r.ShellOutputFormat != FormatWrapped {
			return api.CronJob{}, invalidf("shell_output_format is for shell jobs only")
		}
		j.Prompt = &r.Prompt
	default:
		return api.CronJob{}, invalidf("job_type %q: want shell or agent", r.JobType)
	}
	switch r.ShellOutputFormat {
	case "", FormatWrapped:
	case FormatRaw:
		j.ShellOutputFormat = FormatRaw
	default:
		return api.CronJob{}, invalidf("shell_output_format %q: want wrapped or raw", r.ShellOutputFormat)
	}
	if r.SessionTarget != "" {
		j.SessionTarget = r.SessionTarget
	}
	if r.Name != "" {
		j.Name = &r.Name
	}
	if r.Model != "" {
		j.Model = &r.Model
	}
	if len(r.AllowedTools) > 0 {
		b, _ := json.Marshal(r.AllowedTools)
		j.AllowedTools = string(b)
	}
	delivery, err := encodeDelivery(r.Delivery)
	if err != nil {
		return api.CronJob{}, err
	}
	j.Delivery = delivery
	if err := s.setSchedule(&j, r.Schedule, now); err != nil {
		return api.CronJob{}, err
	}
	j.DeleteAfterRun = r.Schedule.Kind == api.ScheduleAt
	if r.DeleteAfterRun != nil {
		j.DeleteAfterRun = *r.DeleteAfterRun
	}
	if err := s.o.Store.Add(ctx, j); err != nil {
		return api.CronJob{}, err
	}
	s.Kick()
	return s.Get(ctx, j.ID)
}

// checkCommand refuses at creation a command the agent's policy refuses outright (blocked command, shell not
// offered); a command that would need approval is accepted here and refused when it runs.
func (s *Scheduler) checkCommand(cfg *config.Config, alias, command string) error {
	prof, err := agent.Resolve(cfg, alias, s.o.InstallRoot)
	if err != nil {
		return invalidf("agent %s: %v", alias, err)
	}
	args, _ := json.Marshal(map[string]string{"command": command})
	if d := prof.Policy.Decide(tools.Call{Name: tools.NameShell, Arguments: args}, prof.Workspace); d.Verdict == tools.Refuse {
		return invalidf("%s %s", policyRefusal, d.Reason)
	}
	return nil
}

// setSchedule validates sc at now and sets the job's schedule, expression and next run.
func (s *Scheduler) setSchedule(j *store.CronJob, sc api.CronSchedule, now time.Time) error {
	if err := s.sched.Validate(sc, now); err != nil {
		return fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	next, err := s.sched.Next(sc, now)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	if sc.Kind == api.ScheduleAt {
		at, _ := parseAt(sc.At)
		sc.At = wireTime(at) // stored as upstream stores it (UTC)
	}
	enc, err := encodeSchedule(sc)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	j.Schedule, j.NextRun, j.Expression = enc, next, ""
	if sc.Kind == api.ScheduleCron {
		j.Expression = sc.Expr
	}
	return nil
}

func encodeDelivery(d *api.CronDelivery) (string, error) {
	v := api.CronDelivery{Mode: "none", BestEffort: true}
	if d != nil {
		v = *d
		switch strings.ToLower(v.Mode) {
		case "", "none":
			v.Mode = "none"
		case "announce":
			return "", invalidf("delivery mode announce: this daemon has no channels to announce on")
		default:
			return "", invalidf("unsupported delivery mode %q", d.Mode)
		}
	}
	b, err := json.Marshal(v)
	return string(b), err
}

// List returns every job, soonest first.
func (s *Scheduler) List(ctx context.Context) ([]api.CronJob, error) {
	jobs, err := s.o.Store.List(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]api.CronJob, 0, len(jobs))
	for _, j := range jobs {
		out = append(out, Wire(j))
	}
	return out, nil
}

// ListPage is cron/list: at most p.Limit jobs (api.DefaultCronListLimit when 0, never more than
// api.MaxCronListLimit) from p.Offset on, soonest first, of the agents in agents (every agent's when nil), with
// has_more and next_offset when more follow. Its cost is the page's, not the number of jobs stored.
func (s *Scheduler) ListPage(ctx context.Context, agents []string, p api.CronListParams) (api.CronListResult, error) {
	limit := p.Limit
	if limit <= 0 {
		limit = api.DefaultCronListLimit
	}
	limit = min(limit, api.MaxCronListLimit)
	offset := max(p.Offset, 0)
	jobs, err := s.o.Store.ListPage(ctx, agents, offset, limit+1)
	if err != nil {
		return api.CronListResult{}, err
	}
	out := api.CronListResult{Jobs: make([]api.CronJob, 0, min(len(jobs), limit))}
	if len(jobs) > limit {
		out.HasMore, out.NextOffset = true, offset+limit
		jobs = jobs[:limit]
	}
	for _, j := range jobs {
		out.Jobs = append(out.Jobs, Wire(j))
	}
	return out, nil
}

// Get returns job id, or an error wrapping ErrNotFound.
func (s *Scheduler) Get(ctx context.Context, id string) (api.CronJob, error) {
	j, err := s.o.Store.Get(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return api.CronJob{}, fmt.Errorf("%w: %s", ErrNotFound, id)
	}
	if err != nil {
		return api.CronJob{}, err
	}
	return Wire(j), nil
}

// Resolve maps an id, or a case-insensitive name among agent's jobs (any agent's when agent is ""), to an id.
func (s *Scheduler) Resolve(ctx context.Context, idOrName, agent string) (string, error) {
	if _, err := s.o.Store.Get(ctx, idOrName); err == nil {
		return idOrName, nil
	}
	jobs, err := s.o.Store.List(ctx)
	if err != nil {
		return "", err
	}
	var ids []string
	for _, j := range jobs {
		if j.Name != nil && strings.EqualFold(*j.Name, idOrName) && (agent == "" || j.AgentAlias == agent) {
			ids = append(ids, j.ID)
		}
	}
	switch len(ids) {
	case 0:
		return "", fmt.Errorf("%w: no cron job with id or name %q", ErrNotFound, idOrName)
	case 1:
		return ids[0], nil
	}
	return "", invalidf("ambiguous name %q: %d jobs have it; use the job id", idOrName, len(ids))
}

// Owned returns the jobs agent owns (its agent_alias, or its cron_jobs list for a declarative job), soonest
// first: what the agent's cron tools may see.
func (s *Scheduler) Owned(ctx context.Context, agent string) ([]api.CronJob, error) {
	jobs, err := s.o.Store.List(ctx)
	if err != nil {
		return nil, err
	}
	cfg := s.o.Config()
	out := []api.CronJob{}
	for _, j := range jobs {
		if alias, err := owner(cfg, j); err == nil && alias == agent {
			out = append(out, Wire(j))
		}
	}
	return out, nil
}

// ResolveOwned is Resolve limited to the jobs agent owns: another agent's job is not found, by id or by name.
func (s *Scheduler) ResolveOwned(ctx context.Context, idOrName, agent string) (string, error) {
	notFound := fmt.Errorf("%w: no cron job with id or name %q", ErrNotFound, idOrName)
	id, err := s.Resolve(ctx, idOrName, agent)
	if errors.Is(err, ErrNotFound) {
		return "", notFound
	}
	if err != nil {
		return "", err
	}
	j, err := s.o.Store.Get(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return "", notFound
	}
	if err != nil {
		return "", err
	}
	if alias, err := owner(s.o.Config(), j); err != nil || alias != agent {
		return "", notFound
	}
	return id, nil
}

// Patch changes a job. Fields left nil keep their value; a new schedule recomputes next_run.
type Patch struct {
	Name           *string
	Schedule       *api.CronSchedule
	Command        *string
	Prompt         *string
	Enabled        *bool
	Model          *string
	SessionTarget  *string
	DeleteAfterRun *bool
	AllowedTools   *[]string // an empty list clears the allowlist
	UsesMemory     *bool
	Delivery       *api.CronDelivery
}

// Patch applies p to job id and returns the job.
func (s *Scheduler) Patch(ctx context.Context, id string, p Patch) (api.CronJob, error) {
	j, err := s.o.Store.Get(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return api.CronJob{}, fmt.Errorf("%w: %s", ErrNotFound, id)
	}
	if err != nil {
		return api.CronJob{}, err
	}
	cfg := s.o.Config()
	if p.Schedule != nil {
		if err := s.setSchedule(&j, *p.Schedule, s.o.Clock.Now()); err != nil {
			return api.CronJob{}, err
		}
	}
	if p.Command != nil {
		if j.JobType == TypeShell {
			if strings.TrimSpace(*p.Command) == "" {
				return api.CronJob{}, invalidf("a shell job needs a command")
			}
			if alias, err := owner(cfg, j); err == nil {
				if err := s.checkCommand(cfg, alias, *p.Command); err != nil {
					return api.CronJob{}, err
				}
			}
		}
		j.Command = *p.Command
	}
	if p.Prompt != nil {
		if j.JobType == TypeAgent && strings.TrimSpace(*p.Prompt) == "" {
			return api.CronJob{}, invalidf("an agent job needs a prompt")
		}
		j.Prompt = p.Prompt
	}
	if p.Name != nil {
		j.Name = p.Name
	}
	if p.Enabled != nil {
		j.Enabled = *p.Enabled
	}
	if p.Model != nil {
		j.Model = p.Model
	}
	if p.SessionTarget != nil {
		j.SessionTarget = *p.SessionTarget
	}
	if p.DeleteAfterRun != nil {
		j.DeleteAfterRun = *p.DeleteAfterRun
	}
	if p.AllowedTools != nil {
		j.AllowedTools = ""
		if len(*p.AllowedTools) > 0 {
			b, _ := json.Marshal(*p.AllowedTools)
			j.AllowedTools = string(b)
		}
	}
	if p.UsesMemory != nil {
		j.UsesMemory = *p.UsesMemory
	}
	if p.Delivery != nil {
		if j.Delivery, err = encodeDelivery(p.Delivery); err != nil {
			return api.CronJob{}, err
		}
	}
	if err := s.o.Store.Update(ctx, j, j.Source == store.CronSourceDeclarative); err != nil {
		return api.CronJob{}, err
	}
	s.Kick()
	return s.Get(ctx, id)
}

// Delete removes job id and its runs.
func (s *Scheduler) Delete(ctx context.Context, id string) error {
	// A job declared in config.toml would come back at the next reconcile (upstream deletes the row and the
	// job returns at the next start): refuse, and say where it is declared.
	if j, err := s.o.Store.Get(ctx, id); err == nil && j.Source == store.CronSourceDeclarative {
		if _, declared := s.o.Config().Cron[id]; declared {
			return fmt.Errorf("%w: job %s is declared in config.toml as [cron.%s]; remove that entry (the job goes at the next reload) or set its enabled = false", ErrInvalid, id, id)
		}
	}
	ok, err := s.o.Store.Delete(ctx, id)
	if err != nil {
		return err
	}
	if !ok {
		return fmt.Errorf("%w: %s", ErrNotFound, id)
	}
	return nil
}

// Runs returns the newest limit runs of job id (limit 0: 20), newest first.
func (s *Scheduler) Runs(ctx context.Context, id string, limit int) ([]api.CronRun, error) {
	if limit <= 0 {
		limit = defaultRunsLimit
	}
	runs, err := s.o.Store.Runs(ctx, id, limit)
	if err != nil {
		return nil, err
	}
	out := make([]api.CronRun, 0, len(runs))
	for _, r := range runs {
		out = append(out, WireRun(r))
	}
	return out, nil
}

// Trigger runs job id now and waits for it (upstream's manual run: the run is recorded with last_*, the
// schedule is left as it is). A job running already is ErrBusy.
func (s *Scheduler) Trigger(ctx context.Context, id string) (api.CronTriggerResult, error) {
	j, err := s.o.Store.Get(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return api.CronTriggerResult{}, fmt.Errorf("%w: %s", ErrNotFound, id)
	}
	if err != nil {
		return api.CronTriggerResult{}, err
	}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return api.CronTriggerResult{}, errors.New("cron: scheduler stopped")
	}
	s.wg.Add(1)
	s.mu.Unlock()
	defer s.wg.Done()
	started := s.o.Clock.Now()
	cfg := s.o.Config()
	claim := store.Claim{JobID: id, Now: started, KeepRuns: cfg.Scheduler.MaxRunHistory}
	sh, shared := s.o.Store.(Shared)
	if shared {
		// A manual run is a slot of its own, so a daemon that dies during it has its run settled too.
		claim.Slot = id + slotSep + manualSlot + s.o.NewID()
		if res, err := sh.ClaimSlot(ctx, claim.Slot, s.claimTTL()); err != nil {
			return api.CronTriggerResult{}, err
		} else if res != SlotClaimed {
			return api.CronTriggerResult{}, fmt.Errorf("%w: %s", ErrBusy, id)
		}
	}
	runID, ok, err := s.o.Store.ClaimRun(ctx, claim)
	if (err != nil || !ok) && shared {
		if derr := sh.DropSlot(context.WithoutCancel(ctx), claim.Slot, "not run: the job is running already"); derr != nil {
			s.log.Warn("unrun slot not ended", "job", id, "slot", claim.Slot, "err", derr)
		}
	}
	if err != nil {
		return api.CronTriggerResult{}, err
	}
	if !ok {
		return api.CronTriggerResult{}, fmt.Errorf("%w: %s", ErrBusy, id)
	}
	res, finished := s.runClaimed(ctx, j, runID, started, true, claim.Slot)
	status := store.CronStatusOK
	if !res.success {
		status = store.CronStatusError
	}
	return api.CronTriggerResult{ID: id, Success: res.success, Status: status, Output: store.CapCronOutput(res.output),
		DurationMS: finished.Sub(started).Milliseconds(), StartedAt: wireTime(started), FinishedAt: wireTime(finished)}, nil
}

// Settings returns the [scheduler] section in force.
func (s *Scheduler) Settings() api.CronSettings {
	c := s.o.Config().Scheduler
	return api.CronSettings{Enabled: c.Enabled, MaxTasks: c.MaxTasks, MaxConcurrent: c.MaxConcurrent,
		CatchUpOnStartup: c.CatchUpOnStartup, MaxRunHistory: c.MaxRunHistory}
}

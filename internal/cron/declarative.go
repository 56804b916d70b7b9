package cron

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/zeroclaw-go/zeroclaw/internal/api"
	"github.com/zeroclaw-go/zeroclaw/internal/config"
	"github.com/zeroclaw-go/zeroclaw/internal/store"
)

// Reconcile brings the declarative jobs of jobs.db in line with [cron.<id>] (upstream's sync_declarative_jobs):
// a new entry is inserted as source 'declarative' for the agent whose cron_jobs lists it; an existing one gets
// the config's definition and keeps its run state, and its next_run unless the schedule changed; rows whose
// entry is gone are deleted. An invalid entry is skipped with a warning (upstream stops at it). With no entries
// and no jobs.db nothing is created. Called at scheduler start and on config reload.
func (s *Scheduler) Reconcile(ctx context.Context) error {
	cfg := s.o.Config()
	existing, err := s.o.Store.List(ctx)
	if err != nil {
		return err
	}
	byID := map[string]store.CronJob{}
	for _, j := range existing {
		byID[j.ID] = j
	}
	var errs []error
	for _, j := range existing {
		if _, ok := cfg.Cron[j.ID]; j.Source == store.CronSourceDeclarative && !ok {
			if _, err := s.o.Store.Delete(ctx, j.ID); err != nil {
				errs = append(errs, err)
				continue
			}
			s.log.Info("removed declarative job no longer in config", "job", j.ID)
		}
	}
	now := s.o.Clock.Now()
	for _, id := range slices.Sorted(func(yield func(string) bool) {
		for id := range cfg.Cron {
			if !yield(id) {
				return
			}
		}
	}) {
		d := cfg.Cron[id]
		j, err := s.declared(cfg, id, d)
		if err != nil {
			s.log.Warn("declarative job skipped", "job", id, "err", err)
			continue
		}
		sc, _ := scheduleOf(j)
		old, exists := byID[id]
		if exists {
			if old.Source != store.CronSourceDeclarative {
				s.log.Warn("declarative job skipped: an imperative job has its id", "job", id)
				continue
			}
			j.NextRun = old.NextRun
			if j.AgentAlias == "" {
				j.AgentAlias = old.AgentAlias
			}
			if old.Schedule != j.Schedule {
				if j.NextRun, err = s.sched.Next(sc, now); err != nil {
					s.log.Warn("declarative job skipped", "job", id, "err", err)
					continue
				}
			}
			if err := s.o.Store.Update(ctx, j, true); err != nil {
				errs = append(errs, err)
			}
			continue
		}
		if j.AgentAlias == "" {
			s.log.Warn("declarative job skipped: no [agents.<alias>] cron_jobs entry lists it", "job", id)
			continue
		}
		if j.NextRun, err = s.sched.Next(sc, now); err != nil {
			s.log.Warn("declarative job skipped", "job", id, "err", err)
			continue
		}
		j.CreatedAt = now
		if err := s.o.Store.Add(ctx, j); err != nil {
			errs = append(errs, err)
			continue
		}
		s.log.Info("inserted declarative job from config", "job", id)
	}
	s.Kick()
	return errors.Join(errs...)
}

// declared builds the row of [cron.<id>] (without next_run and created_at).
func (s *Scheduler) declared(cfg *config.Config, id string, d config.CronJobDecl) (store.CronJob, error) {
	jobType := strings.ToLower(d.JobType)
	switch jobType {
	case TypeShell:
		if strings.TrimSpace(d.Command) == "" {
			return store.CronJob{}, fmt.Errorf("shell job requires a non-empty command")
		}
	case TypeAgent:
		if strings.TrimSpace(d.Prompt) == "" {
			return store.CronJob{}, fmt.Errorf("agent job requires a non-empty prompt")
		}
		if d.ShellOutputFormat != "" && d.ShellOutputFormat != FormatWrapped {
			return store.CronJob{}, fmt.Errorf("shell_output_format is shell-only")
		}
	default:
		return store.CronJob{}, fmt.Errorf("invalid job_type %q, expected shell or agent", d.JobType)
	}
	sc := api.CronSchedule{Kind: d.Schedule.Kind, Expr: d.Schedule.Expr, TZ: d.Schedule.TZ, EveryMS: int64(d.Schedule.EveryMS)}
	if sc.Kind == "" {
		sc.Kind = api.ScheduleCron
	}
	if sc.Kind == api.ScheduleAt {
		at, err := parseAt(d.Schedule.At)
		if err != nil {
			return store.CronJob{}, err
		}
		sc.At = wireTime(at)
	}
	if _, err := s.sched.Next(sc, s.o.Clock.Now()); err != nil && sc.Kind != api.ScheduleAt {
		return store.CronJob{}, err
	}
	enc, err := encodeSchedule(sc)
	if err != nil {
		return store.CronJob{}, err
	}
	j := store.CronJob{ID: id, Command: d.Command, Schedule: enc, JobType: jobType, SessionTarget: TargetIsolated,
		Enabled: d.Enabled, DeleteAfterRun: sc.Kind == api.ScheduleAt, UsesMemory: d.UsesMemory,
		Source: store.CronSourceDeclarative, ShellOutputFormat: FormatWrapped}
	if sc.Kind == api.ScheduleCron {
		j.Expression = sc.Expr
	}
	if d.SessionTarget != "" {
		j.SessionTarget = d.SessionTarget
	}
	if d.Name != "" {
		j.Name = &d.Name
	}
	if d.Prompt != "" {
		j.Prompt = &d.Prompt
	}
	if d.Model != "" {
		j.Model = &d.Model
	}
	if d.ShellOutputFormat == FormatRaw {
		j.ShellOutputFormat = FormatRaw
	}
	if len(d.AllowedTools) > 0 {
		b, _ := json.Marshal(d.AllowedTools)
		j.AllowedTools = string(b)
	}
	j.Delivery, _ = encodeDelivery(nil)
	for _, alias := range sortedAgents(cfg) {
		if slices.Contains(cfg.Agents[alias].CronJobs, id) {
			j.AgentAlias = alias
			break
		}
	}
	return j, nil
}

package rpc

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"

	"github.com/zeroclaw-go/zeroclaw/internal/api"
	"github.com/zeroclaw-go/zeroclaw/internal/cron"
	"github.com/zeroclaw-go/zeroclaw/internal/router"
)

func (s *Server) registerCron(c *cron.Scheduler) {
	s.register(api.MethodCronList, handle(api.GrantCronRead, func(ctx context.Context, peer *Peer, p *api.CronListParams) (api.CronListResult, error) {
		if err := router.NonNegative("limit", p.Limit); err != nil {
			return api.CronListResult{}, err
		}
		if err := router.NonNegative("offset", p.Offset); err != nil {
			return api.CronListResult{}, err
		}
		// A principal restricted by allowed_agents pages through its agents' jobs only (in the query, so
		// offsets count what it may see).
		return c.ListPage(ctx, peer.Principal().AgentScope(), *p)
	}))
	s.register(api.MethodCronGet, handle(api.GrantCronRead, func(ctx context.Context, peer *Peer, p *api.CronIDParams) (api.CronJob, error) {
		id, err := resolveJob(ctx, c, p.ID)
		if err != nil {
			return api.CronJob{}, err
		}
		j, err := c.Get(ctx, id)
		if err != nil {
			return api.CronJob{}, err
		}
		if err := checkCronRead(peer.Principal(), j); err != nil {
			return api.CronJob{}, err
		}
		return j, nil
	}))
	s.register(api.MethodCronAdd, handle(api.GrantCronCreate, func(ctx context.Context, peer *Peer, p *api.CronAddParams) (api.CronJob, error) {
		if err := checkCronAdd(peer.Principal(), p); err != nil {
			return api.CronJob{}, err
		}
		if err := s.checkCronTarget(ctx, peer, p.SessionTarget); err != nil {
			return api.CronJob{}, err
		}
		sc, err := scheduleParam(p.Schedule, p.TZ, nil, false)
		if err != nil {
			return api.CronJob{}, err
		}
		return c.Add(ctx, cron.AddRequest{Agent: p.Agent, Schedule: sc, Name: p.Name, JobType: p.JobType, Command: p.Command,
			Prompt: p.Prompt, SessionTarget: p.SessionTarget, Model: p.Model, AllowedTools: p.AllowedTools,
			DeleteAfterRun: p.DeleteAfterRun, Delivery: p.Delivery})
	}))
	s.register(api.MethodCronPatch, handle(api.GrantCronUpdate, func(ctx context.Context, peer *Peer, p *api.CronPatchParams) (api.CronJob, error) {
		if err := requireID(p.ID); err != nil {
			return api.CronJob{}, err
		}
		if pr := peer.Principal(); pr != nil && !pr.Admin && (pr.Agents != nil || pr.Tools != nil) {
			cur, err := c.Get(ctx, p.ID)
			if err != nil {
				return api.CronJob{}, err
			}
			if err := checkCronJob(pr, cur); err != nil {
				return api.CronJob{}, err
			}
		}
		patch := cron.Patch{Name: p.Name, Command: p.Command, Prompt: p.Prompt, Enabled: p.Enabled}
		if len(p.Schedule) > 0 || p.TZ != nil || p.ClearTZ {
			cur, err := c.Get(ctx, p.ID)
			if err != nil {
				return api.CronJob{}, err
			}
			sc, err := scheduleParam(p.Schedule, deref(p.TZ), &cur.Schedule, p.ClearTZ)
			if err != nil {
				return api.CronJob{}, err
			}
			patch.Schedule = &sc
		}
		return c.Patch(ctx, p.ID, patch)
	}))
	s.register(api.MethodCronDelete, handle(api.GrantCronDelete, func(ctx context.Context, peer *Peer, p *api.CronIDParams) (api.CronDeleteResult, error) {
		id, err := resolveJob(ctx, c, p.ID)
		if err != nil {
			return api.CronDeleteResult{}, err
		}
		if pr := peer.Principal(); pr != nil && !pr.Admin && pr.Agents != nil {
			cur, err := c.Get(ctx, id)
			if err != nil {
				return api.CronDeleteResult{}, err
			}
			if !pr.AllowsAgent(cur.AgentAlias) { // another agent's schedule is not its to change (checkCronJob)
				return api.CronDeleteResult{}, selectorDenied("%s may not change jobs of agent %q (allowed_agents)", pr.Name, cur.AgentAlias)
			}
		}
		if err := c.Delete(ctx, id); err != nil {
			return api.CronDeleteResult{}, err
		}
		return api.CronDeleteResult{ID: id, Deleted: true}, nil
	}))
	s.register(api.MethodCronRuns, handle(api.GrantCronRead, func(ctx context.Context, peer *Peer, p *api.CronRunsParams) (api.CronRunsResult, error) {
		if err := router.NonNegative("limit", p.Limit); err != nil { // validation before the lookup
			return api.CronRunsResult{}, err
		}
		id, err := resolveJob(ctx, c, p.ID)
		if err != nil {
			return api.CronRunsResult{}, err
		}
		if pr := peer.Principal(); pr != nil && !pr.Admin && pr.Agents != nil {
			j, err := c.Get(ctx, id)
			if err != nil {
				return api.CronRunsResult{}, err
			}
			if err := checkCronRead(pr, j); err != nil {
				return api.CronRunsResult{}, err
			}
		}
		runs, err := c.Runs(ctx, id, p.Limit)
		if runs == nil {
			runs = []api.CronRun{}
		}
		return api.CronRunsResult{Runs: runs}, err
	}))
	trigger := handle(api.GrantCronExecute, func(ctx context.Context, peer *Peer, p *api.CronIDParams) (api.CronTriggerResult, error) {
		id, err := resolveJob(ctx, c, p.ID)
		if err != nil {
			return api.CronTriggerResult{}, err
		}
		if pr := peer.Principal(); pr != nil && !pr.Admin && (pr.Agents != nil || pr.Tools != nil) {
			cur, err := c.Get(ctx, id)
			if err != nil {
				return api.CronTriggerResult{}, err
			}
			if err := checkCronJob(pr, cur); err != nil {
				return api.CronTriggerResult{}, err
			}
		}
		return c.Trigger(ctx, id)
	})
	trigger.Concurrent = true // a job may run for minutes; other requests go on meanwhile
	s.register(api.MethodCronTrigger, trigger)
	s.register(api.MethodCronSettings, handle(api.GrantCronRead, func(_ context.Context, _ *Peer, p *api.CronSettingsParams) (api.CronSettings, error) {
		if len(bytes.TrimSpace(p.Patch)) > 0 && !bytes.Equal(bytes.TrimSpace(p.Patch), []byte("null")) {
			return api.CronSettings{}, router.InvalidParams("cron/settings: a patch is not supported here; change [scheduler] with config/set")
		}
		return c.Settings(), nil
	}))
}

// resolveJob maps a job id, or a job's case-insensitive name (any agent's), to its id, as the cron tools do.
func resolveJob(ctx context.Context, c *cron.Scheduler, idOrName string) (string, error) {
	if err := requireID(idOrName); err != nil {
		return "", err
	}
	return c.Resolve(ctx, idOrName, "")
}

func requireID(id string) error {
	if strings.TrimSpace(id) == "" {
		return router.InvalidParams("invalid params: id is required")
	}
	return nil
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// scheduleParam reads cron/add's and cron/patch's schedule: upstream's cron expression string (with tz), or a
// schedule object. For a patch, cur is the job's schedule: a new expression keeps its tz unless tz or clear_tz
// says otherwise, and tz alone re-zones the current expression.
func scheduleParam(raw json.RawMessage, tz string, cur *api.CronSchedule, clearTZ bool) (api.CronSchedule, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		if cur == nil {
			return api.CronSchedule{}, router.InvalidParams("invalid params: schedule is required (a cron expression or {kind, ...})")
		}
		if cur.Kind != api.ScheduleCron {
			return api.CronSchedule{}, router.InvalidParams("invalid params: tz applies to cron schedules only")
		}
		sc := *cur
		sc.TZ = tz
		return sc, nil
	}
	var sc api.CronSchedule
	if raw[0] == '"' {
		var expr string
		if err := json.Unmarshal(raw, &expr); err != nil {
			return api.CronSchedule{}, router.InvalidParams("invalid params: schedule must be a string or an object")
		}
		sc = api.CronSchedule{Kind: api.ScheduleCron, Expr: expr, TZ: tz}
		if strings.HasPrefix(strings.TrimSpace(expr), "{") { // a schedule object sent as a string (upstream tools do)
			if err := json.Unmarshal(raw, &sc); err != nil {
				return api.CronSchedule{}, router.InvalidParams("invalid params: schedule: " + err.Error())
			}
		} else if tz == "" && cur != nil && !clearTZ && cur.Kind == api.ScheduleCron {
			sc.TZ = cur.TZ
		}
		return sc, nil
	}
	if err := json.Unmarshal(raw, &sc); err != nil {
		return api.CronSchedule{}, router.InvalidParams("invalid params: schedule: " + err.Error())
	}
	return sc, nil
}

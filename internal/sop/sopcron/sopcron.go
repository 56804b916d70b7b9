// Package sopcron fires the cron triggers of SOPs: each expression is evaluated by the scheduler's own
// schedule rules (cron.Schedules, so a SOP's "0 9 * * 1-5" means what a cron job's does), and each window
// fires at most once: windows that passed while the daemon was down are not replayed, and every delivery
// carries the window as its dedup key, so a window is never admitted twice.
package sopcron

import (
	"context"
	"log/slog"
	"sort"
	"sync"
	"time"

	"github.com/zeroclaw-go/zeroclaw/internal/api"
	"github.com/zeroclaw-go/zeroclaw/internal/clock"
	"github.com/zeroclaw-go/zeroclaw/internal/cron"
	"github.com/zeroclaw-go/zeroclaw/internal/sop"
	"github.com/zeroclaw-go/zeroclaw/internal/sop/engine"
)

// Dispatcher receives the cron events (the engine).
type Dispatcher interface {
	Dispatch(ctx context.Context, ev sop.Event) ([]engine.Result, error)
}

// Options configure a Source.
type Options struct {
	Dispatcher  Dispatcher
	Expressions func() []string // the cron expressions of the loaded SOPs, read at start and after Changed
	Clock       clock.Clock
	Local       *time.Location // zone of expressions; nil = the host's
	Logger      *slog.Logger
}

// Source is the cron trigger source. Run it once; Changed makes it re-read the expressions.
type Source struct {
	o       Options
	sched   cron.Schedules
	changed chan struct{}

	mu  sync.Mutex // guards bad
	bad map[string]string
}

// New returns a source; nothing runs until Run.
func New(o Options) *Source {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	o.Clock = clock.OrReal(o.Clock)
	return &Source{o: o, sched: cron.Schedules{Local: o.Local}, changed: make(chan struct{}, 1), bad: map[string]string{}}
}

// Changed says the loaded SOPs changed; it never blocks.
func (s *Source) Changed() {
	select {
	case s.changed <- struct{}{}:
	default:
	}
}

// Invalid returns the expressions that do not parse, with why.
func (s *Source) Invalid() map[string]string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[string]string, len(s.bad))
	for k, v := range s.bad {
		out[k] = v
	}
	return out
}

// Key is the dedup key of expression expr's window at t.
func Key(expr string, t time.Time) string { return "cron:" + expr + "@" + t.UTC().Format(time.RFC3339) }

// Run fires windows until ctx ends. The first windows considered are those after the moment Run starts.
func (s *Source) Run(ctx context.Context) {
	next := map[string]time.Time{}
	from := s.o.Clock.Now()
	load := func() {
		seen := map[string]bool{}
		bad := map[string]string{}
		for _, e := range s.o.Expressions() {
			if seen[e] {
				continue
			}
			seen[e] = true
			if _, ok := next[e]; ok {
				continue
			}
			t, err := s.sched.Next(api.CronSchedule{Kind: api.ScheduleCron, Expr: e}, from)
			if err != nil {
				bad[e] = err.Error()
				s.o.Logger.Warn("sop cron trigger not scheduled", "component", "sop", "expression", e, "err", err)
				continue
			}
			next[e] = t
		}
		for e := range next {
			if !seen[e] {
				delete(next, e)
			}
		}
		s.mu.Lock()
		s.bad = bad
		s.mu.Unlock()
	}
	load()
	for {
		var soonest time.Time
		for _, t := range next {
			if soonest.IsZero() || t.Before(soonest) {
				soonest = t
			}
		}
		var fire <-chan time.Time
		var timer *clock.Timer
		if !soonest.IsZero() {
			timer = s.o.Clock.NewTimer(soonest.Sub(s.o.Clock.Now()))
			fire = timer.C
		}
		select {
		case <-ctx.Done():
			if timer != nil {
				timer.Stop()
			}
			return
		case <-s.changed:
			if timer != nil {
				timer.Stop()
			}
			from = s.o.Clock.Now()
			load()
		case now := <-fire:
			var due []string
			for e, t := range next {
				if !t.After(now) {
					due = append(due, e)
				}
			}
			sort.Strings(due)
			for _, e := range due {
				window := next[e]
				res, err := s.o.Dispatcher.Dispatch(ctx, sop.Event{Source: sop.SourceCron, Topic: e, Key: Key(e, window)})
				if err != nil {
					s.o.Logger.Warn("sop cron dispatch failed", "component", "sop", "expression", e, "err", err)
				} else {
					for _, r := range res {
						s.o.Logger.Info("sop cron trigger", "component", "sop", "expression", e, "sop_name", r.SopName,
							"result", string(r.Kind), "run", r.RunID, "reason", r.Reason)
					}
				}
				// The next window strictly after this one and after now: a slow dispatch skips, never replays.
				after := window
				if now.After(after) {
					after = now
				}
				t, err := s.sched.Next(api.CronSchedule{Kind: api.ScheduleCron, Expr: e}, after)
				if err != nil {
					delete(next, e)
					continue
				}
				next[e] = t
			}
		}
	}
}

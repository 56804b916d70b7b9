package cron

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/zeroclaw-go/zeroclaw/internal/api"
)

// Slot keys: "<job id>@<occurrence, RFC 3339 UTC>" for a scheduled run, "<job id>@manual:<id>" for a manual one.
// The job id is everything before the last '@'.
const (
	slotSep         = "@"
	manualSlot      = "manual:"
	interruptedNote = "lost: the daemon holding this run's claim stopped before recording its end; not run again"
)

// SlotKey is the work slot of job id's occurrence due.
func SlotKey(id string, due time.Time) string {
	return id + slotSep + due.UTC().Format(time.RFC3339Nano)
}

// ParseSlotKey splits a slot key; due is nil for a manual run's slot.
func ParseSlotKey(slot string) (id string, due *time.Time, ok bool) {
	i := strings.LastIndex(slot, slotSep)
	if i <= 0 {
		return "", nil, false
	}
	id, rest := slot[:i], slot[i+1:]
	if strings.HasPrefix(rest, manualSlot) {
		return id, nil, true
	}
	t, err := time.Parse(time.RFC3339Nano, rest)
	if err != nil {
		return "", nil, false
	}
	return id, &t, true
}

// claimTTL is [storage] claim_ttl_secs (at least 2 s).
func (s *Scheduler) claimTTL() time.Duration {
	return max(time.Duration(s.o.Config().Storage.ClaimTTLSecs)*time.Second, 2*time.Second)
}

// claimSlot claims slot for this daemon; a slot whose holder died mid-run is settled instead (never run twice).
func (s *Scheduler) claimSlot(ctx context.Context, sh Shared, slot string) bool {
	res, err := sh.ClaimSlot(ctx, slot, s.claimTTL())
	if err != nil {
		s.log.Warn("slot claim failed", "slot", slot, "err", err)
		return false
	}
	switch res {
	case SlotClaimed:
		return true
	case SlotInterrupted:
		s.settle(ctx, sh, slot)
	}
	return false
}

// sweep records interrupted the claims whose daemons died, and settles their runs.
func (s *Scheduler) sweep(ctx context.Context, sh Shared) {
	slots, err := sh.SweepSlots(ctx)
	if err != nil {
		s.log.Warn("expired claims not swept", "err", err)
		return
	}
	for _, slot := range slots {
		s.settle(ctx, sh, slot)
	}
}

// settle records the run of an interrupted slot lost and moves its job on: a recurring job to its next
// occurrence, a one-shot disabled.
func (s *Scheduler) settle(ctx context.Context, sh Shared, slot string) {
	id, due, ok := ParseSlotKey(slot)
	if !ok {
		s.log.Warn("interrupted slot with a key that is not a cron slot", "slot", slot)
		return
	}
	now := s.o.Clock.Now()
	st := Settle{JobID: id, Slot: slot, At: now, Note: interruptedNote, DueAt: due}
	if j, err := s.o.Store.Get(ctx, id); err == nil {
		if sc, err := scheduleOf(j); err == nil && sc.Kind == api.ScheduleAt {
			st.Disable = true
		} else if err == nil {
			if n, err := s.sched.Next(sc, now); err == nil {
				st.NextRun = &n
			}
		}
	}
	if err := sh.SettleSlot(ctx, st); err != nil {
		s.log.Warn("interrupted run not settled", "job", id, "slot", slot, "err", err)
		return
	}
	s.log.Info("run interrupted by the end of the daemon holding it recorded lost", "job", id, "slot", slot)
}

// extend renews the run's claim every third of the ttl until stop is called; lost, it calls lost.
func (s *Scheduler) extend(ctx context.Context, sh Shared, job, slot string, lost context.CancelFunc) (stop func()) {
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		for {
			ttl := s.claimTTL()
			t := s.o.Clock.NewTimer(ttl / 3)
			select {
			case <-done:
				t.Stop()
				return
			case <-ctx.Done():
				t.Stop()
				return
			case <-t.C:
			}
			err := sh.ExtendSlot(context.WithoutCancel(ctx), slot, ttl)
			if errors.Is(err, ErrSlotLost) {
				s.log.Warn("run's claim lost; cancelling the run", "job", job, "slot", slot)
				lost()
				return
			}
			if err != nil {
				s.log.Warn("run's claim not renewed", "job", job, "slot", slot, "err", err)
			}
		}
	}()
	return func() { close(done); <-finished }
}

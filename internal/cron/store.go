package cron

import (
	"context"
	"errors"
	"time"

	"github.com/zeroclaw-go/zeroclaw/internal/store"
)

// Store is what the scheduler needs of the jobs database: *store.CronStore (data/cron/jobs.db, one install) or
// a PostgreSQL store several daemons share (internal/cronpg), which also implements Shared.
type Store interface {
	List(ctx context.Context) ([]store.CronJob, error)
	ListPage(ctx context.Context, agents []string, offset, limit int) ([]store.CronJob, error)
	Due(ctx context.Context, now time.Time) ([]store.CronJob, error)
	NextDue(ctx context.Context) (time.Time, bool, error)
	Get(ctx context.Context, id string) (store.CronJob, error)
	Add(ctx context.Context, j store.CronJob) error
	Update(ctx context.Context, j store.CronJob, keepFormat bool) error
	Delete(ctx context.Context, id string) (bool, error)
	ClearLocks(ctx context.Context) (int, error)
	ClaimRun(ctx context.Context, c store.Claim) (int64, bool, error)
	FinishRun(ctx context.Context, f store.Finish) error
	MarkRunLost(ctx context.Context, runID int64, at time.Time, note string, disable bool) error
	RunningRuns(ctx context.Context) ([]store.CronRun, error)
	Runs(ctx context.Context, jobID string, limit int) ([]store.CronRun, error)
	SkipMissed(ctx context.Context, id string, now time.Time, nextRun *time.Time) error
}

var _ Store = (*store.CronStore)(nil)

// SlotResult says what ClaimSlot found.
type SlotResult int

const (
	// SlotClaimed: the slot is this daemon's to run now.
	SlotClaimed SlotResult = iota + 1
	// SlotBusy: another daemon's live claim holds it.
	SlotBusy
	// SlotFinished: the slot has its end recorded already.
	SlotFinished
	// SlotInterrupted: its holder lost the claim mid-run; the slot is now recorded interrupted, and the caller
	// settles the run (SettleSlot).
	SlotInterrupted
)

// ErrSlotLost is the error of a fenced write whose slot claim this daemon no longer holds.
var ErrSlotLost = errors.New("cron: the run's claim was lost (expired and recorded interrupted by another daemon)")

// Settle is the record of a slot whose run was cut by the end of the daemon that held it.
type Settle struct {
	JobID string
	Slot  string
	At    time.Time
	Note  string
	// DueAt is the occurrence the slot stands for (nil for a manual run); when the job's next_run is still at
	// it, the job moves to NextRun, or is disabled when NextRun is nil (a one-shot is not run twice).
	DueAt   *time.Time
	NextRun *time.Time
	// Disable disables the job whatever its next_run (a one-shot whose run was cut).
	Disable bool
}

// Shared is the part of a Store that several daemons share: every run is a work slot (job id and occurrence)
// claimed by exactly one daemon, ClaimRun and FinishRun with a Slot are fenced on that claim, and a claim whose
// daemon died expires after its ttl and is settled (its run recorded lost) by another, never run again.
type Shared interface {
	ClaimSlot(ctx context.Context, slot string, ttl time.Duration) (SlotResult, error)
	ExtendSlot(ctx context.Context, slot string, ttl time.Duration) error
	// DropSlot ends a claimed slot that was not run (the job changed before its run was recorded).
	DropSlot(ctx context.Context, slot, outcome string) error
	// SweepSlots records interrupted the expired claims and returns their slots, to be settled.
	SweepSlots(ctx context.Context) ([]string, error)
	SettleSlot(ctx context.Context, s Settle) error
}

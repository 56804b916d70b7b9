package cronpg_test

import (
	"context"
	"log/slog"
	"os"
	"testing"
	"time"

	"github.com/zeroclaw-go/zeroclaw/internal/config"
	"github.com/zeroclaw-go/zeroclaw/internal/cron"
	"github.com/zeroclaw-go/zeroclaw/internal/store"
)

// blockingAgent's turns run until their context ends, and report that on cancelled.
type blockingAgent struct {
	started   chan struct{}
	cancelled chan struct{}
}

func (a *blockingAgent) RunUnattended(ctx context.Context, _ cron.AgentRun) (string, error) {
	a.started <- struct{}{}
	<-ctx.Done()
	close(a.cancelled)
	return "", ctx.Err()
}

// A scheduler on the shared store whose run outlives its claim (the daemon was cut off longer than the ttl)
// cancels the run at its next renewal, and its late result is refused: the run is recorded once, lost, by the
// daemon that swept the expired claim.
func TestSchedulerCancelsARunWhoseClaimExpired(t *testing.T) {
	a, open := openPG(t, "daemon-a")
	if a == nil {
		return
	}
	b := open("daemon-b")
	cfg := config.Default()
	cfg.Storage.ClaimTTLSecs = 2
	cfg.Reliability.SchedulerRetries = 0
	agent := &blockingAgent{started: make(chan struct{}, 1), cancelled: make(chan struct{})}
	var log *slog.Logger
	if testing.Verbose() {
		log = slog.New(slog.NewTextHandler(os.Stderr, nil))
	}
	s := cron.New(cron.Options{Store: a, Config: func() *config.Config { return cfg }, InstallRoot: t.TempDir(), Agents: agent, Logger: log})
	ctx := t.Context()
	prompt := "work"
	j := job("long", "default", time.Now().Add(-time.Second))
	j.JobType, j.Command, j.Prompt = "agent", "", &prompt
	if err := a.Add(ctx, j); err != nil {
		t.Fatal(err)
	}
	if err := s.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		c, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		s.Close(c)
	})
	select {
	case <-agent.started:
	case <-time.After(30 * time.Second):
		t.Fatal("the due job's run did not start")
	}
	expireClaims(t, a)
	select {
	case <-agent.cancelled:
	case <-time.After(30 * time.Second):
		t.Fatal("the run whose claim expired was not cancelled")
	}
	swept, err := b.SweepSlots(ctx)
	for err == nil && len(swept) == 0 {
		// a's own scheduler may sweep it first at its next tick: then there is nothing left for b.
		runs, _ := b.Runs(ctx, "long", 10)
		if len(runs) == 1 && runs[0].Status == store.CronStatusLost {
			break
		}
		time.Sleep(50 * time.Millisecond)
		swept, err = b.SweepSlots(ctx)
	}
	if err != nil {
		t.Fatal(err)
	}
	for _, slot := range swept {
		if err := b.SettleSlot(ctx, cron.Settle{JobID: "long", Slot: slot, At: time.Now(), Note: "lost: a was cut off"}); err != nil {
			t.Fatal(err)
		}
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		runs, err := b.Runs(ctx, "long", 10)
		if err != nil {
			t.Fatal(err)
		}
		if len(runs) == 1 && runs[0].Status == store.CronStatusLost {
			break
		}
		if len(runs) > 1 || (len(runs) == 1 && runs[0].Status != store.CronStatusRunning) || time.Now().After(deadline) {
			t.Fatalf("runs: %+v (want one, lost)", runs)
		}
		time.Sleep(50 * time.Millisecond)
	}
	// a's late end changed nothing: still one run, lost; the job is not running.
	c, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	s.Close(c)
	cancel()
	runs, _ := b.Runs(ctx, "long", 10)
	if len(runs) != 1 || runs[0].Status != store.CronStatusLost {
		t.Fatalf("after the scheduler stopped: %+v", runs)
	}
	if got, err := b.Get(ctx, "long"); err != nil || got.LockedAt != nil || got.LastStatus == nil || *got.LastStatus != store.CronStatusLost {
		t.Fatalf("the job after its lost run (unlocked, last status lost): %+v %v", got, err)
	}
}

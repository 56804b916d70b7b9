package controlplane

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/zeroclaw-go/zeroclaw/internal/clock/clocktest"
	"github.com/zeroclaw-go/zeroclaw/internal/config"
	"github.com/zeroclaw-go/zeroclaw/internal/tools"
)

// blockingTurns answers each turn with its prompt once release is closed, or fails when ctx ends first.
type blockingTurns struct {
	release chan struct{}
	seen    chan DelegateTurn
}

func (b blockingTurns) RunUnattended(ctx context.Context, t DelegateTurn) (string, error) {
	b.seen <- t
	select {
	case <-b.release:
		return "did: " + t.Prompt, nil
	case <-ctx.Done():
		return "", ctx.Err()
	}
}

func delegateConfig(root string) func() *config.Config {
	c := config.Default()
	c.Agents["other"] = config.AgentConfig{ModelProvider: "echo.default", RiskProfile: "supervised"}
	a := c.Agents["default"]
	a.Delegates = []string{"other"}
	a.Workspace.Path = filepath.Join(root, "ws")
	c.Agents["default"] = a
	rp := c.RiskProfiles[config.LevelSupervised]
	rp.DelegationPolicy.Mode = config.DelegationAllow
	c.RiskProfiles[config.LevelSupervised] = rp
	return func() *config.Config { return c }
}

// A background task runs its turn without the delegate tool, its result file goes from running to completed,
// and Stop cancels a task still running and records it cancelled.
func TestDelegationsBackgroundTasks(t *testing.T) {
	ctx := t.Context()
	root := t.TempDir()
	st := openStore(t, filepath.Join(root, "control_plane.db"))
	clk := clocktest.New(t0)
	p, err := Open(ctx, Options{Store: st, Clock: clk, BootID: "boot", PID: 1})
	if err != nil {
		t.Fatal(err)
	}
	d := NewDelegations(DelegateOptions{Plane: p, Config: delegateConfig(root), InstallRoot: root, Clock: clk})
	g := d.ForAgent("default")
	if g == nil {
		t.Fatal("delegation allowed but no delegator")
	}
	if _, err := g.Start(ctx, "other", "x"); err == nil {
		t.Fatal("a task started before Start")
	}
	turns := blockingTurns{release: make(chan struct{}), seen: make(chan DelegateTurn, 2)}
	d.Start(ctx, turns)

	id, err := g.Start(ctx, "other", "sum it up")
	if err != nil {
		t.Fatal(err)
	}
	turn := <-turns.seen
	if turn.Agent != "other" || turn.SessionID != "delegate-"+id || len(turn.ExcludedTools) != 1 || turn.ExcludedTools[0] != tools.NameDelegate {
		t.Fatalf("turn: %+v", turn)
	}
	if r, err := g.Result(ctx, id); err != nil || r.Status != ResultRunning {
		t.Fatalf("running result: %+v %v", r, err)
	}
	close(turns.release)
	d.Stop(ctx) // waits for the task
	r, err := g.Result(ctx, id)
	if err != nil || r.Status != ResultCompleted || r.Output == nil || *r.Output != "did: sum it up" {
		t.Fatalf("completed result: %+v %v", r, err)
	}
	if _, err := g.Start(ctx, "other", "late"); err == nil {
		t.Fatal("a task started after Stop")
	}

	d2 := NewDelegations(DelegateOptions{Plane: p, Config: delegateConfig(root), InstallRoot: root, Clock: clk})
	turns2 := blockingTurns{release: make(chan struct{}), seen: make(chan DelegateTurn, 1)}
	d2.Start(ctx, turns2)
	id2, err := d2.ForAgent("default").Start(ctx, "other", "never ends")
	if err != nil {
		t.Fatal(err)
	}
	<-turns2.seen
	d2.Stop(ctx)
	all, err := g.Results(ctx)
	if err != nil || len(all) != 2 {
		t.Fatalf("results: %+v %v", all, err)
	}
	for _, r := range all {
		if r.TaskID == id2 && r.Status != ResultCancelled {
			t.Fatalf("stopped task: %+v", r)
		}
	}
}

package controlplane

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/zeroclaw-go/zeroclaw/internal/clock/clocktest"
	"github.com/zeroclaw-go/zeroclaw/internal/store"
)

var t0 = time.Date(2026, 6, 1, 8, 0, 0, 0, time.UTC)

func openStore(t *testing.T, path string) *store.TaskStore {
	t.Helper()
	s, err := store.OpenControlPlane(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func TestLostAtStartAndTimedOutBySweep(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "control_plane.db")
	clk := clocktest.New(t0)
	st := openStore(t, path)

	old, err := Open(ctx, Options{Store: st, Clock: clk, BootID: "boot-old", PID: 4242})
	if err != nil {
		t.Fatal(err)
	}
	if err := old.Begin(ctx, "a", "cron", "default", "cron:j#1", t0); err != nil {
		t.Fatal(err)
	}
	if err := old.Begin(ctx, "done", "cron", "default", "", t0); err != nil {
		t.Fatal(err)
	}
	if err := old.End(ctx, "done", store.TaskCompleted, "ok", ""); err != nil {
		t.Fatal(err)
	}

	// The next process: the other boot's running task is lost, a finished one stays finished.
	p, err := Open(ctx, Options{Store: st, Clock: clk, BootID: "boot-new", PID: 4343, MaxRuntime: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	if a, _ := p.Task(ctx, "a"); a.Status != store.TaskLost || a.FinishedAt == nil {
		t.Fatalf("task of the previous boot: %+v", a)
	}
	if d, _ := p.Task(ctx, "done"); d.Status != store.TaskCompleted {
		t.Fatalf("finished task: %+v", d)
	}
	// A lost task cannot be finished afterwards.
	if err := p.End(ctx, "a", store.TaskCompleted, "late", ""); err != nil {
		t.Fatal(err)
	}
	if a, _ := p.Task(ctx, "a"); a.Status != store.TaskLost {
		t.Fatalf("a lost task changed: %+v", a)
	}

	// Own tasks: one beats, one goes stale past the max runtime.
	if err := p.Begin(ctx, "fresh", "cron", "default", "", t0); err != nil {
		t.Fatal(err)
	}
	if err := p.Begin(ctx, "stale", "cron", "default", "", t0); err != nil {
		t.Fatal(err)
	}
	p.Start(ctx)
	defer p.Close()
	for i := range 61 {
		if !clk.WaitTimer(SweepInterval, 10*time.Second) {
			t.Fatalf("sweep timer not armed (round %d)", i)
		}
		clk.Advance(SweepInterval)
		if err := p.Heartbeat(ctx, "fresh"); err != nil {
			t.Fatal(err)
		}
	}
	// The 61st sweep ran before this wait returns: a timer for the next round is armed only after it.
	if !clk.WaitTimer(SweepInterval, 10*time.Second) {
		t.Fatal("sweep loop stopped")
	}
	if s, _ := p.Task(ctx, "stale"); s.Status != store.TaskTimedOut || s.Error != "heartbeat timeout" {
		t.Fatalf("stale task: %+v", s)
	}
	if f, _ := p.Task(ctx, "fresh"); f.Status != store.TaskRunning {
		t.Fatalf("beating task: %+v", f)
	}
}

func TestDelegateResults(t *testing.T) {
	ctx := context.Background()
	ws := t.TempDir()
	st := openStore(t, filepath.Join(t.TempDir(), "control_plane.db"))
	p, err := Open(ctx, Options{Store: st, Clock: clocktest.New(t0), BootID: "b"})
	if err != nil {
		t.Fatal(err)
	}
	if err := WriteResult(ws, DelegateResult{TaskID: "../../etc/passwd", Status: ResultRunning}); !errors.Is(err, ErrTaskID) {
		t.Fatalf("WriteResult(traversal) = %v", err)
	}
	if _, err := p.ReadResult(ctx, ws, "x/../y"); !errors.Is(err, ErrTaskID) {
		t.Fatalf("ReadResult(traversal) = %v", err)
	}
	id := NewUUID()
	if err := WriteResult(ws, DelegateResult{TaskID: id, Agent: "default", Status: ResultRunning, StartedAt: "2026-06-01T08:00:00Z"}); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(filepath.Join(ws, "delegate_results", id+".json"))
	if !strings.Contains(string(b), `"status": "running"`) || !strings.Contains(string(b), `"finished_at": null`) {
		t.Fatalf("file %s", b)
	}
	entries, _ := os.ReadDir(filepath.Join(ws, "delegate_results"))
	if len(entries) != 1 {
		t.Fatalf("temp files left: %v", entries)
	}
	// Running in the file and in the plane: running.
	if err := p.Begin(ctx, id, "delegate", "default", "", t0); err != nil {
		t.Fatal(err)
	}
	if r, _ := p.ReadResult(ctx, ws, id); r.Status != ResultRunning {
		t.Fatalf("status %s", r.Status)
	}
	// The plane says lost while the file still says running: lost is overlaid.
	if _, err := st.MarkLost(ctx, id, t0); err != nil {
		t.Fatal(err)
	}
	if r, _ := p.ReadResult(ctx, ws, id); r.Status != store.TaskLost {
		t.Fatalf("overlay: status %s", r.Status)
	}
	// Once the file has a final status it wins.
	out := "done"
	if err := WriteResult(ws, DelegateResult{TaskID: id, Agent: "default", Status: ResultCompleted, Output: &out, StartedAt: "x"}); err != nil {
		t.Fatal(err)
	}
	if r, _ := p.ReadResult(ctx, ws, id); r.Status != ResultCompleted || *r.Output != "done" {
		t.Fatalf("file status must win: %+v", r)
	}
	if _, err := p.ReadResult(ctx, ws, NewUUID()); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("missing result: %v", err)
	}
}

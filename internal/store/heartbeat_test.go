package store

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestHeartbeatStoreRowsPruneAndRecovery(t *testing.T) {
	ctx := context.Background()
	s := OpenHeartbeat(filepath.Join(t.TempDir(), "heartbeat", "history.db"))
	defer s.Close()
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for i := range 5 {
		at := t0.Add(time.Duration(i) * time.Minute)
		if _, err := s.Insert(ctx, HeartbeatRun{SlotAt: at, TaskText: "t", TaskPriority: "low", StartedAt: at, FinishedAt: at,
			Status: HeartbeatSkipped}, 3); err != nil {
			t.Fatal(err)
		}
	}
	runs, err := s.Runs(ctx, 0)
	if err != nil || len(runs) != 3 || !runs[0].SlotAt.Equal(t0.Add(4*time.Minute)) {
		t.Fatalf("runs = %+v, %v; want the 3 newest, newest first", runs, err)
	}
	at := t0.Add(time.Hour)
	id, err := s.Insert(ctx, HeartbeatRun{SlotAt: at, TaskText: "check", TaskPriority: "high", StartedAt: at, FinishedAt: at,
		Status: HeartbeatRunning}, 3)
	if err != nil {
		t.Fatal(err)
	}
	if ok, err := s.HasSlot(ctx, at); err != nil || !ok {
		t.Fatalf("HasSlot = %v, %v", ok, err)
	}
	if n, err := s.CloseRunning(ctx, "interrupted", at.Add(time.Second)); err != nil || n != 1 {
		t.Fatalf("CloseRunning = %d, %v", n, err)
	}
	// A run closed by the recovery is not reopened by a late Finish.
	if err := s.Finish(ctx, id, HeartbeatOK, "late", at.Add(2*time.Second), 5); err != nil {
		t.Fatal(err)
	}
	runs, _ = s.Runs(ctx, 1)
	if runs[0].Status != HeartbeatError || runs[0].Output != "interrupted" {
		t.Fatalf("recovered row = %+v", runs[0])
	}
	long := strings.Repeat("é", MaxHeartbeatOutputBytes)
	id, _ = s.Insert(ctx, HeartbeatRun{SlotAt: at.Add(time.Hour), TaskText: "x", TaskPriority: "low", StartedAt: at.Add(time.Hour),
		FinishedAt: at.Add(time.Hour), Status: HeartbeatRunning}, 3)
	if err := s.Finish(ctx, id, HeartbeatOK, long, at.Add(time.Hour), 7); err != nil {
		t.Fatal(err)
	}
	runs, _ = s.Runs(ctx, 1)
	if r := runs[0]; r.Status != HeartbeatOK || r.DurationMS != 7 || len(r.Output) > MaxHeartbeatOutputBytes+len(CronTruncatedMarker) ||
		!strings.HasSuffix(r.Output, CronTruncatedMarker) || !strings.HasPrefix(r.Output, "éé") {
		t.Fatalf("finished row: status %s, %d bytes", r.Status, len(r.Output))
	}

	if _, ok, err := s.Schedule(ctx); ok || err != nil {
		t.Fatalf("Schedule before any = %v, %v", ok, err)
	}
	want := HeartbeatSchedule{NextSlotAt: at, Interval: 30 * time.Minute, LastOKAt: t0}
	if err := s.SetSchedule(ctx, want); err != nil {
		t.Fatal(err)
	}
	want.AlertSentAt = at
	if err := s.SetSchedule(ctx, want); err != nil {
		t.Fatal(err)
	}
	got, ok, err := s.Schedule(ctx)
	if err != nil || !ok || got != want {
		t.Fatalf("Schedule = %+v, %v, %v; want %+v", got, ok, err, want)
	}
}

// A history.db written by upstream (its table, user_version 0) is read and extended in place.
func TestHeartbeatStoreOpensUpstreamFile(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "history.db")
	c, err := OpenSQLite(ctx, path, "")
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{`CREATE TABLE heartbeat_runs (id INTEGER PRIMARY KEY AUTOINCREMENT, task_text TEXT NOT NULL,
		task_priority TEXT NOT NULL, started_at TEXT NOT NULL, finished_at TEXT NOT NULL, status TEXT NOT NULL, output TEXT,
		duration_ms INTEGER)`,
		`INSERT INTO heartbeat_runs (task_text, task_priority, started_at, finished_at, status, output, duration_ms)
		VALUES ('old', 'medium', '2026-01-01T00:00:00+00:00', '2026-01-01T00:00:01+00:00', 'ok', 'fine', 1000)`} {
		if _, err := c.W.ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	_ = c.Close()
	s := OpenHeartbeat(path)
	defer s.Close()
	runs, err := s.Runs(ctx, 10)
	if err != nil || len(runs) != 1 || runs[0].TaskText != "old" || runs[0].Status != "ok" || !runs[0].SlotAt.Equal(runs[0].StartedAt) {
		t.Fatalf("runs = %+v, %v", runs, err)
	}
}

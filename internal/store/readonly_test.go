package store

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// ReadCronJobs reads the jobs while their store has the database open (live WAL) and after it closed it (no
// -wal/-shm left), through a read-only connection: it never creates the file and never writes.
func TestReadCronJobsReadOnly(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	path := filepath.Join(dir, "jobs.db")
	if jobs, err := ReadCronJobs(ctx, path); err != nil || jobs != nil {
		t.Fatalf("missing file: %v %v", jobs, err)
	}
	if _, err := os.Stat(path); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("reading a missing database created it: %v", err)
	}
	s := OpenCron(path)
	if err := s.Add(ctx, testJob("a", time.Now())); err != nil {
		t.Fatal(err)
	}
	jobs, err := ReadCronJobs(ctx, path)
	if err != nil || len(jobs) != 1 || jobs[0].ID != "a" {
		t.Fatalf("while the store is open: %+v %v", jobs, err)
	}
	// The owner still writes after the read-only reader came and went.
	if err := s.Add(ctx, testJob("b", time.Now().Add(time.Hour))); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	before, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	jobs, err = ReadCronJobs(ctx, path)
	if err != nil || len(jobs) != 2 || jobs[0].ID != "a" || jobs[1].ID != "b" {
		t.Fatalf("after the store closed: %+v %v", jobs, err)
	}
	after, err := os.ReadFile(path)
	if err != nil || string(after) != string(before) {
		t.Fatalf("the read changed the database file (%v)", err)
	}
}

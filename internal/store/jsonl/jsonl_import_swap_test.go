//go:build unix

package jsonl

import (
	"context"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// A source the scan saw as a regular file but that is replaced, before the import opens it, by a FIFO or by a
// symbolic link to a file outside the sessions directory is refused like one the scan sees: the import neither
// blocks on the FIFO (which would hold the fence of its sessions, and the daemon's shutdown, forever) nor reads
// through the link; the entry goes back to its live name and nothing is imported.
func TestImportJSONLRefusesSwappedSource(t *testing.T) {
	outside := filepath.Join(t.TempDir(), "outside.jsonl")
	writeFile(t, filepath.Dir(outside), "outside.jsonl", `{"role":"user","content":"outside secret"}`+"\n")
	for name, swap := range map[string]func(p string) error{
		"fifo":    func(p string) error { return syscall.Mkfifo(p, 0o600) },
		"symlink": func(p string) error { return os.Symlink(outside, p) },
	} {
		t.Run(name, func(t *testing.T) {
			s, dir := importDir(t)
			if err := os.MkdirAll(dir, 0o700); err != nil {
				t.Fatal(err)
			}
			writeFile(t, dir, "k.jsonl", `{"role":"user","content":"hi"}`+"\n")
			onSource := func(src string) {
				p := filepath.Join(dir, src)
				if err := os.Remove(p); err != nil {
					t.Error(err)
				}
				if err := swap(p); err != nil {
					t.Error(err)
				}
			}
			ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
			defer cancel()
			type result struct {
				rep ImportReport
				err error
			}
			done := make(chan result, 1)
			go func() {
				rep, err := importJSONL(ctx, s, dir, tImport, onSource)
				done <- result{rep, err}
			}()
			var res result
			select {
			case res = <-done:
			case <-time.After(5 * time.Second):
				// Unblock an open stuck on the FIFO so the goroutine ends.
				if f, err := os.OpenFile(filepath.Join(dir, "k.jsonl.importing"), os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
					f.Close()
				}
				t.Fatalf("the import blocked on a swapped %s source", name)
			}
			if res.err == nil || res.rep.Sessions != 0 || len(res.rep.Failed) != 1 {
				t.Errorf("report = %+v, err = %v; want the one source failed", res.rep, res.err)
			}
			if msgs, err := s.All(t.Context(), "k"); err != nil || len(msgs) != 0 {
				t.Errorf("k holds %d messages (%v), want none", len(msgs), err)
			}
			if !exists(t, dir, "k.jsonl") || exists(t, dir, "k.jsonl.importing") || exists(t, dir, "k.jsonl.migrated") {
				t.Errorf("files = %q, want k.jsonl back under its live name", sessionFiles(t, dir))
			}
		})
	}
}

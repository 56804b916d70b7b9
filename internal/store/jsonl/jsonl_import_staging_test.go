package jsonl

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// A live X.jsonl next to an X.jsonl.importing that is not a regular file (here a symlink to a file outside
// the sessions dir): staging by rename would silently replace that entry. It must stay, and the source with
// it, as for a live and a staged copy of one source.
func TestImportJSONLNeverRenamesOverNonRegularStagedName(t *testing.T) {
	s, dir := importDir(t)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	outside := filepath.Join(t.TempDir(), "notes.txt")
	if err := os.WriteFile(outside, []byte("not a session"), 0o600); err != nil {
		t.Fatal(err)
	}
	writeFile(t, dir, "a.jsonl", aJSONL)
	if err := os.Symlink(outside, filepath.Join(dir, "a.jsonl.importing")); err != nil {
		t.Fatal(err)
	}

	rep, err := ImportDir(t.Context(), s, dir, tImport)
	if !errors.Is(err, ErrImportConflict) {
		t.Fatalf("err = %v; want ErrImportConflict", err)
	}
	if got := failedSources(rep); !slices.Contains(got, "a.jsonl") {
		t.Fatalf("failed %v; want a.jsonl among them", got)
	}
	if fi, err := os.Lstat(filepath.Join(dir, "a.jsonl.importing")); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Fatalf("a.jsonl.importing was replaced: %v, %v", fi, err)
	}
	if got := readFile(t, dir, "a.jsonl"); got != aJSONL {
		t.Fatalf("a.jsonl = %q", got)
	}
	if rep.Sessions != 0 || len(receipts(t, s)) != 0 {
		t.Fatalf("imported anyway: %+v", rep)
	}
}

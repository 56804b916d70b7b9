package trigger

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/zeroclaw-go/zeroclaw/internal/config"
	"github.com/zeroclaw-go/zeroclaw/internal/sop"
)

// A long settle makes the coalescing of a burst independent of how loaded the machine is.
var testFSConfig = config.FilesystemConfig{Recursive: true, DebounceMS: 0, SettleMS: 1500,
	Events: []string{"created", "modified", "deleted", "renamed"}}

func runFS(t *testing.T, f *FS) {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() { defer close(done); _ = f.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
}

func waitWatched(t *testing.T, f *FS, dir string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !slices.Contains(f.Watched(), dir) {
		if time.Now().After(deadline) {
			t.Fatalf("%s never watched (watched: %v)", dir, f.Watched())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func payloadOf(t *testing.T, ev sop.Event) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(ev.Payload), &m); err != nil {
		t.Fatalf("payload %q: %v", ev.Payload, err)
	}
	return m
}

func TestFSDispatchesChangesUnderTheInstall(t *testing.T) {
	root := realDir(t.TempDir())
	inbox := filepath.Join(root, "inbox")
	if err := os.MkdirAll(filepath.Join(inbox, "deep"), 0o700); err != nil {
		t.Fatal(err)
	}
	trig := sop.Trigger{Type: sop.SourceFilesystem, Path: inbox + "/**/*.csv", Events: []sop.FSEvent{sop.FSCreated, sop.FSModified}}
	rec := newRecorder(nil)
	rc := testFSConfig
	f := NewFS(FSOptions{Root: root, Patterns: func() []string { return []string{trig.Path} }, Dispatcher: rec, RootConfig: &rc})
	runFS(t, f)
	waitWatched(t, f, filepath.Join(inbox, "deep"))

	file := filepath.Join(inbox, "deep", "orders.csv")
	if err := os.WriteFile(file, []byte("a,b\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	ev := rec.wait(t)
	p := payloadOf(t, ev)
	if ev.Source != sop.SourceFilesystem || ev.Topic != file || p["event"] != "created" || p["file_name"] != "orders.csv" ||
		p["extension"] != "csv" || ev.Key == "" {
		t.Fatalf("event %+v payload %v", ev, p)
	}
	if !sop.MatchEvent(trig, ev) {
		t.Fatalf("the SOP's own trigger does not match its event: %+v", ev)
	}
	// A burst of writes is one modified event.
	for i := range 5 {
		if err := os.WriteFile(file, []byte{byte('0' + i)}, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	ev = rec.wait(t)
	if p := payloadOf(t, ev); p["event"] != "modified" || p["size"] != float64(1) {
		t.Fatalf("modified: %v", p)
	}
	if err := os.Remove(file); err != nil {
		t.Fatal(err)
	}
	ev = rec.wait(t)
	if p := payloadOf(t, ev); p["event"] != "deleted" || p["size"] != nil {
		t.Fatalf("deleted: %v", p)
	}
	if sop.MatchEvent(trig, ev) {
		t.Fatal("a deleted event matched a trigger listing created and modified")
	}
	// A directory created later is watched too.
	later := filepath.Join(inbox, "later")
	if err := os.Mkdir(later, 0o700); err != nil {
		t.Fatal(err)
	}
	rec.wait(t) // its own created event
	waitWatched(t, f, later)
	if err := os.WriteFile(filepath.Join(later, "x.csv"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if ev = rec.wait(t); ev.Topic != filepath.Join(later, "x.csv") {
		t.Fatalf("event in a new directory: %+v", ev)
	}
	select {
	case ev := <-rec.got:
		t.Fatalf("an event too many: %+v", ev)
	case <-time.After(2 * time.Second):
	}
}

func TestFSIsConfinedAndBounded(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("symlinks need privileges on windows")
	}
	root, outside, allowedDir := realDir(t.TempDir()), realDir(t.TempDir()), realDir(t.TempDir())
	if err := os.Symlink(outside, filepath.Join(root, "escape")); err != nil {
		t.Fatal(err)
	}
	deep := filepath.Join(root, "tree", "a", "b", "c", "d")
	if err := os.MkdirAll(deep, 0o700); err != nil {
		t.Fatal(err)
	}
	rec := newRecorder(nil)
	f := NewFS(FSOptions{Root: root, MaxWatches: 4, Dispatcher: rec,
		Channels: map[string]config.FilesystemConfig{
			"drop": {Enabled: true, Paths: []string{allowedDir}, Recursive: true, SettleMS: 10, Events: []string{"created"}},
			"off":  {Enabled: false, Paths: []string{outside}},
		},
		Patterns: func() []string {
			return []string{outside + "/*", filepath.Join(root, "escape") + "/x", "relative/path", "/etc", filepath.Join(root, "tree"), allowedDir + "/*.json"}
		}})
	runFS(t, f)
	waitWatched(t, f, allowedDir)
	w := f.Watched()
	for _, d := range w {
		if within(d, outside) || d == "/etc" {
			t.Fatalf("watched %s outside the install and the enabled channels: %v", d, w)
		}
	}
	if len(w) > 4 {
		t.Fatalf("%d watches, the bound is 4: %v", len(w), w)
	}
	if err := os.WriteFile(filepath.Join(outside, "x"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(allowedDir, "in.json"), []byte("{}"), 0o600); err != nil {
		t.Fatal(err)
	}
	if ev := rec.wait(t); ev.Topic != filepath.Join(allowedDir, "in.json") {
		t.Fatalf("event: %+v", ev)
	}
}

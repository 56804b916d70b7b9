package rpctest

import (
	"flag"
	"path/filepath"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden transcripts from the daemon's actual output")

// TestTranscripts plays every testdata/transcripts/*.txt against a fresh real daemon.
func TestTranscripts(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob("testdata/transcripts/*.txt")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 10 {
		t.Fatalf("found only %d transcripts", len(files))
	}
	// The golden handshake first: with -update the others then expand the refreshed one.
	files = append([]string{HandshakePath}, files...)
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			if f != HandshakePath && !*update {
				t.Parallel() // with -update the others expand the refreshed handshake, so they wait for it
			}
			// A daemon of its own: no transcript sees another's connections, sessions or config edits.
			RunTranscript(t, Start(t), f, *update)
		})
	}
}

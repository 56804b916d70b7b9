package rpctest

import (
	"os"
	"path/filepath"
	"testing"
)

// TestSopTranscripts plays testdata/transcripts/sop/*.txt against a daemon whose install holds the supervised
// SOP "deploy" (sopInstall): the run methods' shapes and errors on the wire.
func TestSopTranscripts(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob("testdata/transcripts/sop/*.txt")
	if err != nil || len(files) == 0 {
		t.Fatalf("no SOP transcripts: %v", err)
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			t.Parallel()
			cfgDir := filepath.Join(ShortTempDir(t), "install")
			if err := os.MkdirAll(cfgDir, 0o700); err != nil {
				t.Fatal(err)
			}
			RunTranscript(t, StartOn(t, cfgDir, WithConfig(sopInstall(t, cfgDir))), f, *update)
		})
	}
}

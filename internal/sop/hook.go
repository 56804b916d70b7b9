package sop

// Crash points of the authoring writes: a test build (-tags zeroclaw_crashhooks) kills the process at the one
// ZEROCLAW_TEST_CRASH_AT names; in the production binary crashAt is nil.
const (
	CrashSaveBetweenFiles   = "sop-save-between-files"    // the journal is written, neither file replaced yet
	CrashCreateBeforePublic = "sop-create-before-publish" // the staging directory is complete, not yet renamed
)

var crashAt func(point string)

func crashPoint(p string) {
	if crashAt != nil {
		crashAt(p)
	}
}

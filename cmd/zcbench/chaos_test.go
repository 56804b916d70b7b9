package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// A short chaos against the real binary: the daemon is killed several times while every kind of client writes
// and the operator's tools run, and every invariant is checked and holds. CI runs a longer one (.ci/run).
func TestChaosShort(t *testing.T) {
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), []string{"chaos", "-bin", testBinary, "-duration", "15s", "-seed", "16"}, &stdout, &stderr)
	out := stdout.String()
	if code != 0 {
		t.Fatalf("chaos exit code %d:\n%s\n%s", code, out, stderr.String())
	}
	for _, want := range []string{
		"seed 16",
		"PASS every acknowledged message present exactly once",
		"PASS every ACP session with an acknowledged turn resumes",
		"PASS config.toml parsed after every one of",
		"PASS every acknowledged upload complete at its path",
		"PASS every acknowledged memory stored",
		"PASS no scheduled job ran twice for one due time",
		"PASS every acknowledged SOP run ended exactly once",
		"PASS no temporary files left",
		"PASS the daemon kept its SQLite locks through every operator tool",
		"PASS every backup taken restores, passes integrity_check and holds every turn acknowledged before it began",
		"PASS every Telegram update recorded once, none lost, none answered twice",
		"PASS every MQTT message recorded exactly once, none lost, answered at most once",
		"every invariant holds",
		"\nchaos: 13 passed, 0 failed\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("chaos output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, " 0 kills") {
		t.Errorf("the daemon was never killed:\n%s", out)
	}
}

// The checkers find what they exist to find.
func TestCheckTurns(t *testing.T) {
	turns := map[string]*turnRec{
		"chaos chat w0 turn 1 end": {session: "s", mode: "chat", acked: true},
		"chaos chat w0 turn 2 end": {session: "s", mode: "chat", acked: true},
		"chaos chat w0 turn 3 end": {session: "s", mode: "chat", acked: false},
		"chaos chat w0 turn 4 end": {session: "s", mode: "chat", acked: false},
	}
	hist := map[string][]message{"s": {
		{"user", "chaos chat w0 turn 1 end"}, {"assistant", "[memory] chaos chat w0 turn 1 end"},
		{"user", "chaos chat w0 turn 2 end"}, {"user", "chaos chat w0 turn 2 end"}, // duplicated, answer lost
		{"user", "chaos chat w0 turn 3 end"}, // cut by a kill: allowed
		{"user", "chaos chat w0 turn 4 end"}, {"assistant", "chaos chat w0 turn 4 end"}, {"assistant", "chaos chat w0 turn 4 end"},
	}}
	got := checkTurns(turns, hist)
	want := []string{
		`acknowledged chat turn "chaos chat w0 turn 2 end": 2 user messages, want exactly 1`,
		`acknowledged chat turn "chaos chat w0 turn 2 end": 0 assistant messages, want exactly 1`,
		`unacknowledged chat turn "chaos chat w0 turn 4 end": 2 assistant messages, want at most 1`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("checkTurns:\n got %q\nwant %q", got, want)
	}
}

func TestCheckConfigValue(t *testing.T) {
	for _, c := range []struct {
		disk, acked, inflight string
		ok                    bool
	}{
		{"v2", "v2", "", true},
		{"v3", "v2", "v3", true},  // saved, not yet answered
		{"v1", "v2", "v3", false}, // an acknowledged set lost
		{"", "", "v1", true},      // nothing acknowledged yet
		{"v9", "v2", "", false},   // a value nobody sent
	} {
		if msg := checkConfigValue(c.disk, c.acked, c.inflight); (msg == "") != c.ok {
			t.Errorf("checkConfigValue(%q, %q, %q) = %q, want ok=%v", c.disk, c.acked, c.inflight, msg, c.ok)
		}
	}
}

func TestCheckCronLog(t *testing.T) {
	if got := checkCronLog("chaos-cron-1\nchaos-cron-2\n"); len(got) != 0 {
		t.Errorf("distinct runs reported: %q", got)
	}
	got := checkCronLog("chaos-cron-1\nchaos-cron-2\nchaos-cron-1\n")
	if len(got) != 1 || got[0] != "chaos-cron-1 ran 2 times for one due time" {
		t.Errorf("a job run twice: %q", got)
	}
}

// Only runs older than the newest 96 (the retention of 100 less the SOP's concurrency) may be missing as pruned.
func TestMayBePruned(t *testing.T) {
	for _, c := range []struct {
		i, n int
		want bool
	}{{0, 50, false}, {0, 96, false}, {0, 97, true}, {3, 100, true}, {4, 100, false}, {99, 100, false}, {163, 260, true}, {164, 260, false}} {
		if got := mayBePruned(c.i, c.n); got != c.want {
			t.Errorf("mayBePruned(%d, %d) = %v, want %v", c.i, c.n, got, c.want)
		}
	}
}

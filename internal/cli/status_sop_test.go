package cli

import (
	"strings"
	"testing"

	"github.com/zeroclaw-go/zeroclaw/internal/api"
)

// The status line of the SOP runtime says where runs are kept, and in capitals when they fell back to memory.
func TestSopLine(t *testing.T) {
	for _, c := range []struct {
		st   api.SopStatus
		want string
	}{
		{api.SopStatus{Store: "sqlite", Durable: true, Path: "/h/.zeroclaw/data/sop/runs.db", Loaded: 2, ActiveRuns: 1, WaitingRuns: 1},
			"2 loaded, 0 disabled, 1 active runs (1 waiting for approval); runs kept in /h/.zeroclaw/data/sop/runs.db"},
		{api.SopStatus{Store: "memory", Warning: "open runs.db: permission denied"},
			"RUNS IN MEMORY ONLY, LOST AT RESTART: open runs.db: permission denied (zeroclaw doctor says how to fix it)"},
		{api.SopStatus{Store: "memory"}, "runs in memory only (as configured)"},
	} {
		if got := sopLine(nil, c.st); !strings.Contains(got, c.want) {
			t.Errorf("sopLine(%+v) = %q, want it to contain %q", c.st, got, c.want)
		}
	}
}

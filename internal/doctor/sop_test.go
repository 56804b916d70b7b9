package doctor

import (
	"strings"
	"testing"

	"github.com/zeroclaw-go/zeroclaw/internal/api"
)

// TestCheckSop: a memory fallback that was not asked for is an error naming the reason; a durable store and a
// configured memory store are fine; disabled SOPs are a warning.
func TestCheckSop(t *testing.T) {
	for _, c := range []struct {
		st   api.SopStatus
		sev  string
		id   string
		text string
	}{
		{api.SopStatus{Store: "sqlite", Durable: true, Path: "/x/runs.db", Loaded: 2}, api.SeverityOK, "sop-runs-durable", "/x/runs.db"},
		{api.SopStatus{Store: "memory", Warning: "open /x/runs.db: permission denied"}, api.SeverityError, "sop-runs-in-memory", "permission denied"},
		{api.SopStatus{Store: "memory"}, api.SeverityOK, "sop-runs-memory", "as configured"},
	} {
		r := &report{}
		checkSop(r, c.st)
		got := r.res.Results[0]
		if got.Severity != c.sev || got.ID != c.id || !strings.Contains(got.Message, c.text) {
			t.Errorf("%+v: got %+v", c.st, got)
		}
	}
	r := &report{}
	checkSop(r, api.SopStatus{Store: "sqlite", Durable: true, Disabled: 1})
	if len(r.res.Results) != 2 || r.res.Results[1].Severity != api.SeverityWarn {
		t.Fatalf("disabled SOPs: %+v", r.res.Results)
	}
}

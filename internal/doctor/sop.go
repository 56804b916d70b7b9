package doctor

import (
	"fmt"

	"github.com/zeroclaw-go/zeroclaw/internal/api"
)

// checkSop reports where SOP runs are kept. Runs that fell back to memory although the config asks for
// runs.db are an error: an approval or a half-done run is lost at the next restart.
func checkSop(r *report, st api.SopStatus) {
	switch {
	case st.Durable:
		r.ok(CategorySop, "sop-runs-durable", fmt.Sprintf("SOP runs are kept in %s (%d SOPs loaded)", st.Path, st.Loaded))
	case st.Warning != "":
		r.fail(CategorySop, "sop-runs-in-memory", st.Path, "SOP runs are kept in memory only and are lost at restart: "+st.Warning,
			"fix what the error names (permissions of the run state directory, a damaged runs.db: move it aside), then restart the daemon; or set sop.persist_runs = false to accept memory-only runs")
	default:
		r.ok(CategorySop, "sop-runs-memory", fmt.Sprintf("SOP runs are kept in memory only, as configured (%d SOPs loaded)", st.Loaded))
	}
	if st.Disabled > 0 {
		r.warn(CategorySop, "sop-disabled", "", fmt.Sprintf("%d SOP(s) failed to load and are disabled", st.Disabled),
			"zeroclaw sop validate <sops_dir> names the file and line of each problem")
	}
}

package doctor

import (
	"github.com/zeroclaw-go/zeroclaw/internal/api"
)

// checkSop reports where SOP runs are kept. Runs that fell back to memory although the config asks for
// runs.db are an error: an approval or a half-done run is lost at the next restart.
func checkSop(r *report, st api.SopStatus) {
	switch {
	case st.Durable:
		r.ok(CategorySop, "sop-runs-durable", r.t("doctor-sop-runs-durable", "path", st.Path, "count", st.Loaded))
	case st.Warning != "":
		r.fail(CategorySop, "sop-runs-in-memory", st.Path, r.t("doctor-sop-runs-in-memory", "error", st.Warning), r.t("doctor-sop-runs-in-memory-fix"))
	default:
		r.ok(CategorySop, "sop-runs-memory", r.t("doctor-sop-runs-memory", "count", st.Loaded))
	}
	if st.Disabled > 0 {
		r.warn(CategorySop, "sop-disabled", "", r.t("doctor-sop-disabled", "count", st.Disabled), r.t("doctor-sop-disabled-fix"))
	}
}

package doctor

import (
	"github.com/zeroclaw-go/zeroclaw/internal/api"
)

// checkClientVersion warns when clients closed their connection right after initialize without another call:
// zerocode 0.8.2–0.8.4 do that when server_version is not their own release, and it is all we see of the
// refusal. The fix names the setting that advertises another version.
func checkClientVersion(r *report, h *api.HandshakeOnly) {
	if h == nil || h.Count == 0 {
		return
	}
	r.warn(CategoryDaemon, "client-closed-after-initialize", "rpc.server_version",
		r.t("doctor-client-closed-after-initialize", "count", h.Count, "last", h.LastAt, "version", h.ServerVersion),
		r.t("doctor-client-closed-after-initialize-fix"))
}

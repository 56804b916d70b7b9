package doctor

import (
	"fmt"

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
		fmt.Sprintf("%d client connection(s) closed right after initialize without another call (last at %s); an older zerocode (0.8.2-0.8.4) does this when the daemon's server_version (%s) is not its own release",
			h.Count, h.LastAt, h.ServerVersion),
		"advertise your zerocode's version (see zerocode --version): zeroclaw config set rpc.server_version 0.8.4; set it back to empty for zerocode 0.8.6")
}

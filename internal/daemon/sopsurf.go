package daemon

import "github.com/zeroclaw-go/zeroclaw/internal/sop/runfeed"

// SopRunFeed is the live feed of SOP run changes for GET /ws/sops/runs; nil without a SOP engine.
func (g *gatewayDaemon) SopRunFeed() *runfeed.Hub {
	if g.d.sopRuns == nil {
		return nil
	}
	return g.d.sopRuns.Feed()
}

package daemon

import "github.com/zeroclaw-go/zeroclaw/internal/sop/engine"

// SopEngine is the SOP engine for GET /ws/sops/runs; nil when it is off.
func (g *gatewayDaemon) SopEngine() *engine.Engine { return g.d.sops }

package rpc

import (
	"context"

	"github.com/zeroclaw-go/zeroclaw/internal/api"
	"github.com/zeroclaw-go/zeroclaw/internal/router"
)

// Heartbeat is what the heartbeat methods need (a *heartbeat.Heartbeat).
type Heartbeat interface {
	Status() api.HeartbeatStatus
	Runs(ctx context.Context, limit int) (api.HeartbeatRunsResult, error)
}

func (s *Server) registerHeartbeat(h Heartbeat) {
	s.register(api.MethodHeartbeatRuns, handle(api.GrantHeartbeatRead, func(ctx context.Context, _ *Peer, p *api.HeartbeatRunsParams) (api.HeartbeatRunsResult, error) {
		if err := router.NonNegative("limit", p.Limit); err != nil {
			return api.HeartbeatRunsResult{}, err
		}
		return h.Runs(ctx, p.Limit)
	}))
}

func equalHeartbeat(a, b *api.HeartbeatStatus) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}

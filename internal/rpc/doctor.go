package rpc

import (
	"context"

	"github.com/zeroclaw-go/zeroclaw/internal/api"
)

// registerDoctor serves doctor/run: the inspection runs in the daemon, beside the connection's other requests
// (its provider probes take seconds).
func (s *Server) registerDoctor(run func(ctx context.Context, p api.DoctorRunParams) api.DoctorResult) {
	m := handle(api.GrantDoctorRun, func(ctx context.Context, _ *Peer, p *api.DoctorRunParams) (api.DoctorResult, error) {
		return run(ctx, *p), nil
	})
	m.Concurrent = true
	s.register(api.MethodDoctorRun, m)
}

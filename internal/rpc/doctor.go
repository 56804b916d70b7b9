package rpc

import (
	"context"

	"github.com/zeroclaw-go/zeroclaw/internal/api"
)

// registerDoctor serves doctor/run: the inspection runs in the daemon, beside the connection's other requests
// (its provider probes take seconds). As with status, the install's paths go to an admin principal only: a
// restricted device or user gets the same findings with every path replaced (see redactPaths).
func (s *Server) registerDoctor(run func(ctx context.Context, p api.DoctorRunParams) api.DoctorResult) {
	m := handle(api.GrantDoctorRun, func(ctx context.Context, p *Peer, params *api.DoctorRunParams) (api.DoctorResult, error) {
		res := run(ctx, *params)
		if p == nil || p.Principal() == nil || !p.Principal().Admin {
			res = s.redactDoctor(res)
		}
		return res, nil
	})
	m.Concurrent = true
	s.register(api.MethodDoctorRun, m)
}

// redactDoctor drops the findings' path and log_path fields and writes the install's roots in the messages and
// fixes as <config_dir>, <data_dir>, <endpoint>, any other absolute path as <path>.
func (s *Server) redactDoctor(res api.DoctorResult) api.DoctorResult {
	info := s.opts.Info
	redact := pathRedactor([2]string{info.ConfigFile, "<config_file>"}, [2]string{info.Endpoint, "<endpoint>"},
		[2]string{info.DataDir, "<data_dir>"}, [2]string{info.ConfigDir, "<config_dir>"})
	out := res
	out.LogPath = ""
	out.Results = make([]api.DiagResult, len(res.Results))
	for i, r := range res.Results {
		r.Path, r.Message, r.Fix = "", redact(r.Message), redact(r.Fix)
		out.Results[i] = r
	}
	return out
}

package rpc

import (
	"context"
	"regexp"
	"strings"

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

// absPath is an absolute path standing as a word of a message (not the path part of a URL: "//host" follows
// a ':' and "/api" follows the host, neither of which starts a word here).
var absPath = regexp.MustCompile(`(^|[\s(=\[<'"])(/[^\s'"(),;\]>]*)`)

// redactDoctor drops the findings' path and log_path fields and writes the install's roots in the messages and
// fixes as <config_dir>, <data_dir>, <endpoint>, any other absolute path as <path>.
func (s *Server) redactDoctor(res api.DoctorResult) api.DoctorResult {
	info := s.opts.Info
	var pairs []string
	for _, kv := range [][2]string{{info.ConfigFile, "<config_file>"}, {info.Endpoint, "<endpoint>"},
		{info.DataDir, "<data_dir>"}, {info.ConfigDir, "<config_dir>"}} {
		if kv[0] != "" && kv[0] != "/" {
			pairs = append(pairs, kv[0], kv[1])
		}
	}
	roots := strings.NewReplacer(pairs...) // longest first among nested roots: file and data dir before the dir
	redact := func(s string) string {
		return absPath.ReplaceAllString(roots.Replace(s), "${1}<path>")
	}
	out := res
	out.LogPath = ""
	out.Results = make([]api.DiagResult, len(res.Results))
	for i, r := range res.Results {
		r.Path, r.Message, r.Fix = "", redact(r.Message), redact(r.Fix)
		out.Results[i] = r
	}
	return out
}

package gateway

import (
	"encoding/json"
	"errors"
	"net/http"
	"strings"

	"github.com/zeroclaw-go/zeroclaw/internal/api"
	"github.com/zeroclaw-go/zeroclaw/internal/sop"
)

// The SOP authoring routes (upstream's api_sop_author.rs), each one sops/* method behind the gateway's
// checks: reading needs sops:read, writing sops:write (the method refuses the caller otherwise). Bodies are a
// Sop (POST /api/sops, PUT /api/sops/{name}) or the draft methods' params.
func (s *Server) sopAuthorRoutes(mux *http.ServeMux) {
	s.handle(mux, "GET /api/sops", s.authed(s.shaped(api.MethodSopsList, noParams, func(v any) any { return map[string]any{"sops": v} })))
	s.handle(mux, "POST /api/sops", s.authed(s.rpcRoute(api.MethodSopsCreate, sopBody(""))))
	s.handle(mux, "PUT /api/sops/{name}", s.authed(s.rpcRoute(api.MethodSopsSave, sopBody("name"))))
	s.handle(mux, "DELETE /api/sops/{name}", s.authed(s.rpcRoute(api.MethodSopsDelete, fromRequest(noBody, "name"))))
	s.handle(mux, "GET /api/sops/{name}/graph", s.authed(s.rpcRoute(api.MethodSopsGraph, fromRequest(noBody, "name"))))
	s.handle(mux, "GET /api/sops/{name}/full", s.authed(s.rpcRoute(api.MethodSopsGet, fromRequest(noBody, "name"))))
	s.handle(mux, "POST /api/sops/wire-draft", s.authed(s.rpcRoute(api.MethodSopsWireDraft, fromRequest(requiredBody))))
	s.handle(mux, "POST /api/sops/graph-draft", s.authed(s.rpcRoute(api.MethodSopsGraphDraft, fromRequest(requiredBody))))
	s.handle(mux, "GET /api/sops/trigger-sources", s.authed(s.rpcRoute(api.MethodSopsTriggerSources, noParams)))
	s.handle(mux, "GET /api/sops/graph-legend", s.authed(s.granted(api.GrantSopsRead, fixed(sop.CanonicalLegend()))))
}

// sopBody makes {sop: <body>} of a JSON object body; with pathName, the SOP is saved under the URL's name
// (a body naming another SOP is refused, as upstream) and original_name is that name, so a save cannot rename.
func sopBody(pathName string) paramsFunc {
	return func(r *http.Request) (json.RawMessage, error) {
		var body map[string]json.RawMessage
		if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
			var mbe *http.MaxBytesError
			if errors.As(err, &mbe) {
				return nil, errors.New("request body too large")
			}
			return nil, errors.New("body must be a SOP as a JSON object: " + strings.TrimPrefix(err.Error(), "json: "))
		}
		if body == nil {
			return nil, errors.New("body must be a SOP as a JSON object")
		}
		p := map[string]any{}
		if pathName != "" {
			name := r.PathValue(pathName)
			var bn string
			if raw, ok := body["name"]; ok && json.Unmarshal(raw, &bn) == nil && bn != "" && bn != name {
				return nil, errors.New("body name '" + bn + "' does not match URL name '" + name + "'")
			}
			body["name"], _ = json.Marshal(name)
			p["original_name"] = name
		}
		p["sop"] = body
		return json.Marshal(p)
	}
}

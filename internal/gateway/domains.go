package gateway

import (
	"encoding/json"
	"errors"
	"net/http"
	"strings"

	"github.com/zeroclaw-go/zeroclaw/internal/api"
)

// domainRoutes are the /api/ mirrors of the cron, memory, cost and logs methods: params from the path, the
// query and the JSON body, the method's result in upstream's wrapping where upstream wraps it.
func (s *Server) domainRoutes(mux *http.ServeMux) {
	s.handle(mux, "GET /api/cron", s.authed(s.rpcRoute(api.MethodCronList, queryParams)))
	s.handle(mux, "POST /api/cron", s.authed(s.rpcRoute(api.MethodCronAdd, merged(nil, true))))
	s.handle(mux, "GET /api/cron/settings", s.authed(s.rpcRoute(api.MethodCronSettings, noParams)))
	s.handle(mux, "PATCH /api/cron/{id}", s.authed(s.rpcRoute(api.MethodCronPatch, merged([]string{"id"}, true))))
	s.handle(mux, "DELETE /api/cron/{id}", s.authed(s.rpcRoute(api.MethodCronDelete, merged([]string{"id"}, false))))
	s.handle(mux, "GET /api/cron/{id}/runs", s.authed(s.rpcRoute(api.MethodCronRuns, merged([]string{"id"}, false))))
	s.handle(mux, "POST /api/cron/{id}/run", s.authed(s.rpcRoute(api.MethodCronTrigger, merged([]string{"id"}, false))))

	s.handle(mux, "GET /api/memory", s.authed(s.memoryGet))
	s.handle(mux, "POST /api/memory", s.authed(s.shaped(api.MethodMemoryStore, merged(nil, true),
		func(any) any { return map[string]any{"status": "ok"} })))
	s.handle(mux, "DELETE /api/memory/{key}", s.authed(s.shaped(api.MethodMemoryDelete, merged([]string{"key"}, false),
		func(res any) any { return map[string]any{"status": "ok", "deleted": true, "result": res} })))

	s.handle(mux, "GET /api/cost", s.authed(s.shaped(api.MethodCostQuery, queryParams,
		func(res any) any { return map[string]any{"cost": res} })))
	s.handle(mux, "GET /api/logs", s.authed(s.rpcRoute(api.MethodLogsQuery, queryParams)))
}

// memoryGet is GET /api/memory: with query, since or until a search (limit 50, as upstream), else a list.
func (s *Server) memoryGet(w http.ResponseWriter, r *http.Request, c caller) error {
	q := r.URL.Query()
	if q.Get("query") != "" || q.Get("since") != "" || q.Get("until") != "" {
		return s.rpcRoute(api.MethodMemorySearch, func(r *http.Request) (json.RawMessage, error) {
			p := map[string]any{"query": q.Get("query"), "limit": 50}
			for _, k := range []string{"since", "until", "agent"} {
				if v := q.Get(k); v != "" {
					p[k] = v
				}
			}
			return json.Marshal(p)
		})(w, r, c)
	}
	return s.rpcRoute(api.MethodMemoryList, queryParams)(w, r, c)
}

// merged builds params from the query, then the JSON object body (when body), then the named path values.
func merged(pathKeys []string, body bool) paramsFunc {
	return func(r *http.Request) (json.RawMessage, error) {
		m := map[string]json.RawMessage{}
		if raw, _ := queryParams(r); raw != nil {
			_ = json.Unmarshal(raw, &m)
		}
		if body {
			var b map[string]json.RawMessage
			if err := json.NewDecoder(r.Body).Decode(&b); err != nil {
				var mbe *http.MaxBytesError
				if errors.As(err, &mbe) {
					return nil, errors.New("request body too large")
				}
				return nil, errors.New("body must be a JSON object: " + strings.TrimPrefix(err.Error(), "json: "))
			}
			for k, v := range b {
				m[k] = v
			}
		}
		for _, k := range pathKeys {
			v, _ := json.Marshal(r.PathValue(k))
			m[k] = v
		}
		return json.Marshal(m)
	}
}

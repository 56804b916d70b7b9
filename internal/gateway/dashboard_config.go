package gateway

import (
	"encoding/json"
	"errors"
	"net/http"

	"github.com/zeroclaw-go/zeroclaw/internal/api"
	"github.com/zeroclaw-go/zeroclaw/internal/gateway/dashboard"
	"github.com/zeroclaw-go/zeroclaw/internal/jsonrpc"
)

// The /api/config routes in upstream's shapes (crates/zeroclaw-gateway/src/api_config.rs; the dashboard's
// ListResponseEntry, PatchOp, PatchResponse and MapKeysResponse in web/src/lib/api.ts). The socket's
// config/list is unchanged (zerocode parses it); only these HTTP answers are reshaped.

// configRoutes replace the config/list mirrors with upstream's shapes and add PATCH and OPTIONS.
func (s *Server) configRoutes(mux *http.ServeMux) {
	s.handle(mux, "GET /api/config", s.authed(s.configTree))
	s.handle(mux, "PATCH /api/config", s.authed(s.granted(api.GrantConfigUpdate, s.configPatch)))
	s.handle(mux, "OPTIONS /api/config", s.authed(s.configSchema))
	s.handle(mux, "GET /api/config/list", s.authed(s.configList))
}

// listEntries is config/list for prefix, as raw entries (their fields as the method sends them).
func (s *Server) listEntries(r *http.Request, c caller, prefix string) ([]map[string]any, error) {
	p, _ := json.Marshal(api.ConfigListParams{Prefix: prefix})
	list, err := callAs[struct {
		Entries []map[string]any `json:"entries"`
	}](s, r, c, api.MethodConfigList, p)
	return list.Entries, err
}

// configList is GET /api/config/list: upstream's ListResponse (dashboard.List).
func (s *Server) configList(w http.ResponseWriter, r *http.Request, c caller) error {
	entries, err := s.listEntries(r, c, r.URL.Query().Get("prefix"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, dashboard.List(entries))
	return nil
}

// configTree is GET /api/config: the config as one object (dashboard.Tree).
func (s *Server) configTree(w http.ResponseWriter, r *http.Request, c caller) error {
	entries, err := s.listEntries(r, c, "")
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, dashboard.Tree(entries))
	return nil
}

// configSchema is OPTIONS /api/config: a JSON Schema of the config (dashboard.Schema).
func (s *Server) configSchema(w http.ResponseWriter, r *http.Request, c caller) error {
	entries, err := s.listEntries(r, c, "")
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, dashboard.Schema(entries))
	return nil
}

// configPatch is PATCH /api/config: upstream's JSON Patch (dashboard.PlanPatch). test ops are checked first,
// against the config in force; then every add and replace is one config/set-many (all or nothing), then each
// remove a config/delete. The answer is {saved, results}.
func (s *Server) configPatch(w http.ResponseWriter, r *http.Request, c caller) error {
	var ops []dashboard.PatchOp
	err := readJSON(r, &ops)
	var se *statusError
	if errors.As(err, &se) && se.code == http.StatusRequestEntityTooLarge {
		return err
	}
	if err != nil || len(ops) == 0 {
		return fail(http.StatusBadRequest, "body must be a JSON Patch array of {op, path, value}")
	}
	kinds := map[string]map[string]any{}
	plan, err := dashboard.PlanPatch(ops, func(path string) (map[string]any, error) {
		if e, ok := kinds[path]; ok {
			return e, nil
		}
		entries, err := s.listEntries(r, c, path)
		if err != nil {
			return nil, err
		}
		for _, e := range entries {
			if e["path"] == path {
				kinds[path] = e
				return e, nil
			}
		}
		return nil, nil // not a leaf we list (config/set says why)
	})
	var pe *dashboard.PatchError
	if errors.As(err, &pe) {
		return failWith(pe.Status, pe.Body)
	}
	if err != nil {
		return err
	}
	if len(plan.Sets) > 0 {
		p, _ := json.Marshal(map[string]any{"sets": plan.Sets})
		if _, err := s.o.Daemon.Call(r.Context(), c.identity(), api.MethodConfigSetMany, p); err != nil {
			return err
		}
	}
	for _, path := range plan.Removes {
		p, _ := json.Marshal(api.ConfigDeleteParams{Prop: path})
		if _, err := s.o.Daemon.Call(r.Context(), c.identity(), api.MethodConfigDelete, p); err != nil {
			return err
		}
	}
	writeJSON(w, http.StatusOK, map[string]any{"saved": true, "results": plan.Results})
	return nil
}

// mapKeys is GET /api/config/map-keys: config/map-keys, except that a section this schema does not have (an
// upstream section such as channels.telegram or mcp_bundles) is {path, keys: []}, as upstream answers an
// empty one; a path that names one of our leaves that is no map stays an error.
func (s *Server) mapKeys(w http.ResponseWriter, r *http.Request, c caller) error {
	path := r.URL.Query().Get("path")
	p, _ := json.Marshal(api.ConfigMapKeysParams{Path: path})
	res, err := s.o.Daemon.Call(r.Context(), c.identity(), api.MethodConfigMapKeys, p)
	var je *jsonrpc.Error
	if err != nil && path != "" && errors.As(err, &je) && je.Code == api.CodeInvalidParams {
		g, _ := json.Marshal(map[string]string{"prop": path})
		if _, gerr := s.o.Daemon.Call(r.Context(), c.identity(), api.MethodConfigGet, g); gerr != nil {
			entries, lerr := s.listEntries(r, c, path)
			if lerr == nil && len(entries) == 0 {
				writeJSON(w, http.StatusOK, api.ConfigMapKeysResult{Path: path, Keys: []string{}})
				return nil
			}
		}
	}
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, res)
	return nil
}

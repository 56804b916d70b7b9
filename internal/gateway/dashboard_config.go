package gateway

import (
	"encoding/json"
	"errors"
	"net/http"
	"strings"

	"github.com/zeroclaw-go/zeroclaw/internal/api"
	"github.com/zeroclaw-go/zeroclaw/internal/config"
	"github.com/zeroclaw-go/zeroclaw/internal/errmap"
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
	s.configEditRoutes(mux)
}

// listEntries is config/list for prefix, as raw entries (their fields as the method sends them).
func (s *Server) listEntries(r *http.Request, c caller, prefix string) ([]map[string]any, error) {
	p, _ := json.Marshal(api.ConfigListParams{Prefix: prefix})
	list, err := callAs[struct {
		Entries []map[string]any `json:"entries"`
	}](s, r, c, api.MethodConfigList, p)
	return list.Entries, err
}

// configList is GET /api/config/list: upstream's ListResponse (dashboard.List), its drifted the properties
// config.toml changed behind the daemon (as GET /api/config/drift).
func (s *Server) configList(w http.ResponseWriter, r *http.Request, c caller) error {
	entries, err := s.listEntries(r, c, r.URL.Query().Get("prefix"))
	if err != nil {
		return err
	}
	list := dashboard.List(entries)
	if d, err := s.drift(r, c); err == nil && len(d.Drifted) > 0 {
		list["drifted"] = d.Drifted
	}
	writeJSON(w, http.StatusOK, list)
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

// configPatch is PATCH /api/config: upstream's JSON Patch (dashboard.PlanPatch) as one config/patch: its test
// ops checked under the config write lock, its writes (add, replace, remove, comment) validated as a whole and
// saved in one atomic write, or nothing is. A patch writing a property config.toml changed
// behind the daemon is 409 config_changed_externally unless X-ZeroClaw-Override-Drift: true. The answer is
// {saved, results}; a failure is upstream's ConfigApiError envelope.
func (s *Server) configPatch(w http.ResponseWriter, r *http.Request, c caller) error {
	var ops []dashboard.PatchOp
	err := readJSON(r, &ops)
	var se *statusError
	if errors.As(err, &se) && se.code == http.StatusRequestEntityTooLarge {
		return err
	}
	if err != nil || len(ops) == 0 {
		return failWith(http.StatusBadRequest, dashboard.Envelope(dashboard.CodeValueTypeMismatch,
			"body must be a JSON Patch array of {op, path, value}", "", -1))
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
		return nil, nil // not a leaf we list (config/patch says why)
	})
	var pe *dashboard.PatchError
	if errors.As(err, &pe) {
		return failWith(pe.Status, pe.Body)
	}
	if err != nil {
		return err
	}
	if len(plan.Ops) > 0 {
		p, _ := json.Marshal(api.ConfigPatchParams{Ops: plan.Ops,
			OverrideDrift: strings.EqualFold(r.Header.Get("X-ZeroClaw-Override-Drift"), "true")})
		if _, err := s.o.Daemon.Call(r.Context(), c.identity(), api.MethodConfigPatch, p); err != nil {
			return configError(err)
		}
	}
	writeJSON(w, http.StatusOK, map[string]any{"saved": true, "results": plan.Results})
	return nil
}

// configError is a config method's failure as upstream's ConfigApiError envelope, keeping its status, with the
// op's index (config/patch's ops are the request's, one for one) and path. A refusal by the grant check stays
// as the gateway writes every other one.
func configError(err error) error {
	je, ok := errors.AsType[*jsonrpc.Error](err)
	if !ok || je.Code == api.CodeForbidden || je.Code == api.CodeAuthRequired {
		return err
	}
	code := dashboard.CodeValidationFailed
	switch {
	case errors.Is(err, config.ErrDrifted):
		code = dashboard.CodeConfigChangedExternally
	case errors.Is(err, config.ErrUnknownProp):
		code = dashboard.CodePathNotFound
	case je.Code == api.CodeInternalError:
		code = "internal_error"
	}
	status := errmap.HTTPStatus(err)
	if code == dashboard.CodePathNotFound {
		status = http.StatusNotFound // upstream's status of path_not_found
	}
	path, op := "", -1
	if d, ok := je.Data.(map[string]any); ok {
		path, _ = d["prop"].(string)
		switch n := d["index"].(type) {
		case int:
			op = n
		case float64:
			op = int(n)
		}
	}
	return failWith(status, dashboard.Envelope(code, je.Message, path, op))
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

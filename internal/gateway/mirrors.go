package gateway

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"slices"
	"strings"

	"github.com/zeroclaw-go/zeroclaw/internal/api"
	"github.com/zeroclaw-go/zeroclaw/internal/gateway/dashboard"
)

// mirrorRoutes are upstream's /api/ mirrors of doctor/run, personality/*, skills/* and the read-only config/*
// helpers, and /api/sessions/running (session/list, only the sessions with a turn running), each one method with
// its params from the query, the JSON body and the path. Upstream routes with no method in our table (session
// rename, POST /api/sessions/{id}/messages, /api/skills/slash-option-kinds, the per-agent skill and workspace
// routes) are not served.
func (s *Server) mirrorRoutes(mux *http.ServeMux) {
	s.handle(mux, "GET /api/sessions/running", s.authed(s.shaped(api.MethodSessionList, queryParams, dashboard.Running)))

	s.handle(mux, "GET /api/doctor", s.authed(s.rpcRoute(api.MethodDoctorRun, queryParams)))
	s.handle(mux, "POST /api/doctor", s.authed(s.rpcRoute(api.MethodDoctorRun, fromRequest(optionalBody))))

	s.handle(mux, "GET /api/personality", s.authed(s.rpcRoute(api.MethodPersonalityList, queryParams)))
	s.handle(mux, "GET /api/personality/templates", s.authed(s.rpcRoute(api.MethodPersonalityTemplates, queryParams)))
	s.handle(mux, "GET /api/personality/{filename}", s.authed(s.rpcRoute(api.MethodPersonalityGet, fromRequest(noBody, "filename"))))
	s.handle(mux, "PUT /api/personality/{filename}", s.authed(s.rpcRoute(api.MethodPersonalityPut, fromRequest(requiredBody, "filename"))))

	s.handle(mux, "GET /api/skills/bundles", s.authed(s.rpcRoute(api.MethodSkillsBundles, noParams)))
	s.handle(mux, "GET /api/skills/bundles/{alias}/skills", s.authed(s.rpcRoute(api.MethodSkillsList, fromRequest(noBody, "bundle=alias"))))
	s.handle(mux, "POST /api/skills/bundles/{alias}/skills", s.authed(s.rpcRoute(api.MethodSkillsWrite, fromRequest(requiredBody, "bundle=alias"))))
	s.handle(mux, "GET /api/skills/bundles/{alias}/skills/{name}", s.authed(s.rpcRoute(api.MethodSkillsRead, fromRequest(noBody, "bundle=alias", "name"))))
	s.handle(mux, "PUT /api/skills/bundles/{alias}/skills/{name}", s.authed(s.rpcRoute(api.MethodSkillsWrite, fromRequest(requiredBody, "bundle=alias", "name"))))
	s.handle(mux, "DELETE /api/skills/bundles/{alias}/skills/{name}", s.authed(s.rpcRoute(api.MethodSkillsDelete, fromRequest(noBody, "bundle=alias", "name"))))

	s.handle(mux, "GET /api/config/templates", s.authed(s.rpcRoute(api.MethodConfigTemplates, noParams)))
	s.handle(mux, "GET /api/config/sections", s.authed(s.rpcRoute(api.MethodConfigSections, noParams)))
	s.handle(mux, "GET /api/config/sections/{section}", s.authed(s.configSection))
	s.handle(mux, "POST /api/config/sections/{section}/items/{key}", s.authed(s.granted(api.GrantConfigUpdate, s.sectionItem)))
	s.handle(mux, "GET /api/config/status", s.authed(s.rpcRoute(api.MethodConfigStatus, noParams)))
	s.handle(mux, "GET /api/config/catalog", s.authed(s.rpcRoute(api.MethodConfigCatalog, noParams)))
	s.handle(mux, "GET /api/config/catalog/models", s.authed(s.rpcRoute(api.MethodConfigCatalogModels, queryParams)))
	s.handle(mux, "GET /api/config/map-keys", s.authed(s.mapKeys))
	s.handle(mux, "GET /api/config/resolve-alias-source", s.authed(s.rpcRoute(api.MethodConfigResolveAliasSource, queryParams)))
	s.handle(mux, "POST /api/config/map-key", s.authed(s.rpcRoute(api.MethodConfigMapKeyCreate, fromRequest(optionalBody))))
	s.handle(mux, "DELETE /api/config/map-key", s.authed(s.rpcRoute(api.MethodConfigMapKeyDelete, queryParams)))
	s.handle(mux, "POST /api/config/rename-map-key", s.authed(s.rpcRoute(api.MethodConfigMapKeyRename, fromRequest(requiredBody))))
}

// bodyMode says whether a route reads a JSON object body.
type bodyMode int

const (
	noBody       bodyMode = iota
	optionalBody          // an empty body is no params
	requiredBody
)

// fromRequest builds params from the query, then the JSON object body, then the path values, each named
// "param=pathkey" or just "key" when both names are the same. Path values win: a body cannot retarget a route.
func fromRequest(body bodyMode, path ...string) paramsFunc {
	return func(r *http.Request) (json.RawMessage, error) {
		m := map[string]json.RawMessage{}
		if raw, _ := queryParams(r); raw != nil {
			_ = json.Unmarshal(raw, &m)
		}
		if body != noBody {
			var b map[string]json.RawMessage
			err := json.NewDecoder(r.Body).Decode(&b)
			switch {
			case errors.Is(err, io.EOF) && body == optionalBody:
			case err != nil:
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
		for _, p := range path {
			param, key, ok := strings.Cut(p, "=")
			if !ok {
				key = param
			}
			v, _ := json.Marshal(r.PathValue(key))
			m[param] = v
		}
		return json.Marshal(m)
	}
}

// configSection is GET /api/config/sections/{section}: the config/sections entry with that key (404 for a key
// config/sections does not list) and upstream's PickerResponse beside it: section, help, and the items to pick
// from (the provider families of config/catalog for providers.models, badge "configured" where an alias
// exists; the entry keys of any other map-keyed section). A section without a picker is 404, as upstream:
// its fields are GET /api/config/list?prefix=<section>.
func (s *Server) configSection(w http.ResponseWriter, r *http.Request, c caller) error {
	list, err := callAs[api.ConfigSectionsResult](s, r, c, api.MethodConfigSections, nil)
	if err != nil {
		return err
	}
	key := r.PathValue("section")
	i := slices.IndexFunc(list.Sections, func(e api.ConfigSectionEntry) bool { return e.Key == key })
	if i < 0 {
		return fail(http.StatusNotFound, "unknown config section: "+key)
	}
	e := list.Sections[i]
	if !e.HasPicker {
		return fail(http.StatusNotFound, "section `"+key+"` has no picker; render its fields via GET /api/config/list?prefix="+key)
	}
	items, err := s.pickerItems(r, c, key)
	if err != nil {
		return err
	}
	out := map[string]any{}
	if b, err := json.Marshal(e); err == nil {
		_ = json.Unmarshal(b, &out)
	}
	out["section"], out["items"] = key, items
	writeJSON(w, http.StatusOK, out)
	return nil
}

// pickerItems are upstream's PickerItem rows of a section with a picker.
func (s *Server) pickerItems(r *http.Request, c caller, key string) ([]map[string]any, error) {
	if key == "providers.models" {
		cat, err := callAs[api.CatalogResult](s, r, c, api.MethodConfigCatalog, nil)
		if err != nil {
			return nil, err
		}
		return dashboard.ProviderItems(cat, s.o.Daemon.Config()), nil
	}
	p, _ := json.Marshal(api.ConfigMapKeysParams{Path: key})
	mk, err := callAs[api.ConfigMapKeysResult](s, r, c, api.MethodConfigMapKeys, p)
	if err != nil {
		return nil, err
	}
	return dashboard.KeyItems(mk.Keys), nil
}

// sectionItem is POST /api/config/sections/{section}/items/{key}: upstream's select, which makes the picked
// entry exist (config/map-key-create) and answers {fields_prefix, created}: the prefix whose fields
// GET /api/config/list?prefix= then lists. For providers.models the key is a family and the body's alias
// (default "default") the entry.
func (s *Server) sectionItem(w http.ResponseWriter, r *http.Request, c caller) error {
	section, key := r.PathValue("section"), r.PathValue("key")
	var body struct {
		Alias string `json:"alias"`
	}
	if err := readJSON(r, &body); err != nil {
		return err
	}
	path := section
	if section == "providers.models" {
		path = section + "." + key
		key = body.Alias
		if key == "" {
			key = "default"
		}
	}
	p, _ := json.Marshal(api.ConfigMapKeyParams{Path: path, Key: key})
	created, err := callAs[api.ConfigMapKeyCreateResult](s, r, c, api.MethodConfigMapKeyCreate, p)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"fields_prefix": path + "." + key, "created": created.Created})
	return nil
}

package gateway

import (
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"strings"

	"github.com/zeroclaw-go/zeroclaw/internal/api"
	"github.com/zeroclaw-go/zeroclaw/internal/jsonrpc"
)

// The /api/config routes in upstream's shapes (crates/zeroclaw-gateway/src/api_config.rs; the dashboard's
// ListResponseEntry, PatchOp, PatchResponse and MapKeysResponse in web/src/lib/api.ts). The socket's
// config/list is unchanged (zerocode parses it); only these HTTP answers are reshaped.

// unsetDisplay is upstream's display value of an unset leaf.
const unsetDisplay = "<unset>"

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
	res, err := s.o.Daemon.Call(r.Context(), c.identity(), api.MethodConfigList, p)
	if err != nil {
		return nil, err
	}
	var list struct {
		Entries []map[string]any `json:"entries"`
	}
	if raw, err := json.Marshal(res); err != nil || json.Unmarshal(raw, &list) != nil {
		return nil, internal("gateway: config/list result", err)
	}
	return list.Entries, nil
}

// configList is GET /api/config/list: upstream's ListResponse. Each entry's value is upstream's display
// string ("true", "43817", `["a", "b"]`, "<unset>"), absent for a secret, and its kind kebab-case
// ("alias-ref", "string-array"); drifted is empty (see fixed).
func (s *Server) configList(w http.ResponseWriter, r *http.Request, c caller) error {
	entries, err := s.listEntries(r, c, r.URL.Query().Get("prefix"))
	if err != nil {
		return err
	}
	for _, e := range entries {
		if k, ok := e["kind"].(string); ok {
			e["kind"] = strings.ReplaceAll(k, "_", "-")
		}
		if secret, _ := e["is_secret"].(bool); secret {
			delete(e, "value")
			continue
		}
		e["value"] = display(e["value"])
	}
	writeJSON(w, http.StatusOK, map[string]any{"entries": entries, "drifted": []any{}})
	return nil
}

// display is upstream's display string of a JSON value: a string as it is, other values as TOML writes them.
func display(v any) string {
	switch v := v.(type) {
	case nil:
		return unsetDisplay
	case string:
		return v
	case []any:
		parts := make([]string, len(v))
		for i, e := range v {
			b, _ := json.Marshal(e)
			parts[i] = string(b)
		}
		return "[" + strings.Join(parts, ", ") + "]"
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// configTree is GET /api/config: the config as one object (upstream answers its masked Config), built from
// config/list's leaves: typed values, a secret as "****" when set.
func (s *Server) configTree(w http.ResponseWriter, r *http.Request, c caller) error {
	entries, err := s.listEntries(r, c, "")
	if err != nil {
		return err
	}
	root := map[string]any{}
	for _, e := range entries {
		path, _ := e["path"].(string)
		v := e["value"]
		if secret, _ := e["is_secret"].(bool); secret {
			v = nil
			if populated, _ := e["populated"].(bool); populated {
				v = "****"
			}
		}
		place(root, strings.Split(path, "."), v)
	}
	writeJSON(w, http.StatusOK, root)
	return nil
}

// place sets the leaf at path in the tree rooted at m.
func place(m map[string]any, path []string, v any) {
	for _, seg := range path[:len(path)-1] {
		next, ok := m[seg].(map[string]any)
		if !ok {
			next = map[string]any{}
			m[seg] = next
		}
		m = next
	}
	m[path[len(path)-1]] = v
}

// configSchema is OPTIONS /api/config: a JSON Schema of the config, an object per table and a typed leaf per
// config/list entry (its kind, enum variants and description).
func (s *Server) configSchema(w http.ResponseWriter, r *http.Request, c caller) error {
	entries, err := s.listEntries(r, c, "")
	if err != nil {
		return err
	}
	root := map[string]any{"$schema": "https://json-schema.org/draft/2020-12/schema", "title": "Config",
		"type": "object", "properties": map[string]any{}}
	for _, e := range entries {
		path, _ := e["path"].(string)
		node := root
		segs := strings.Split(path, ".")
		for _, seg := range segs[:len(segs)-1] {
			props := node["properties"].(map[string]any)
			next, ok := props[seg].(map[string]any)
			if !ok {
				next = map[string]any{"type": "object", "properties": map[string]any{}}
				props[seg] = next
			}
			node = next
		}
		leaf := map[string]any{}
		kind, _ := e["kind"].(string)
		switch kind {
		case api.PropKindBool:
			leaf["type"] = "boolean"
		case api.PropKindInteger:
			leaf["type"] = "integer"
		case api.PropKindFloat:
			leaf["type"] = "number"
		case api.PropKindStringArray:
			leaf["type"], leaf["items"] = "array", map[string]any{"type": "string"}
		default:
			leaf["type"] = "string"
		}
		if v, ok := e["enum_variants"].([]any); ok && len(v) > 0 {
			leaf["enum"] = v
		}
		if d, ok := e["description"].(string); ok && d != "" {
			leaf["description"] = d
		}
		if secret, _ := e["is_secret"].(bool); secret {
			leaf["writeOnly"] = true
		}
		node["properties"].(map[string]any)[segs[len(segs)-1]] = leaf
	}
	writeJSON(w, http.StatusOK, root)
	return nil
}

// patchOp is one JSON Patch operation of PATCH /api/config (upstream's PatchOp; comment is not supported).
type patchOp struct {
	Op      string          `json:"op"`
	Path    string          `json:"path"`
	Value   json.RawMessage `json:"value"`
	Comment string          `json:"comment"`
}

// dotted turns a JSON Pointer ("/gateway/port") into a property path; a dotted path passes as it is.
func dotted(p string) string {
	if !strings.HasPrefix(p, "/") {
		return p
	}
	segs := strings.Split(p[1:], "/")
	for i, s := range segs {
		segs[i] = strings.ReplaceAll(strings.ReplaceAll(s, "~1", "/"), "~0", "~")
	}
	return strings.Join(segs, ".")
}

// configPatch is PATCH /api/config: upstream's JSON Patch. test ops are checked first, against the config in
// force; then every add and replace is one config/set-many (all or nothing), then each remove a config/delete.
// A value may be upstream's display string ("true", "43817"): it is read as the leaf's kind. The answer is
// {saved, results} with each result's value as upstream displays it (a secret: populated instead).
func (s *Server) configPatch(w http.ResponseWriter, r *http.Request, c caller) error {
	var ops []patchOp
	if err := readJSON(r, &ops); err != nil {
		var se *statusError
		if errors.As(err, &se) && se.code == http.StatusRequestEntityTooLarge {
			return err
		}
		return fail(http.StatusBadRequest, "body must be a JSON Patch array of {op, path, value}")
	}
	if len(ops) == 0 {
		return fail(http.StatusBadRequest, "body must be a JSON Patch array of {op, path, value}")
	}
	kinds := map[string]map[string]any{}
	entryOf := func(path string) (map[string]any, error) {
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
	}
	type set struct {
		Prop  string          `json:"prop"`
		Value json.RawMessage `json:"value"`
	}
	var sets []set
	var removes []string
	results := make([]map[string]any, len(ops))
	for i, op := range ops {
		path := dotted(op.Path)
		if path == "" {
			return failWith(http.StatusBadRequest, map[string]any{"error": "op needs a path", "op_index": i})
		}
		e, err := entryOf(path)
		if err != nil {
			return err
		}
		secret := e != nil && e["is_secret"] == true
		switch op.Op {
		case "test":
			if secret {
				return failWith(http.StatusBadRequest, map[string]any{"error": "a secret cannot be tested", "path": path, "op_index": i})
			}
			var want any
			if err := json.Unmarshal(op.Value, &want); err != nil {
				return failWith(http.StatusBadRequest, map[string]any{"error": "test needs a value", "path": path, "op_index": i})
			}
			var have any
			if e != nil {
				have = e["value"]
			}
			if display(want) != display(have) {
				return failWith(http.StatusConflict, map[string]any{"error": "test failed: expected " + strconv.Quote(display(want)) +
					", got " + strconv.Quote(display(have)), "path": path, "op_index": i})
			}
			results[i] = map[string]any{"op": op.Op, "path": path, "value": display(have)}
		case "add", "replace":
			if len(op.Value) == 0 {
				return failWith(http.StatusBadRequest, map[string]any{"error": op.Op + " needs a value", "path": path, "op_index": i})
			}
			v := coerce(op.Value, e)
			sets = append(sets, set{Prop: path, Value: v})
			if secret {
				results[i] = map[string]any{"op": op.Op, "path": path, "populated": string(v) != `""`}
			} else {
				var shown any
				_ = json.Unmarshal(v, &shown)
				results[i] = map[string]any{"op": op.Op, "path": path, "value": display(shown)}
			}
		case "remove":
			removes = append(removes, path)
			results[i] = map[string]any{"op": op.Op, "path": path}
		default:
			return failWith(http.StatusBadRequest, map[string]any{"error": "unsupported op " + strconv.Quote(op.Op) +
				" (add, replace, remove, test)", "path": path, "op_index": i})
		}
	}
	if len(sets) > 0 {
		p, _ := json.Marshal(map[string]any{"sets": sets})
		if _, err := s.o.Daemon.Call(r.Context(), c.identity(), api.MethodConfigSetMany, p); err != nil {
			return err
		}
	}
	for _, path := range removes {
		p, _ := json.Marshal(api.ConfigDeleteParams{Prop: path})
		if _, err := s.o.Daemon.Call(r.Context(), c.identity(), api.MethodConfigDelete, p); err != nil {
			return err
		}
	}
	writeJSON(w, http.StatusOK, map[string]any{"saved": true, "results": results})
	return nil
}

// coerce reads a display string as the leaf's kind ("43817" for an integer, "true" for a bool, a JSON or
// comma-separated list for a string array); any other value passes as it is.
func coerce(v json.RawMessage, e map[string]any) json.RawMessage {
	var str string
	if e == nil || json.Unmarshal(v, &str) != nil {
		return v
	}
	kind, _ := e["kind"].(string)
	switch kind {
	case api.PropKindBool, api.PropKindInteger, api.PropKindFloat:
		var x any
		if json.Unmarshal([]byte(strings.TrimSpace(str)), &x) == nil {
			return json.RawMessage(strings.TrimSpace(str))
		}
	case api.PropKindStringArray:
		var list []string
		if json.Unmarshal([]byte(str), &list) == nil {
			b, _ := json.Marshal(list)
			return b
		}
		list = []string{}
		for _, p := range strings.Split(str, ",") {
			if p = strings.TrimSpace(p); p != "" {
				list = append(list, p)
			}
		}
		b, _ := json.Marshal(list)
		return b
	}
	return v
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

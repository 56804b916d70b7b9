package dashboard

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"

	"github.com/zeroclaw-go/zeroclaw/internal/api"
)

// The /api/config shapes (crates/zeroclaw-gateway/src/api_config.rs; the dashboard's ListResponseEntry,
// PatchOp, PatchResponse and MapKeysResponse in web/src/lib/api.ts), built from config/list's raw entries
// (their fields as the method sends them). The socket's config/list is unchanged (zerocode parses it); only
// the HTTP answers are reshaped.

// UnsetDisplay is upstream's display value of an unset leaf.
const UnsetDisplay = "<unset>"

// List is upstream's ListResponse of entries: each entry's value is upstream's display string ("true",
// "43817", `["a", "b"]`, "<unset>"), absent for a secret, and its kind kebab-case ("alias-ref",
// "string-array"); drifted is empty. The entries are reshaped in place.
func List(entries []map[string]any) map[string]any {
	for _, e := range entries {
		if k, ok := e["kind"].(string); ok {
			e["kind"] = strings.ReplaceAll(k, "_", "-")
		}
		if secret, _ := e["is_secret"].(bool); secret {
			delete(e, "value")
			continue
		}
		e["value"] = Display(e["value"])
	}
	return map[string]any{"entries": entries, "drifted": []any{}}
}

// Display is upstream's display string of a JSON value: a string as it is, other values as TOML writes them.
func Display(v any) string {
	switch v := v.(type) {
	case nil:
		return UnsetDisplay
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

// Tree is the config as one object (upstream answers its masked Config), built from config/list's leaves:
// typed values, a secret as "****" when set.
func Tree(entries []map[string]any) map[string]any {
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
	return root
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

// Schema is a JSON Schema of the config, an object per table and a typed leaf per config/list entry (its
// kind, enum variants and description).
func Schema(entries []map[string]any) map[string]any {
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
	return root
}

// PatchOp is one JSON Patch operation of PATCH /api/config (upstream's PatchOp, with its comment op).
type PatchOp struct {
	Op      string          `json:"op"`
	Path    string          `json:"path"`
	Value   json.RawMessage `json:"value"`
	Comment *string         `json:"comment"`
}

// Dotted turns a JSON Pointer ("/gateway/port") into a property path; a dotted path passes as it is.
func Dotted(p string) string {
	if !strings.HasPrefix(p, "/") {
		return p
	}
	segs := strings.Split(p[1:], "/")
	for i, s := range segs {
		segs[i] = strings.ReplaceAll(strings.ReplaceAll(s, "~1", "/"), "~0", "~")
	}
	return strings.Join(segs, ".")
}

// Plan is what a JSON Patch does: one config/patch op per op (all or nothing, in order; a test is checked
// there, under the write lock); Results are the answer's results, one per op.
type Plan struct {
	Ops     []api.ConfigPatchOp
	Results []map[string]any
}

// Codes of upstream's ConfigApiError envelope ({code, message, path?, op_index?}, crates/zeroclaw-config
// api_error.rs), which the dashboard's apiFetch reads as a structured error.
const (
	CodePathNotFound            = "path_not_found"
	CodeValidationFailed        = "validation_failed"
	CodeConfigChangedExternally = "config_changed_externally"
	CodeOpNotSupported          = "op_not_supported"
	CodeSecretTestForbidden     = "secret_test_forbidden"
	CodeValueTypeMismatch       = "value_type_mismatch"
)

// PatchError is an op the patch refuses: the HTTP status and the body to answer with.
type PatchError struct {
	Status int
	Body   map[string]any
}

func (e *PatchError) Error() string { s, _ := e.Body["error"].(string); return s }

// Envelope is upstream's ConfigApiError body, with our "error" beside its message; path and op_index only when
// known (op < 0: none).
func Envelope(code, msg, path string, op int) map[string]any {
	b := map[string]any{"error": msg, "code": code, "message": msg}
	if path != "" {
		b["path"] = path
	}
	if op >= 0 {
		b["op_index"] = op
	}
	return b
}

func refuse(status int, code string, i int, path, msg string) *PatchError {
	return &PatchError{Status: status, Body: Envelope(code, msg, path, i)}
}

// PlanPatch checks ops and plans them. entry is the config/list entry of a path (nil when it is not a leaf we
// list; config/patch says why); its error is returned as it is. A value may be upstream's display string ("true", "43817"): it is read as the leaf's kind. Each
// result's value is as upstream displays it (a secret: populated instead); a comment is echoed. A refused op
// is a *PatchError.
func PlanPatch(ops []PatchOp, entry func(path string) (map[string]any, error)) (Plan, error) {
	plan := Plan{Results: make([]map[string]any, len(ops))}
	for i, op := range ops {
		path := Dotted(op.Path)
		if path == "" {
			return Plan{}, refuse(http.StatusBadRequest, CodePathNotFound, i, "", "op needs a path")
		}
		e, err := entry(path)
		if err != nil {
			return Plan{}, err
		}
		secret := e != nil && e["is_secret"] == true
		res := map[string]any{"op": op.Op, "path": path}
		if op.Comment != nil && op.Op != "test" {
			res["comment"] = *op.Comment
		}
		switch op.Op {
		case "test":
			if secret {
				return Plan{}, refuse(http.StatusBadRequest, CodeSecretTestForbidden, i, path, "a secret cannot be tested")
			}
			var want any
			if err := json.Unmarshal(op.Value, &want); err != nil {
				return Plan{}, refuse(http.StatusBadRequest, CodeValueTypeMismatch, i, path, "test needs a value")
			}
			// Checked by config/patch, under the write lock, with the rest of the patch.
			plan.Ops = append(plan.Ops, api.ConfigPatchOp{Op: api.PatchOpTest, Prop: path, Value: Coerce(op.Value, e)})
			var have any
			if e != nil {
				have = e["value"]
			}
			res["value"] = Display(have)
		case "add", "replace":
			if len(op.Value) == 0 {
				return Plan{}, refuse(http.StatusBadRequest, CodeValueTypeMismatch, i, path, op.Op+" needs a value")
			}
			v := Coerce(op.Value, e)
			plan.Ops = append(plan.Ops, api.ConfigPatchOp{Op: api.PatchOpSet, Prop: path, Value: v, Comment: op.Comment})
			if secret {
				res["populated"] = string(v) != `""`
			} else {
				var shown any
				_ = json.Unmarshal(v, &shown)
				res["value"] = Display(shown)
			}
		case "remove":
			if op.Comment != nil {
				return Plan{}, refuse(http.StatusBadRequest, CodeValueTypeMismatch, i, path,
					"a remove deletes the key, so it cannot carry a comment")
			}
			plan.Ops = append(plan.Ops, api.ConfigPatchOp{Op: api.PatchOpDelete, Prop: path})
			if secret {
				res["populated"] = false
			} else {
				res["value"] = nil
			}
		case "comment":
			if op.Comment == nil {
				return Plan{}, refuse(http.StatusBadRequest, CodeValueTypeMismatch, i, path, "a comment op needs a comment")
			}
			plan.Ops = append(plan.Ops, api.ConfigPatchOp{Op: api.PatchOpComment, Prop: path, Comment: op.Comment})
		case "move", "copy":
			return Plan{}, refuse(http.StatusBadRequest, CodeOpNotSupported, i, path, "JSON Patch op "+strconv.Quote(op.Op)+
				" is not supported (add, replace, remove, test, comment)")
		default:
			return Plan{}, refuse(http.StatusBadRequest, CodeOpNotSupported, i, path, "unknown JSON Patch op "+strconv.Quote(op.Op)+
				" (add, replace, remove, test, comment)")
		}
		plan.Results[i] = res
	}
	return plan, nil
}

// Coerce reads a display string as the leaf's kind ("43817" for an integer, "true" for a bool, a JSON or
// comma-separated list for a string array); any other value passes as it is.
func Coerce(v json.RawMessage, e map[string]any) json.RawMessage {
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

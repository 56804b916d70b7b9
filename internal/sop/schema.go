package sop

import (
	"encoding/json"
	"fmt"
	"sort"
)

// ValidateValue checks data against a step schema fragment, the compact JSON-Schema subset upstream
// supports: "type" (object, array, string, number, integer, boolean, null), "required", "properties" and
// "items". Without "type", properties or required mean an object and items an array; an empty fragment
// accepts anything. A malformed fragment is an error naming what is wrong; so is the first value that does
// not fit, with its path ("$.a.0").
func ValidateValue(schema json.RawMessage, data any) error {
	var node map[string]json.RawMessage
	if err := json.Unmarshal(schema, &node); err != nil || node == nil {
		return fmt.Errorf("schema: fragment must be an object")
	}
	return validateNode(node, data, "$")
}

func validateNode(node map[string]json.RawMessage, data any, path string) error {
	var required []string
	if r, ok := node["required"]; ok {
		if err := json.Unmarshal(r, &required); err != nil {
			return fmt.Errorf("schema: required must be an array of strings")
		}
	}
	var props map[string]map[string]json.RawMessage
	if p, ok := node["properties"]; ok {
		if err := json.Unmarshal(p, &props); err != nil {
			return fmt.Errorf("schema: properties must be an object of schema fragments")
		}
	}
	var items map[string]json.RawMessage
	if it, ok := node["items"]; ok {
		if err := json.Unmarshal(it, &items); err != nil || items == nil {
			return fmt.Errorf("schema: items must be a schema fragment")
		}
	}
	typ := ""
	if t, ok := node["type"]; ok {
		if err := json.Unmarshal(t, &typ); err != nil {
			return fmt.Errorf("schema: type must be a string")
		}
	} else if len(props) > 0 || len(required) > 0 {
		typ = "object"
	} else if items != nil {
		typ = "array"
	}
	mismatch := func(want string) error {
		return fmt.Errorf("%s: expected %s, got %s", path, want, kindOf(data))
	}
	switch typ {
	case "":
		return nil
	case "object":
		obj, ok := data.(map[string]any)
		if !ok {
			return mismatch("object")
		}
		for _, k := range required {
			if _, ok := obj[k]; !ok {
				return fmt.Errorf("%s: missing required key '%s'", path, k)
			}
		}
		keys := make([]string, 0, len(props))
		for k := range props {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			if v, ok := obj[k]; ok {
				if err := validateNode(props[k], v, path+"."+k); err != nil {
					return err
				}
			}
		}
		return nil
	case "array":
		arr, ok := data.([]any)
		if !ok {
			return mismatch("array")
		}
		if items != nil {
			for i, v := range arr {
				if err := validateNode(items, v, fmt.Sprintf("%s.%d", path, i)); err != nil {
					return err
				}
			}
		}
		return nil
	case "string":
		if _, ok := data.(string); !ok {
			return mismatch("string")
		}
	case "number":
		if _, ok := data.(float64); !ok {
			return mismatch("number")
		}
	case "integer":
		if f, ok := data.(float64); !ok || f != float64(int64(f)) {
			return mismatch("integer")
		}
	case "boolean":
		if _, ok := data.(bool); !ok {
			return mismatch("boolean")
		}
	case "null":
		if data != nil {
			return mismatch("null")
		}
	default:
		return fmt.Errorf("schema: unsupported type '%s'", typ)
	}
	return nil
}

func kindOf(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case float64:
		return "number"
	case string:
		return "string"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return fmt.Sprintf("%T", v)
}

package rpc

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"unicode"

	"github.com/zeroclaw-go/zeroclaw/internal/api"
	"github.com/zeroclaw-go/zeroclaw/internal/jsonrpc"
)

// decodeParams decodes raw params into dst (a pointer to a struct). Absent params count as {}. Every documented
// snake_case field also accepts its camelCase spelling; unknown fields are ignored; a wrong type is -32602.
func decodeParams(raw json.RawMessage, dst any) error {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return nil
	}
	if raw[0] != '{' {
		return invalidParams("params must be an object")
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil {
		return invalidParams("params must be an object")
	}
	known := jsonFields(reflect.TypeOf(dst).Elem())
	for key, val := range fields {
		if _, ok := known[key]; ok {
			continue
		}
		snake := snakeCase(key)
		if _, ok := known[snake]; !ok || snake == key {
			continue
		}
		if _, dup := fields[snake]; !dup {
			fields[snake] = val
		}
		delete(fields, key)
	}
	for key, val := range fields {
		if _, ok := known[key]; !ok {
			continue
		}
		fv := reflect.New(known[key])
		if err := json.Unmarshal(val, fv.Interface()); err != nil {
			return invalidParams(fmt.Sprintf("invalid params: %s must be %s", key, typeWord(known[key])))
		}
	}
	normalized, err := json.Marshal(fields)
	if err != nil {
		return invalidParams("invalid params")
	}
	if err := json.Unmarshal(normalized, dst); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			return invalidParams(fmt.Sprintf("invalid params: %s must be %s", te.Field, typeWord(te.Type)))
		}
		return invalidParams("invalid params: " + err.Error())
	}
	return nil
}

func invalidParams(msg string) *jsonrpc.Error {
	return jsonrpc.NewError(api.CodeInvalidParams, msg, nil)
}

var fieldCache sync.Map // reflect.Type -> map[string]reflect.Type

// jsonFields lists the JSON names of t's fields with their types.
func jsonFields(t reflect.Type) map[string]reflect.Type {
	if m, ok := fieldCache.Load(t); ok {
		return m.(map[string]reflect.Type)
	}
	m := map[string]reflect.Type{}
	if t.Kind() == reflect.Struct {
		for i := range t.NumField() {
			f := t.Field(i)
			if !f.IsExported() {
				continue
			}
			name := f.Name
			if tag, ok := f.Tag.Lookup("json"); ok {
				n, _, _ := strings.Cut(tag, ",")
				if n == "-" {
					continue
				}
				if n != "" {
					name = n
				}
			}
			m[name] = f.Type
		}
	}
	fieldCache.Store(t, m)
	return m
}

// snakeCase turns "protocolVersion" into "protocol_version"; already-snake names are unchanged.
func snakeCase(s string) string {
	var b strings.Builder
	for i, r := range s {
		if unicode.IsUpper(r) {
			if i > 0 {
				b.WriteByte('_')
			}
			b.WriteRune(unicode.ToLower(r))
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

func typeWord(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "a boolean"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "an integer"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Slice, reflect.Array:
		return "an array"
	case reflect.Map, reflect.Struct:
		return "an object"
	}
	return "a JSON value"
}

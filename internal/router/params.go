package router

import (
	"bytes"
	"encoding"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/zeroclaw-go/zeroclaw/internal/jsonrpc"
)

// DecodeParams decodes raw params into dst (a pointer to a struct). Absent params count as {}. A field is matched
// by its documented name (snake_case) or that name's camelCase spelling, exactly; unknown fields are ignored; a
// wrong type is -32602. A field given twice (under both spellings, or the same one repeated) with different values
// is -32602 too: which one would win is not something a client should have to guess.
//
// Only the known fields are decoded, each straight from the params bytes: an unknown field, however large, costs
// nothing but a scan.
func DecodeParams(raw json.RawMessage, dst any) error { return decodeParams(raw, false, dst) }

// DecodeValidParams is DecodeParams on params known to be valid JSON (a request's params when
// jsonrpc.Request.ParamsValidated): they are not validated again (the frame of an upload chunk is mostly one
// 1.4 MB string; every pass over it counts).
func DecodeValidParams(raw json.RawMessage, dst any) error { return decodeParams(raw, true, dst) }

func decodeParams(raw json.RawMessage, valid bool, dst any) error {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return nil
	}
	if raw[0] != '{' || !valid && !jsonrpc.Valid(raw) {
		return invalidParams("params must be an object")
	}
	v := reflect.ValueOf(dst).Elem()
	known := jsonFields(v.Type())
	var givenBuf [8]givenField
	given := givenBuf[:0] // the fields set so far, with the spelling that set each
	for key, val := range jsonrpc.RawMembers(raw) {
		f, ok := lookupField(known, key)
		if !ok {
			continue
		}
		prev := -1
		for i := range given {
			if given[i].index == f.index {
				prev = i
				break
			}
		}
		target := v.Field(f.index).Addr()
		if prev >= 0 {
			target = reflect.New(f.typ)
		}
		if plainString(f.typ, val) { // the common case, and a large one (data_b64): no decoder needed
			target.Elem().SetString(string(val[1 : len(val)-1]))
		} else if err := json.Unmarshal(val, target.Interface()); err != nil {
			return invalidParams(fmt.Sprintf("invalid params: %s must be %s", f.name, typeWord(f.typ)))
		}
		if prev >= 0 {
			if !reflect.DeepEqual(target.Elem().Interface(), v.Field(f.index).Interface()) {
				return invalidParams(fmt.Sprintf("invalid params: conflicting values for %s (given as %q and %q)",
					f.name, jsonrpc.UnquoteKey(given[prev].key), jsonrpc.UnquoteKey(key)))
			}
			continue
		}
		given = append(given, givenField{index: f.index, key: key})
	}
	return nil
}

// plainString reports whether val, a valid JSON value, is a string without escapes or invalid UTF-8 going into a
// plain string field (one with no unmarshal method of its own): its bytes between the quotes are then exactly
// what json.Unmarshal would store.
func plainString(typ reflect.Type, val []byte) bool {
	return typ.Kind() == reflect.String && !reflect.PointerTo(typ).Implements(jsonUnmarshaler) &&
		!reflect.PointerTo(typ).Implements(textUnmarshaler) && len(val) >= 2 && val[0] == '"' &&
		bytes.IndexByte(val, '\\') < 0 && utf8.Valid(val[1:len(val)-1])
}

var (
	jsonUnmarshaler = reflect.TypeFor[json.Unmarshaler]()
	textUnmarshaler = reflect.TypeFor[encoding.TextUnmarshaler]()
)

// givenField records that a params field was set, and under which quoted key.
type givenField struct {
	index int
	key   []byte
}

// lookupField finds the field a quoted key names: by its documented name, or by that name's camelCase spelling.
// A key without escapes or capitals is looked up without allocating.
func lookupField(known map[string]field, q []byte) (field, bool) {
	inner := q[1 : len(q)-1]
	var key string
	if bytes.IndexByte(inner, '\\') < 0 {
		if f, ok := known[string(inner)]; ok {
			return f, true
		}
		if !hasUpper(inner) {
			return field{}, false
		}
		key = string(inner)
	} else {
		key = jsonrpc.UnquoteKey(q)
		if f, ok := known[key]; ok {
			return f, true
		}
	}
	name := snakeCase(key)
	if name == key {
		return field{}, false
	}
	f, ok := known[name]
	return f, ok
}

func hasUpper(b []byte) bool {
	for _, c := range b {
		if 'A' <= c && c <= 'Z' || c >= utf8.RuneSelf {
			return true
		}
	}
	return false
}

// NonNegative refuses a negative count or index (0 keeps its documented meaning, e.g. "no limit").
func NonNegative(name string, v int) error {
	if v < 0 {
		return invalidParams(fmt.Sprintf("invalid params: %s must not be negative, got %d", name, v))
	}
	return nil
}

func invalidParams(msg string) *jsonrpc.Error {
	return jsonrpc.NewError(jsonrpc.CodeInvalidParams, msg, nil)
}

var fieldCache sync.Map // reflect.Type -> map[string]field

// field is one decodable field of a params struct.
type field struct {
	name  string // its JSON name
	index int
	typ   reflect.Type
}

// jsonFields maps the JSON names of t's exported fields to the fields.
func jsonFields(t reflect.Type) map[string]field {
	if m, ok := fieldCache.Load(t); ok {
		return m.(map[string]field)
	}
	m := map[string]field{}
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
			m[name] = field{name: name, index: i, typ: f.Type}
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

package config

import (
	"fmt"
	"reflect"
	"strings"

	"github.com/zeroclaw-go/zeroclaw/internal/config/tomledit"
)

// Path is a parsed property path, one element per segment (tomledit.Path has the syntax). Segments naming
// schema fields are kebab→snake translated when resolved (max-tokens ⇒ max_tokens); map keys never are.
type Path = tomledit.Path

// ParsePath parses a property path (valid UTF-8 only). It never panics; a malformed path yields an error wrapping ErrInvalidPath.
func ParsePath(s string) (Path, error) { return tomledit.ParsePath(s) }

// prop is a property path resolved against the schema.
type prop struct {
	path   Path         // canonical segments (field names snake_case, map keys verbatim)
	typ    reflect.Type // type of the addressed value
	leaf   bool         // scalar, pointer-to-scalar or slice: settable with one value
	secret bool         // a secret field or inside one
}

func (p prop) String() string { return p.path.String() }

var configType = reflect.TypeFor[Config]()

// resolve maps a path onto the schema, translating field segments kebab→snake.
func resolve(p Path) (prop, error) {
	r := prop{typ: configType}
	var keys []string // allowed map keys for the next segment, from a `keys` tag
	for i, seg := range p {
		t := r.typ
		switch t.Kind() {
		case reflect.Struct:
			name := strings.ReplaceAll(seg, "-", "_")
			f, ok := fieldByTag(t, name)
			if !ok {
				f, ok = fieldByAlso(t, name)
			}
			if !ok {
				return prop{}, fmt.Errorf("%w: %s", ErrUnknownProp, p[:i+1])
			}
			name = tagName(f)
			r.path = append(r.path, name)
			r.typ = f.Type
			r.secret = r.secret || isSecretName(name)
			keys = nil
			if k := f.Tag.Get("keys"); k != "" {
				keys = strings.Split(k, "|")
			}
		case reflect.Map:
			if seg == "" || (keys != nil && !contains(keys, seg)) {
				return prop{}, fmt.Errorf("%w: %s", ErrUnknownProp, p[:i+1])
			}
			keys = nil
			r.path = append(r.path, seg)
			r.typ = t.Elem()
		default:
			return prop{}, fmt.Errorf("%w: %s", ErrUnknownProp, p[:i+1])
		}
	}
	k := r.typ.Kind()
	if k == reflect.Pointer {
		k = r.typ.Elem().Kind()
	}
	r.leaf = k != reflect.Struct && k != reflect.Map
	return r, nil
}

// fieldByTag finds the struct field whose toml tag name is name.
func fieldByTag(t reflect.Type, name string) (reflect.StructField, bool) {
	for i := range t.NumField() {
		f := t.Field(i)
		if tagName(f) == name {
			return f, true
		}
	}
	return reflect.StructField{}, false
}

// fieldByAlso finds the struct field that also answers to name (an `also` tag: upstream's serde alias, such
// as heartbeat.channel for heartbeat.target); the property resolves to the field's own name.
func fieldByAlso(t reflect.Type, name string) (reflect.StructField, bool) {
	for i := range t.NumField() {
		f := t.Field(i)
		if a := f.Tag.Get("also"); a != "" && a == name {
			return f, true
		}
	}
	return reflect.StructField{}, false
}

func tagName(f reflect.StructField) string {
	n, _, _ := strings.Cut(f.Tag.Get("toml"), ",")
	return n
}

// isSecretName reports whether a schema field holds secrets (state.md §3).
func isSecretName(name string) bool {
	switch name {
	case "api_key", "password", "extra_headers", "env", "paired_tokens", "db_url", "headers":
		return true
	}
	if strings.HasPrefix(name, "max_") {
		return false // limits such as max_tokens count tokens; they are not tokens
	}
	return strings.HasSuffix(name, "_token") || strings.HasSuffix(name, "_tokens") ||
		strings.HasSuffix(name, "_secret") || strings.HasSuffix(name, "_password")
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

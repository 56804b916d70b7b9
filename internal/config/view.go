package config

import (
	"fmt"
	"reflect"
	"strings"

	"github.com/zeroclaw-go/zeroclaw/internal/api"
	"github.com/zeroclaw-go/zeroclaw/internal/secrets"
)

// Entry is one leaf of the config as config/list reports it (the wire type). Secret values are masked.
type Entry = api.ConfigEntry

// view converts a config value into plain JSON-friendly data (maps keyed by TOML names), masking secrets.
func view(v reflect.Value, secret bool) any {
	switch v.Kind() {
	case reflect.Struct:
		out := make(map[string]any, v.NumField())
		for i := range v.NumField() {
			name := tagName(v.Type().Field(i))
			out[name] = view(v.Field(i), secret || isSecretName(name))
		}
		return out
	case reflect.Map:
		out := make(map[string]any, v.Len())
		iter := v.MapRange()
		for iter.Next() {
			out[iter.Key().String()] = view(iter.Value(), secret)
		}
		return out
	case reflect.Pointer:
		if v.IsNil() {
			return nil
		}
		return view(v.Elem(), secret)
	case reflect.Slice:
		out := make([]any, v.Len())
		for i := range v.Len() {
			out[i] = view(v.Index(i), secret)
		}
		return out
	case reflect.String:
		if secret && v.String() != "" {
			return secrets.Masked
		}
		return v.String()
	case reflect.Int:
		return v.Int()
	case reflect.Float64:
		return v.Float()
	case reflect.Bool:
		return v.Bool()
	}
	return fmt.Sprint(v.Interface())
}

// lookup returns the value at a resolved path in cfg; ok is false when a map entry along it does not exist.
func lookup(cfg *Config, p Path) (reflect.Value, bool) {
	v := reflect.ValueOf(cfg).Elem()
	for _, seg := range p {
		switch v.Kind() {
		case reflect.Struct:
			f, _ := fieldByTag(v.Type(), seg)
			v = v.FieldByIndex(f.Index)
		case reflect.Map:
			v = v.MapIndex(reflect.ValueOf(seg))
			if !v.IsValid() {
				return reflect.Value{}, false
			}
		default:
			return reflect.Value{}, false
		}
	}
	return v, true
}

// defaultAt returns the default of a resolved leaf: the base config's value for fixed sections, a fresh entry's
// default below a map key.
func defaultAt(p Path) reflect.Value {
	v := reflect.ValueOf(base()).Elem()
	for _, seg := range p {
		switch v.Kind() {
		case reflect.Struct:
			f, _ := fieldByTag(v.Type(), seg)
			v = v.FieldByIndex(f.Index)
		case reflect.Map:
			elem := reflect.New(v.Type().Elem()).Elem()
			initEntry(elem)
			v = elem
		}
	}
	return v
}

// fieldAt returns the schema field that describes a resolved leaf: the leaf's own field, or, below a map of
// plain values (extra_headers.<name>), the map's field.
func fieldAt(p Path) reflect.StructField {
	t := reflect.TypeFor[Config]()
	var f reflect.StructField
	for _, seg := range p {
		switch t.Kind() {
		case reflect.Struct:
			var ok bool
			if f, ok = fieldByTag(t, seg); !ok {
				return reflect.StructField{}
			}
			t = f.Type
		case reflect.Map:
			t = t.Elem()
		default:
			return reflect.StructField{}
		}
	}
	return f
}

// noteAt returns the note tag of a resolved leaf's schema field, if any.
func noteAt(p Path) string {
	if f := fieldAt(p); f.Type != nil && f.Type.Kind() != reflect.Map {
		return f.Tag.Get("note")
	}
	return ""
}

// kindOf classifies a leaf for config/list (upstream's PropKind) and names its type in words.
func kindOf(t reflect.Type, f reflect.StructField) (kind, hint string) {
	optional := t.Kind() == reflect.Pointer
	if optional {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Bool:
		kind, hint = api.PropKindBool, "bool"
	case reflect.Int:
		kind, hint = api.PropKindInteger, "integer"
	case reflect.Float64:
		kind, hint = api.PropKindFloat, "float"
	case reflect.Slice:
		kind, hint = api.PropKindStringArray, "list of strings"
	default:
		kind, hint = api.PropKindString, "string"
		if f.Tag.Get("enum") != "" {
			kind, hint = api.PropKindEnum, "one of "+strings.ReplaceAll(f.Tag.Get("enum"), "|", ", ")
		} else if f.Tag.Get("alias") != "" {
			kind, hint = api.PropKindAliasRef, "name in "+f.Tag.Get("alias")
		}
	}
	if optional {
		hint = "optional " + hint
	}
	return kind, hint
}

// categoryOf is the label of a path's top-level section: "Core" for top-level keys.
func categoryOf(p Path) string {
	if len(p) < 2 {
		return "Core"
	}
	switch p[0] {
	case "rpc", "acp":
		return strings.ToUpper(p[0])
	}
	words := strings.ReplaceAll(p[0], "_", " ")
	return strings.ToUpper(words[:1]) + words[1:]
}

// populated reports whether a leaf holds a value: not an unset optional, an empty string or an empty list.
func populated(v reflect.Value) bool {
	switch v.Kind() {
	case reflect.Pointer:
		return !v.IsNil()
	case reflect.String, reflect.Slice, reflect.Map:
		return v.Len() > 0
	}
	return true
}

// entryAt describes one leaf for config/list. Secrets carry no value; envProps are the props a ZEROCLAW_
// variable overrides.
func entryAt(p Path, v reflect.Value, secret bool, envProps []string) Entry {
	f := fieldAt(p)
	kind, hint := kindOf(v.Type(), f)
	e := Entry{
		Path: p.String(), Category: categoryOf(p), Kind: kind, TypeHint: hint,
		Populated: populated(v), IsSecret: secret, IsEnvOverridden: contains(envProps, p.String()),
		Description: f.Tag.Get("desc"), AliasSource: f.Tag.Get("alias"),
		Prop: p.String(), Secret: secret, Note: noteAt(p),
	}
	if enum := f.Tag.Get("enum"); enum != "" {
		e.EnumVariants = strings.Split(enum, "|")
	}
	if len(p) > 1 {
		e.Section = p[0]
	}
	if !secret {
		e.Value = view(v, false)
		e.Default = view(defaultAt(p), false)
	}
	return e
}

// isDefault reports whether v equals the default for p (nil and empty slices are the same).
func isDefault(p Path, v reflect.Value) bool {
	d := defaultAt(p)
	if d.Kind() == reflect.Slice && d.Len() == 0 && v.Len() == 0 {
		// An empty list that means something other than the key's absence (allowed_agents = []: none) is
		// written, not removed.
		return v.IsNil() || fieldAt(p).Tag.Get("empty") != "kept"
	}
	return reflect.DeepEqual(d.Interface(), v.Interface())
}

// entries flattens cfg into leaves under prefix, in schema order with sorted map keys.
func entries(v reflect.Value, p Path, secret bool, prefix Path, envProps []string, out *[]Entry) {
	if !p.HasPrefix(prefix) && !prefix.HasPrefix(p) {
		return
	}
	switch v.Kind() {
	case reflect.Struct:
		for i := range v.NumField() {
			name := tagName(v.Type().Field(i))
			entries(v.Field(i), append(p[:len(p):len(p)], name), secret || isSecretName(name), prefix, envProps, out)
		}
		return
	case reflect.Map:
		keys := v.MapKeys()
		names := make([]string, len(keys))
		for i, k := range keys {
			names[i] = k.String()
		}
		for _, k := range sortedKeys(setOf(names)) {
			entries(v.MapIndex(reflect.ValueOf(k)), append(p[:len(p):len(p)], k), secret, prefix, envProps, out)
		}
		return
	}
	if !p.HasPrefix(prefix) {
		return
	}
	*out = append(*out, entryAt(p, v, secret, envProps))
}

func setOf(names []string) map[string]bool {
	m := make(map[string]bool, len(names))
	for _, n := range names {
		m[n] = true
	}
	return m
}

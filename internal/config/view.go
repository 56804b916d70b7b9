package config

import (
	"fmt"
	"reflect"

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

// noteAt returns the note tag of a resolved leaf's schema field, if any.
func noteAt(p Path) string {
	t := reflect.TypeFor[Config]()
	var f reflect.StructField
	for _, seg := range p {
		switch t.Kind() {
		case reflect.Struct:
			var ok bool
			if f, ok = fieldByTag(t, seg); !ok {
				return ""
			}
			t = f.Type
		case reflect.Map:
			t = t.Elem()
			f = reflect.StructField{}
		default:
			return ""
		}
	}
	return f.Tag.Get("note")
}

// isDefault reports whether v equals the default for p (nil and empty slices are the same).
func isDefault(p Path, v reflect.Value) bool {
	d := defaultAt(p)
	if d.Kind() == reflect.Slice && d.Len() == 0 && v.Len() == 0 {
		return true
	}
	return reflect.DeepEqual(d.Interface(), v.Interface())
}

// entries flattens cfg into leaves under prefix, in schema order with sorted map keys.
func entries(v reflect.Value, p Path, secret bool, prefix Path, out *[]Entry) {
	if !p.HasPrefix(prefix) && !prefix.HasPrefix(p) {
		return
	}
	switch v.Kind() {
	case reflect.Struct:
		for i := range v.NumField() {
			name := tagName(v.Type().Field(i))
			entries(v.Field(i), append(p[:len(p):len(p)], name), secret || isSecretName(name), prefix, out)
		}
		return
	case reflect.Map:
		keys := v.MapKeys()
		names := make([]string, len(keys))
		for i, k := range keys {
			names[i] = k.String()
		}
		for _, k := range sortedKeys(setOf(names)) {
			entries(v.MapIndex(reflect.ValueOf(k)), append(p[:len(p):len(p)], k), secret, prefix, out)
		}
		return
	}
	if !p.HasPrefix(prefix) {
		return
	}
	*out = append(*out, Entry{Prop: p.String(), Value: view(v, secret), Secret: secret, Default: view(defaultAt(p), secret), Note: noteAt(p)})
}

func setOf(names []string) map[string]bool {
	m := make(map[string]bool, len(names))
	for _, n := range names {
		m[n] = true
	}
	return m
}

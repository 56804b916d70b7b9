package config

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/zeroclaw-go/zeroclaw/internal/config/tomledit"
)

// decode builds a Config from a parsed document: defaults first, then every known key. Unknown keys become
// warnings (they stay in the file); a value of the wrong type is a *FileError naming its line and key. Every
// such error is collected, in file order, and the keys after it are still decoded.
func decode(d *tomledit.Document) (*Config, []string, []*FileError) {
	cfg := base()
	rv := reflect.ValueOf(cfg).Elem()
	var warnings []string
	var errs []*FileError
	unknown := map[string]int{} // first unknown prefix => first line
	ug := upstreamGrants{}      // permission profiles written in upstream's grants-table form (grantstable.go)
	warnUnknown := func(err error, p Path, line int) {
		msg := strings.TrimPrefix(err.Error(), ErrUnknownProp.Error()+": ")
		if l, seen := unknown[msg]; !seen || line < l {
			unknown[msg] = line
		}
	}
	arr := collectArrayTables(d)
	for i, t := range slices.Concat(d.Tables, d.EmptyInline) {
		if i < len(d.Tables) && arr.owns(i) {
			continue
		}
		if t.Array {
			warnings = append(warnings, fmt.Sprintf("config: unsupported array table [[%s]] at line %d (kept, ignored)", t.Path, t.Line))
			continue
		}
		if ug.table(t.Path) {
			continue
		}
		r, err := resolve(t.Path)
		if err != nil {
			warnUnknown(err, t.Path, t.Line)
			continue
		}
		if r.leaf {
			errs = append(errs, &FileError{File: d.File, Line: t.Line, Column: 1, Key: r.String(), Msg: "expected a value, got a table"})
			continue
		}
		if err := touch(rv, r.path); err != nil {
			errs = append(errs, &FileError{File: d.File, Line: t.Line, Column: 1, Key: r.String(), Msg: err.Error()})
		}
	}
	for _, l := range d.Leaves {
		if arr.leaf(l) {
			continue
		}
		if l.ArrayTable {
			continue
		}
		if handled, err := ug.leaf(l.Path, l.Value); handled {
			if err != nil {
				errs = append(errs, &FileError{File: d.File, Line: l.Line, Column: l.Col, Key: l.Path.String(), Msg: err.Error()})
			}
			continue
		}
		r, err := resolve(l.Path)
		if err != nil {
			warnUnknown(err, l.Path, l.Line)
			continue
		}
		if !r.leaf {
			errs = append(errs, &FileError{File: d.File, Line: l.Line, Column: l.Col, Key: r.String(),
				Msg: fmt.Sprintf("expected a table, got %s", valueKind(l.Value))})
			continue
		}
		if err := setValue(rv, r.path, l.Value); err != nil {
			errs = append(errs, &FileError{File: d.File, Line: l.Line, Column: l.Col, Key: r.String(), Msg: err.Error()})
		}
	}
	ug.apply(cfg)
	errs = append(errs, arr.apply(rv, d.File)...)
	keys := sortedKeys(unknown)
	sort.SliceStable(keys, func(i, j int) bool { return unknown[keys[i]] < unknown[keys[j]] })
	for _, k := range keys {
		warnings = append(warnings, fmt.Sprintf("config: unknown key %s at line %d", k, unknown[k]))
	}
	sort.SliceStable(errs, func(i, j int) bool { return errs[i].Line < errs[j].Line })
	return cfg, warnings, errs
}

// touch makes sure every map entry along path exists (an empty [users.example] table defines the user).
func touch(v reflect.Value, path Path) error {
	for len(path) > 0 {
		switch v.Kind() {
		case reflect.Struct:
			f, _ := fieldByTag(v.Type(), path[0])
			v, path = v.FieldByIndex(f.Index), path[1:]
		case reflect.Map:
			if v.IsNil() {
				v.Set(reflect.MakeMap(v.Type()))
			}
			key := reflect.ValueOf(path[0])
			elem := reflect.New(v.Type().Elem()).Elem()
			if cur := v.MapIndex(key); cur.IsValid() {
				elem.Set(cur)
			} else {
				initEntry(elem)
			}
			if err := touch(elem, path[1:]); err != nil {
				return err
			}
			v.SetMapIndex(key, elem)
			return nil
		default:
			return nil
		}
	}
	return nil
}

// initEntry gives a fresh map entry its type's defaults (and a non-nil map for nested maps).
func initEntry(v reflect.Value) {
	if v.Kind() == reflect.Map {
		v.Set(reflect.MakeMap(v.Type()))
		return
	}
	if v.CanAddr() {
		if d, ok := v.Addr().Interface().(defaulter); ok {
			d.setDefaults()
		}
	}
}

// setValue stores val at the canonical path below v (addressable), creating map entries as needed.
func setValue(v reflect.Value, path Path, val any) error {
	if len(path) == 0 {
		return coerce(v, val)
	}
	switch v.Kind() {
	case reflect.Struct:
		f, ok := fieldByTag(v.Type(), path[0])
		if !ok {
			return fmt.Errorf("%w: %s", ErrUnknownProp, path[0])
		}
		return setValue(v.FieldByIndex(f.Index), path[1:], val)
	case reflect.Map:
		if v.IsNil() {
			v.Set(reflect.MakeMap(v.Type()))
		}
		key := reflect.ValueOf(path[0])
		elem := reflect.New(v.Type().Elem()).Elem()
		if cur := v.MapIndex(key); cur.IsValid() {
			elem.Set(cur)
		} else {
			initEntry(elem)
		}
		if err := setValue(elem, path[1:], val); err != nil {
			return err
		}
		v.SetMapIndex(key, elem)
		return nil
	}
	return fmt.Errorf("%w: %s", ErrUnknownProp, path[0])
}

// coerce assigns a TOML- or JSON-decoded value to a leaf, checking its type.
func coerce(v reflect.Value, val any) error {
	if n, ok := val.(json.Number); ok {
		if i, err := n.Int64(); err == nil {
			val = i
		} else if f, err := n.Float64(); err == nil {
			val = f
		} else {
			return fmt.Errorf("%w: bad number %s", ErrInvalidValue, n)
		}
	}
	bad := func() error {
		return fmt.Errorf("%w: expected %s, got %s", ErrInvalidValue, typeName(v.Type()), valueKind(val))
	}
	switch v.Kind() {
	case reflect.Pointer:
		p := reflect.New(v.Type().Elem())
		if err := coerce(p.Elem(), val); err != nil {
			return err
		}
		v.Set(p)
	case reflect.String:
		s, ok := val.(string)
		if !ok {
			return bad()
		}
		v.SetString(s)
	case reflect.Bool:
		b, ok := val.(bool)
		if !ok {
			return bad()
		}
		v.SetBool(b)
	case reflect.Int, reflect.Int64:
		switch n := val.(type) {
		case int64:
			v.SetInt(n)
		case float64:
			if n != math.Trunc(n) || math.Abs(n) > 1<<53 {
				return bad()
			}
			v.SetInt(int64(n))
		default:
			return bad()
		}
	case reflect.Float64:
		switch n := val.(type) {
		case int64:
			v.SetFloat(float64(n))
		case float64:
			if math.IsNaN(n) || math.IsInf(n, 0) {
				return fmt.Errorf("%w: expected a finite float", ErrInvalidValue)
			}
			v.SetFloat(n)
		default:
			return bad()
		}
	case reflect.Struct, reflect.Map: // an inline table or an [[array table]] entry (mcp.servers)
		return coerceTable(v, val)
	case reflect.Slice:
		items, ok := val.([]any)
		if !ok {
			if ss, ok2 := val.([]string); ok2 {
				v.Set(reflect.ValueOf(append([]string{}, ss...)))
				return nil
			}
			return bad()
		}
		out := reflect.MakeSlice(v.Type(), len(items), len(items))
		for i, it := range items {
			if err := coerce(out.Index(i), it); err != nil {
				if _, table := it.(map[string]any); table && v.Type().Elem().Kind() == reflect.Struct {
					return fmt.Errorf("item %d: %w", i, err)
				}
				return fmt.Errorf("%w: item %d: expected %s, got %s", ErrInvalidValue, i, typeName(v.Type().Elem()), valueKind(it))
			}
		}
		v.Set(out)
	default:
		return bad()
	}
	return nil
}

// coerceString converts an environment variable's text to the leaf's type.
func coerceString(t reflect.Type, s string) (any, error) {
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.String:
		return s, nil
	case reflect.Bool:
		b, err := strconv.ParseBool(strings.TrimSpace(s))
		if err != nil {
			return nil, fmt.Errorf("%w: expected boolean", ErrInvalidValue)
		}
		return b, nil
	case reflect.Int, reflect.Int64:
		i, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
		if err != nil {
			return nil, fmt.Errorf("%w: expected integer", ErrInvalidValue)
		}
		return i, nil
	case reflect.Float64:
		f, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
		if err != nil {
			return nil, fmt.Errorf("%w: expected float", ErrInvalidValue)
		}
		return f, nil
	case reflect.Slice:
		if strings.HasPrefix(strings.TrimSpace(s), "[") {
			return decodeJSON([]byte(s))
		}
		out := []any{}
		for _, part := range strings.Split(s, ",") {
			if part = strings.TrimSpace(part); part != "" {
				out = append(out, part)
			}
		}
		return out, nil
	}
	return nil, fmt.Errorf("%w: expected %s", ErrInvalidValue, typeName(t))
}

// decodeJSON decodes one JSON value keeping numbers exact (json.Number).
func decodeJSON(raw []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("%w: not JSON: %v", ErrInvalidValue, err)
	}
	if dec.More() {
		return nil, fmt.Errorf("%w: trailing data after JSON value", ErrInvalidValue)
	}
	if v == nil {
		return nil, fmt.Errorf("%w: null is not a value (use delete)", ErrInvalidValue)
	}
	return v, nil
}

func typeName(t reflect.Type) string {
	switch t.Kind() {
	case reflect.Pointer:
		return typeName(t.Elem())
	case reflect.String:
		return "string"
	case reflect.Bool:
		return "boolean"
	case reflect.Int, reflect.Int64:
		return "integer"
	case reflect.Float64:
		return "float"
	case reflect.Slice:
		return "array of " + typeName(t.Elem())
	case reflect.Map, reflect.Struct:
		return "table"
	}
	return t.String()
}

func valueKind(v any) string {
	switch v.(type) {
	case string:
		return "string"
	case bool:
		return "boolean"
	case int64, json.Number:
		return "integer"
	case float64:
		return "float"
	case []any, []string:
		return "array"
	case map[string]any:
		return "table"
	case tomledit.Datetime:
		return "datetime"
	case nil:
		return "null"
	}
	return fmt.Sprintf("%T", v)
}

const envPrefix = "ZEROCLAW_"

// applyEnv applies ZEROCLAW_<segment>__<segment>... overrides to cfg (in memory only). Variables without "__"
// (ZEROCLAW_CONFIG_DIR...) are not config paths. An all-uppercase name is also tried lowercased. It returns the
// overridden props; a variable naming no property is a warning, a value of the wrong type an error. Values are
// never echoed (they may be secrets).
func applyEnv(cfg *Config, environ []string) ([]string, []string, error) {
	rv := reflect.ValueOf(cfg).Elem()
	var props, warnings []string
	for _, kv := range environ {
		name, val, ok := strings.Cut(kv, "=")
		if !ok || !strings.HasPrefix(name, envPrefix) || !strings.Contains(name, "__") {
			continue
		}
		segs := Path(strings.Split(strings.TrimPrefix(name, envPrefix), "__"))
		r, err := resolve(segs)
		if err != nil && strings.ToUpper(string(name)) == name {
			lower := make(Path, len(segs))
			for i, s := range segs {
				lower[i] = strings.ToLower(s)
			}
			r, err = resolve(lower)
		}
		if err != nil || !r.leaf {
			warnings = append(warnings, fmt.Sprintf("config: environment variable %s names no config property (ignored)", name))
			continue
		}
		v, err := coerceString(r.typ, val)
		if err == nil {
			err = setValue(rv, r.path, v)
		}
		if err != nil {
			return nil, nil, fmt.Errorf("config: environment variable %s (%s): %w", name, r.path, err)
		}
		props = append(props, r.path.String())
	}
	return props, warnings, nil
}

// literal formats a schema leaf value as TOML.
func literal(v reflect.Value) string {
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() {
			return `""`
		}
		return literal(v.Elem())
	case reflect.String:
		return tomledit.Quote(v.String())
	case reflect.Bool:
		return strconv.FormatBool(v.Bool())
	case reflect.Int, reflect.Int64:
		return strconv.FormatInt(v.Int(), 10)
	case reflect.Float64:
		s := strconv.FormatFloat(v.Float(), 'g', -1, 64)
		if !strings.ContainsAny(s, ".eEn") {
			s += ".0"
		}
		return s
	case reflect.Slice:
		parts := make([]string, v.Len())
		for i := range v.Len() {
			parts[i] = literal(v.Index(i))
		}
		return "[" + strings.Join(parts, ", ") + "]"
	}
	return tomledit.Quote(fmt.Sprint(v.Interface()))
}

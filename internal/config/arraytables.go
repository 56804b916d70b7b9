package config

import (
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/zeroclaw-go/zeroclaw/internal/config/tomledit"
)

// arrayTablePaths are the [[array tables]] the schema reads: upstream writes MCP servers as [[mcp.servers]] and
// a runtime profile's filter groups as [[runtime_profiles.<alias>.tool_filter_groups]] (a "*" segment is any key).
var arrayTablePaths = []tomledit.Path{{"mcp", "servers"}, {"runtime_profiles", "*", "tool_filter_groups"}}

// arrayTables gathers the entries of the supported [[array tables]]: each header starts an entry, and the
// sub-tables that follow it ([mcp.servers.env]) belong to the latest entry.
type arrayTables struct {
	sections map[int]*arrayEntry // table index => the entry its leaves go to
	entries  map[string][]*arrayEntry
	order    []string
}

type arrayEntry struct {
	at    tomledit.Path // the array's path
	line  int
	value map[string]any
	err   error
}

func collectArrayTables(d *tomledit.Document) *arrayTables {
	a := &arrayTables{sections: map[int]*arrayEntry{}, entries: map[string][]*arrayEntry{}}
	var cur *arrayEntry
	for i, t := range d.Tables {
		base := arrayTableOf(t.Path)
		switch {
		case base == nil:
			cur = nil
		case t.Array && slices.Equal(base, t.Path):
			cur = &arrayEntry{at: base, line: t.Line, value: map[string]any{}}
			key := base.String()
			if _, ok := a.entries[key]; !ok {
				a.order = append(a.order, key)
			}
			a.entries[key] = append(a.entries[key], cur)
			a.sections[i] = cur
		case cur != nil && slices.Equal(cur.at, base):
			a.sections[i] = cur
		}
	}
	return a
}

func arrayTableOf(p tomledit.Path) tomledit.Path {
	for _, base := range arrayTablePaths {
		if len(p) < len(base) {
			continue
		}
		concrete := slices.Clone(p[:len(base)])
		match := true
		for i, seg := range base {
			if seg != "*" && seg != concrete[i] {
				match = false
				break
			}
		}
		if match {
			return concrete
		}
	}
	return nil
}

// owns reports whether table i is part of a supported array entry (so it is not decoded as a table).
func (a *arrayTables) owns(i int) bool { _, ok := a.sections[i]; return ok }

// leaf takes a leaf that belongs to an array entry, storing it in the entry's value.
func (a *arrayTables) leaf(l tomledit.Leaf) bool {
	e, ok := a.sections[l.Section]
	if !ok || !l.Path.HasPrefix(e.at) {
		return false
	}
	rest := l.Path[len(e.at):]
	m := e.value
	for _, k := range rest[:len(rest)-1] {
		next, ok := m[k].(map[string]any)
		if !ok {
			next = map[string]any{}
			m[k] = next
		}
		m = next
	}
	m[rest[len(rest)-1]] = l.Value
	return true
}

// apply decodes every collected array into the config; an entry that does not fit is a *FileError at its
// header, and the array is left as it was.
func (a *arrayTables) apply(rv reflect.Value, file string) []*FileError {
	var errs []*FileError
	for _, key := range a.order {
		entries := a.entries[key]
		items := make([]any, len(entries))
		for i, e := range entries {
			items[i] = e.value
		}
		r, err := resolve(entries[0].at)
		if err == nil {
			tmp := reflect.New(reflect.TypeFor[Config]()).Elem()
			if err = setValue(tmp, r.path, items); err == nil {
				err = setValue(rv, r.path, items)
			}
		}
		if err != nil {
			line := entries[0].line
			if i, ok := itemIndex(err); ok && i < len(entries) {
				line = entries[i].line
			}
			errs = append(errs, &FileError{File: file, Line: line, Column: 1, Key: key, Msg: err.Error()})
		}
	}
	return errs
}

func itemIndex(err error) (int, bool) {
	var i int
	msg := err.Error()
	if at := strings.Index(msg, "item "); at >= 0 {
		if _, e := fmt.Sscanf(msg[at:], "item %d", &i); e == nil {
			return i, true
		}
	}
	return 0, false
}

// coerceTable stores a TOML table (map[string]any) in a struct (by toml tag; an unknown key is an error naming
// it) or a map.
func coerceTable(v reflect.Value, val any) error {
	m, ok := val.(map[string]any)
	if !ok {
		return fmt.Errorf("%w: expected a table, got %s", ErrInvalidValue, valueKind(val))
	}
	if v.Kind() == reflect.Map {
		out := reflect.MakeMapWithSize(v.Type(), len(m))
		for _, k := range sortedKeys(m) {
			elem := reflect.New(v.Type().Elem()).Elem()
			if err := coerce(elem, m[k]); err != nil {
				return fmt.Errorf("%s: %w", k, err)
			}
			out.SetMapIndex(reflect.ValueOf(k), elem)
		}
		v.Set(out)
		return nil
	}
	for _, k := range sortedKeys(m) {
		f, ok := fieldByTag(v.Type(), k)
		if !ok {
			return fmt.Errorf("%w: unknown key %q", ErrInvalidValue, k)
		}
		if err := coerce(v.FieldByIndex(f.Index), m[k]); err != nil {
			return fmt.Errorf("%s: %w", k, err)
		}
	}
	return nil
}

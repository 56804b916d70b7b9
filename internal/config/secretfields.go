package config

import (
	"fmt"
	"math"
	"reflect"
	"sort"
	"strconv"
	"strings"

	"github.com/zeroclaw-go/zeroclaw/internal/config/tomledit"
	"github.com/zeroclaw-go/zeroclaw/internal/secrets"
)

// walkSecrets calls fn for every string stored in a secret field below v, replacing it with fn's result.
// v must be addressable; map entries are copied out, visited and stored back.
func walkSecrets(v reflect.Value, path Path, secret bool, fn func(Path, string) (string, error)) error {
	switch v.Kind() {
	case reflect.Struct:
		for i := range v.NumField() {
			f := v.Type().Field(i)
			name := tagName(f)
			if err := walkSecrets(v.Field(i), append(path[:len(path):len(path)], name), secret || isSecretName(name), fn); err != nil {
				return err
			}
		}
	case reflect.Map:
		keys := v.MapKeys()
		sort.Slice(keys, func(i, j int) bool { return keys[i].String() < keys[j].String() })
		for _, k := range keys { // sorted, so an error always names the same field
			elem := reflect.New(v.Type().Elem()).Elem()
			elem.Set(v.MapIndex(k))
			if err := walkSecrets(elem, append(path[:len(path):len(path)], k.String()), secret, fn); err != nil {
				return err
			}
			v.SetMapIndex(k, elem)
		}
	case reflect.Slice:
		if v.Type().Elem().Kind() == reflect.Struct { // [[mcp.servers]]: each entry's secret fields
			for i := range v.Len() {
				if err := walkSecrets(v.Index(i), append(path[:len(path):len(path)], strconv.Itoa(i)), secret, fn); err != nil {
					return err
				}
			}
			return nil
		}
		if !secret || v.Type().Elem().Kind() != reflect.String {
			return nil
		}
		out := make([]string, v.Len())
		for i := range v.Len() {
			s, err := fn(path, v.Index(i).String())
			if err != nil {
				return err
			}
			out[i] = s
		}
		if v.Len() > 0 {
			v.Set(reflect.ValueOf(out))
		}
	case reflect.String:
		if !secret {
			return nil
		}
		s, err := fn(path, v.String())
		if err != nil {
			return err
		}
		v.SetString(s)
	}
	return nil
}

// decryptAll decrypts every secret field of cfg in place; the error names the field, never the value.
func decryptAll(cfg *Config, box *secrets.Box) error {
	return walkSecrets(reflect.ValueOf(cfg).Elem(), nil, false, func(p Path, s string) (string, error) {
		if !secrets.IsEncrypted(s) {
			return s, nil
		}
		plain, err := box.Decrypt(s)
		if err != nil {
			return "", fmt.Errorf("config: secret %s: %w", p, err)
		}
		return plain, nil
	})
}

// encryptText rewrites, in place, every secret value of the file that is plaintext or legacy "enc:" as "enc2:".
// Other bytes are untouched.
func encryptText(file string, raw []byte, box *secrets.Box) ([]byte, error) {
	d, err := tomledit.Parse(file, raw)
	if err != nil {
		return nil, err
	}
	out := raw
	for i := len(d.Leaves) - 1; i >= 0; i-- { // back to front: earlier offsets stay valid
		l := d.Leaves[i]
		if arraySecret(l.Path) && needsEncryption(l.Value) { // [[mcp.servers]] env and headers values
			enc, err := box.Encrypt(l.Value.(string))
			if err != nil {
				return nil, fmt.Errorf("config: encrypt %s: %w", l.Path, err)
			}
			out = tomledit.Splice(out, l.ValStart, l.ValEnd, literal(reflect.ValueOf(enc)))
			continue
		}
		if arr, ok := l.Value.([]any); ok && len(l.Path) == 2 && l.Path[0] == "mcp" && l.Path[1] == "servers" && inlineWritable(arr) {
			// mcp.servers = [{..., env = {...}, headers = {...}}]: the inline spelling of [[mcp.servers]].
			if enc, changed, err := encryptInlineServers(arr, box); err != nil {
				return nil, err
			} else if changed {
				out = tomledit.Splice(out, l.ValStart, l.ValEnd, inlineLiteral(enc))
			}
			continue
		}
		if l.ArrayTable {
			continue
		}
		r, err := resolve(l.Path)
		if err != nil || !r.secret || !r.leaf || !needsEncryption(l.Value) {
			continue
		}
		v := reflect.New(r.typ).Elem()
		if err := coerce(v, l.Value); err != nil {
			continue // decode reports type errors
		}
		err = walkSecrets(v, r.path, true, func(p Path, s string) (string, error) {
			enc, err := box.Encrypt(s)
			if err != nil {
				return "", fmt.Errorf("config: encrypt %s: %w", p, err)
			}
			return enc, nil
		})
		if err != nil {
			return nil, err
		}
		out = tomledit.Splice(out, l.ValStart, l.ValEnd, literal(v))
	}
	return out, nil
}

func needsEncryption(v any) bool {
	switch x := v.(type) {
	case string:
		return x != "" && (!secrets.IsEncrypted(x) || secrets.IsLegacy(x)) && !strings.HasPrefix(x, "op://")
	case []any:
		for _, it := range x {
			if needsEncryption(it) {
				return true
			}
		}
	}
	return false
}

// arraySecret reports whether p is one value of a secret map of an [[mcp.servers]] entry
// (mcp.servers.env.<KEY>, mcp.servers.headers.<Name>), which the schema paths do not reach.
func arraySecret(p tomledit.Path) bool {
	return len(p) == 4 && p[0] == "mcp" && p[1] == "servers" && isSecretName(p[2])
}

// encryptInlineServers encrypts the env and headers values of an inline mcp.servers array that need it,
// reporting whether any did.
func encryptInlineServers(arr []any, box *secrets.Box) ([]any, bool, error) {
	changed := false
	out := make([]any, len(arr))
	for i, it := range arr {
		entry, ok := it.(map[string]any)
		if !ok {
			out[i] = it
			continue
		}
		cp := make(map[string]any, len(entry))
		for k, v := range entry {
			cp[k] = v
		}
		for k, v := range entry {
			m, ok := v.(map[string]any)
			if !ok || !isSecretName(k) {
				continue
			}
			em := make(map[string]any, len(m))
			for name, val := range m {
				em[name] = val
				if needsEncryption(val) {
					enc, err := box.Encrypt(val.(string))
					if err != nil {
						return nil, false, fmt.Errorf("config: encrypt mcp.servers[%d].%s.%s: %w", i, k, name, err)
					}
					em[name], changed = enc, true
				}
			}
			cp[k] = em
		}
		out[i] = cp
	}
	return out, changed, nil
}

// inlineWritable reports whether inlineLiteral writes v back exactly: strings, integers, floats, booleans,
// arrays and tables of them (a datetime, which the servers' schema has no field for, is left alone).
func inlineWritable(v any) bool {
	switch x := v.(type) {
	case string, int64, bool:
		return true
	case float64:
		return !math.IsInf(x, 0) && !math.IsNaN(x)
	case []any:
		for _, it := range x {
			if !inlineWritable(it) {
				return false
			}
		}
		return true
	case map[string]any:
		for _, it := range x {
			if !inlineWritable(it) {
				return false
			}
		}
		return true
	}
	return false
}

// inlineLiteral writes a decoded TOML value back as an inline value (tables with sorted keys).
func inlineLiteral(v any) string {
	switch x := v.(type) {
	case []any:
		parts := make([]string, len(x))
		for i, it := range x {
			parts[i] = inlineLiteral(it)
		}
		return "[" + strings.Join(parts, ", ") + "]"
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		parts := make([]string, len(keys))
		for i, k := range keys {
			parts[i] = inlineKey(k) + " = " + inlineLiteral(x[k])
		}
		return "{ " + strings.Join(parts, ", ") + " }"
	case nil:
		return `""`
	case int64:
		return strconv.FormatInt(x, 10)
	case int:
		return strconv.Itoa(x)
	}
	return literal(reflect.ValueOf(v))
}

// inlineKey writes a key of an inline table as the parser holds it (its text: a quoted or dotted key keeps its
// quotes and dots), so the rewritten table parses to the same keys.
func inlineKey(k string) string {
	if k == "" {
		return `""`
	}
	return k
}

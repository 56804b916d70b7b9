package upstream

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// Helpers on decoded TOML trees, shared by the migration steps.

func asTree(v any) (tree, bool) {
	t, ok := v.(map[string]any)
	return t, ok
}

// take removes key from t and returns its value.
func take(t tree, key string) (any, bool) {
	v, ok := t[key]
	if ok {
		delete(t, key)
	}
	return v, ok
}

// subtree returns t[key] as a table, creating it when absent; nil when the key holds something else.
func subtree(t tree, key string) tree {
	v, ok := t[key]
	if !ok {
		n := tree{}
		t[key] = n
		return n
	}
	n, _ := asTree(v)
	return n
}

func orInsert(t tree, key string, v any) {
	if _, ok := t[key]; !ok {
		t[key] = v
	}
}

func stringOf(v any) (string, bool) {
	s, ok := v.(string)
	return s, ok
}

// foldStringIntoArray moves a non-empty string at from into the array at to (no duplicate); it reports whether
// it did. A non-string at from stays where it is.
func foldStringIntoArray(t tree, from, to string) bool {
	v, ok := t[from]
	if !ok {
		return false
	}
	s, isStr := v.(string)
	if !isStr {
		return false
	}
	delete(t, from)
	if s == "" {
		return false
	}
	cur, exists := t[to]
	if !exists {
		t[to] = []any{s}
		return true
	}
	arr, ok := cur.([]any)
	if !ok {
		t[from] = s
		return false
	}
	if !slices.ContainsFunc(arr, func(x any) bool { return x == s }) {
		t[to] = append(arr, s)
	}
	return true
}

func uniqueKey(t tree, key string) string {
	if _, ok := t[key]; !ok {
		return key
	}
	for n := 2; ; n++ {
		c := fmt.Sprintf("%s_%d", key, n)
		if _, ok := t[c]; !ok {
			return c
		}
	}
}

// slugify lowercases s and turns every run of other characters than letters and digits into one underscore.
func slugify(s string) string {
	var b strings.Builder
	under := false
	for _, r := range s {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r > 127 && isLetterOrDigit(r) {
			b.WriteString(strings.ToLower(string(r)))
			under = false
		} else if !under {
			b.WriteByte('_')
			under = true
		}
	}
	return strings.Trim(b.String(), "_")
}

func isLetterOrDigit(r rune) bool { return strings.ToUpper(string(r)) != strings.ToLower(string(r)) }

func deepCopy(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = deepCopy(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = deepCopy(e)
		}
		return out
	}
	return v
}

func sortedKeys[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }

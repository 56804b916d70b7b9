package config

import (
	"fmt"
	"strings"
)

// Grant names with special meaning (protocol.md §8).
const (
	GrantAdmin        = "admin"
	GrantConfigUpdate = "config:update"
)

// GrantAllows reports whether grants permit grant, and for config:update the property prop (a normalized path,
// see Path.String). "admin" allows everything; unscoped "config:update" covers every path;
// "config:update:<pattern>" covers paths matching pattern, whose segments may be "*" (exactly one segment) and
// whose last segment may be "**" (zero or more segments). With grant config:update and an empty prop, any
// config:update grant, scoped or not, allows (the method-level check). Other grants match exactly.
func GrantAllows(grants []string, grant string, prop string) bool {
	for _, g := range grants {
		if g == GrantAdmin || g == grant {
			return true
		}
		if grant != GrantConfigUpdate {
			continue
		}
		pattern, ok := strings.CutPrefix(g, GrantConfigUpdate+":")
		if !ok {
			continue
		}
		if prop == "" {
			return true
		}
		if matchPattern(pattern, prop) {
			return true
		}
	}
	return false
}

func matchPattern(pattern, prop string) bool {
	pp, err := ParsePath(pattern)
	if err != nil {
		return false
	}
	p, err := ParsePath(prop)
	if err != nil {
		return false
	}
	for i, seg := range pp {
		if seg == "**" && i == len(pp)-1 {
			return true
		}
		if i >= len(p) || (seg != "*" && seg != p[i]) {
			return false
		}
	}
	return len(p) == len(pp)
}

// checkGrant rejects malformed config:update patterns so a typo never silently grants nothing or everything.
func checkGrant(g string) error {
	if strings.TrimSpace(g) == "" {
		return fmt.Errorf("empty grant")
	}
	pattern, ok := strings.CutPrefix(g, GrantConfigUpdate+":")
	if !ok {
		return nil
	}
	pp, err := ParsePath(pattern)
	if err != nil {
		return fmt.Errorf("bad pattern %q", pattern)
	}
	for i, seg := range pp {
		if seg == "**" && i != len(pp)-1 {
			return fmt.Errorf("pattern %q: ** must be the last segment", pattern)
		}
	}
	return nil
}

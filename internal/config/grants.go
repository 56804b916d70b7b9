package config

import (
	"fmt"
	"strings"
)

// scopedGrantPrefix starts the only grant form that carries a scope (protocol.md §8): config:update:<pattern>.
// Matching grants is internal/auth's job; the config only refuses a malformed pattern when it is loaded.
const scopedGrantPrefix = "config:update:"

// checkGrant rejects malformed config:update patterns so a typo never silently grants nothing or everything.
func checkGrant(g string) error {
	if strings.TrimSpace(g) == "" {
		return fmt.Errorf("empty grant")
	}
	pattern, ok := strings.CutPrefix(g, scopedGrantPrefix)
	if !ok {
		return nil
	}
	if _, err := ParsePath(pattern); err != nil {
		return fmt.Errorf("bad pattern %q", pattern)
	}
	if _, err := ParsePattern(pattern); err != nil {
		return fmt.Errorf("pattern %q: ** must be the last segment", pattern)
	}
	return nil
}

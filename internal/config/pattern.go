package config

import "fmt"

// Pattern is a parsed property-path pattern (protocol.md §8): a path whose segments may be "*" (exactly one
// segment) and whose last segment may be "**" (zero or more segments).
type Pattern []string

// ParsePattern parses a property-path pattern. A malformed path, or "**" anywhere but last, is an error
// wrapping ErrInvalidPath.
func ParsePattern(s string) (Pattern, error) {
	p, err := ParsePath(s)
	if err != nil {
		return nil, err
	}
	for i, seg := range p {
		if seg == "**" && i != len(p)-1 {
			return nil, fmt.Errorf("%w: pattern %q: ** must be the last segment", ErrInvalidPath, s)
		}
	}
	return Pattern(p), nil
}

// Match reports whether the path p matches the pattern. Segments compare verbatim (p should be normalized, see
// Path.String).
func (pat Pattern) Match(p Path) bool {
	for i, seg := range pat {
		if seg == "**" && i == len(pat)-1 {
			return true
		}
		if i >= len(p) || (seg != "*" && seg != p[i]) {
			return false
		}
	}
	return len(p) == len(pat)
}

package auth

import (
	"slices"
	"strings"

	"github.com/zeroclaw-go/zeroclaw/internal/api"
	"github.com/zeroclaw-go/zeroclaw/internal/config"
)

const scopeSep = ":"

// Allows reports whether grants cover need, a method's (resource:verb) grant. admin covers everything; any
// other grant covers exactly its own name, so "sessions:delete:only-mine" does not cover sessions:delete.
// The one exception is config:update, which a well-formed scoped config:update:<pattern> also covers at the
// method level: the paths a call touches are then checked one by one with AllowsPath.
func Allows(grants []string, need string) bool {
	for _, g := range grants {
		if g == api.GrantAdmin || g == need {
			return true
		}
		if need == api.GrantConfigUpdate {
			if _, ok := scope(g); ok {
				return true
			}
		}
	}
	return false
}

// AllowsPath reports whether grants let need (only config:update has paths) be applied to the property path
// prop. admin and unscoped config:update cover every path; config:update:<pattern> covers the paths matching
// its pattern. A malformed pattern, or a malformed prop, covers nothing. For any other need it is Allows.
func AllowsPath(grants []string, need, prop string) bool {
	if need != api.GrantConfigUpdate {
		return Allows(grants, need)
	}
	if slices.Contains(grants, api.GrantAdmin) || slices.Contains(grants, api.GrantConfigUpdate) {
		return true
	}
	path, err := config.ParsePath(prop)
	if err != nil {
		return false
	}
	for _, g := range grants {
		if pat, ok := scope(g); ok && pat.Match(path) {
			return true
		}
	}
	return false
}

// scope returns the pattern of a well-formed config:update:<pattern> grant.
func scope(g string) (config.Pattern, bool) {
	raw, ok := strings.CutPrefix(g, api.GrantConfigUpdate+scopeSep)
	if !ok {
		return nil, false
	}
	pat, err := config.ParsePattern(raw)
	return pat, err == nil
}

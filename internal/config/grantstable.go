package config

import (
	"fmt"
	"slices"
	"strings"

	"github.com/zeroclaw-go/zeroclaw/internal/api"
)

// Upstream's newer permission profiles (crates/zeroclaw-config, PermissionProfileConfig) write their grants as a
// table of resource to verbs, `grants = {sessions = ["create", "read"]}`, with `admin = true` for everything and
// `config_write_paths` narrowing config updates. upstreamGrants reads that form beside our list of
// "resource:verb" strings and turns it into the same strings, so the rest of the daemon knows one form:
//   - resource = [verbs] gives "resource:verb" each; upstream's system (status, health) gives status:verb and
//     health:verb, our names for those methods;
//   - config = ["update"] gives config:update:<pattern> for each config_write_paths entry ("a.*" is the subtree,
//     a.**; "*" is every path, plain config:update): upstream grants no path without one;
//   - admin = true gives "admin".
//
// allowed_agents and allowed_tools are PermissionProfile's own keys, read in either form.
type upstreamGrants map[string]*tableGrants

// tableGrants is what one profile's upstream-form keys said.
type tableGrants struct {
	grants       []string
	configUpdate bool     // grants.config holds "update"
	writePaths   []string // config_write_paths
	admin        bool
}

// Upstream's grant vocabulary (zeroclaw-api/src/grants.rs: Resource, Verb).
var (
	upstreamResources = []string{"system", "sessions", "memory", "cron", "config", "agents", "cost", "skills",
		"personality", "logs", "tui", "files", "locales", "quickstart", "channels", "providers", "models",
		"peer_groups", "plugins", "tools", "sops"}
	upstreamVerbs = []string{"create", "read", "update", "delete", "execute"}
)

// profileKey reports whether p is permission_profiles.<name>.<key>..., and returns name and the rest.
func profileKey(p Path) (name string, rest Path, ok bool) {
	if len(p) < 3 || p[0] != "permission_profiles" {
		return "", nil, false
	}
	return p[1], p[2:], true
}

// table reports whether a table header (or an empty inline table) at p is an upstream grants table, which is
// then no error: it defines the profile, the leaves under it carry the grants.
func (u upstreamGrants) table(p Path) bool {
	name, rest, ok := profileKey(p)
	if !ok || len(rest) != 1 || rest[0] != "grants" {
		return false
	}
	u.of(name)
	return true
}

func (u upstreamGrants) of(name string) *tableGrants {
	g := u[name]
	if g == nil {
		g = &tableGrants{}
		u[name] = g
	}
	return g
}

// leaf takes one upstream-form key: permission_profiles.<name>.grants.<resource>, .admin or
// .config_write_paths. handled is false for any other key; err says what is wrong with the value.
func (u upstreamGrants) leaf(p Path, v any) (handled bool, err error) {
	name, rest, ok := profileKey(p)
	if !ok {
		return false, nil
	}
	switch {
	case len(rest) == 2 && rest[0] == "grants":
		resource := rest[1]
		if !slices.Contains(upstreamResources, resource) {
			return true, fmt.Errorf("unknown resource %q (want one of %s)", resource, strings.Join(upstreamResources, ", "))
		}
		verbs, err := stringList(v)
		if err != nil {
			return true, err
		}
		g := u.of(name)
		for _, verb := range verbs {
			if !slices.Contains(upstreamVerbs, verb) {
				return true, fmt.Errorf("unknown verb %q (want create, read, update, delete or execute)", verb)
			}
			switch {
			case resource == "config" && verb == "update":
				g.configUpdate = true
			case resource == "system":
				g.grants = append(g.grants, "status:"+verb, "health:"+verb)
			default:
				g.grants = append(g.grants, resource+":"+verb)
			}
		}
		return true, nil
	case len(rest) == 1 && rest[0] == api.GrantAdmin: // upstream's `admin = true` key, named as the grant it gives
		b, isBool := v.(bool)
		if !isBool {
			return true, fmt.Errorf("expected a boolean, got %s", valueKind(v))
		}
		u.of(name).admin = b
		return true, nil
	case len(rest) == 1 && rest[0] == "config_write_paths":
		paths, err := stringList(v)
		if err != nil {
			return true, err
		}
		for _, wp := range paths {
			if wp != "*" {
				if _, err := ParsePath(strings.TrimSuffix(wp, ".*")); err != nil {
					return true, fmt.Errorf("bad path %q", wp)
				}
			}
		}
		u.of(name).writePaths = append(u.of(name).writePaths, paths...)
		return true, nil
	}
	return false, nil
}

// apply adds each profile's grants to cfg, after ours (a profile may use both forms).
func (u upstreamGrants) apply(cfg *Config) {
	for name, g := range u {
		if cfg.PermissionProfiles == nil {
			cfg.PermissionProfiles = map[string]PermissionProfile{}
		}
		pp := cfg.PermissionProfiles[name]
		pp.Grants = append(pp.Grants, g.grants...)
		if g.configUpdate {
			for _, wp := range g.writePaths {
				switch {
				case wp == "*":
					pp.Grants = append(pp.Grants, api.GrantConfigUpdate)
				case strings.HasSuffix(wp, ".*"):
					pp.Grants = append(pp.Grants, scopedGrantPrefix+strings.TrimSuffix(wp, ".*")+".**")
				default:
					pp.Grants = append(pp.Grants, scopedGrantPrefix+wp)
				}
			}
		}
		if g.admin {
			pp.Grants = append(pp.Grants, api.GrantAdmin)
		}
		cfg.PermissionProfiles[name] = pp
	}
}

// stringList is v as a list of strings.
func stringList(v any) ([]string, error) {
	list, ok := v.([]any)
	if !ok {
		return nil, fmt.Errorf("expected an array of strings, got %s", valueKind(v))
	}
	out := make([]string, 0, len(list))
	for _, e := range list {
		s, ok := e.(string)
		if !ok {
			return nil, fmt.Errorf("expected an array of strings, got an element of %s", valueKind(e))
		}
		out = append(out, s)
	}
	return out, nil
}

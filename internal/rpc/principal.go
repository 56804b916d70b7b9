package rpc

import (
	"fmt"
	"slices"
	"strings"

	"github.com/zeroclaw-go/zeroclaw/internal/api"
	"github.com/zeroclaw-go/zeroclaw/internal/config"
	"github.com/zeroclaw-go/zeroclaw/internal/jsonrpc"
)

// Principal is who a connection acts as (protocol.md §8).
type Principal struct {
	Name   string   // user name, or "operator" for the daemon's own uid
	Admin  bool     // the admin grant reaches everything
	Grants []string // union of the user's permission profiles' grants
}

// GrantAdmin is the grant that reaches everything.
const GrantAdmin = "admin"

// Allows reports whether the principal holds grant. A scoped grant such as config:update:<pattern> is checked
// per property path by allowsProp.
func (p *Principal) Allows(grant string) bool {
	if p == nil {
		return false
	}
	if p.Admin || slices.Contains(p.Grants, GrantAdmin) || slices.Contains(p.Grants, grant) {
		return true
	}
	// A scoped grant of the same resource:verb counts for the method; the path check happens later.
	for _, g := range p.Grants {
		if strings.HasPrefix(g, grant+":") {
			return true
		}
	}
	return false
}

// allowsProp reports whether the principal may apply grant (e.g. config:update) to the property path prop.
func (p *Principal) allowsProp(grant, prop string) bool {
	if p == nil {
		return false
	}
	if p.Admin {
		return true
	}
	return config.GrantAllows(p.Grants, grant, prop)
}

// resolvePrincipal maps a peer to its principal: a uid listed under [users.<name>] becomes that user; otherwise
// the daemon's own uid is the shared operator (admin) when security.trust_daemon_uid holds; anyone else is refused.
func resolvePrincipal(cfg *config.Config, info PeerInfo, daemonUID int) (*Principal, error) {
	if info.Transport == "pipe" {
		// Named pipes are restricted by their ACL to the creating user and SYSTEM.
		return &Principal{Name: "operator", Admin: true}, nil
	}
	if cfg != nil {
		names := make([]string, 0, len(cfg.Users))
		for name := range cfg.Users {
			names = append(names, name)
		}
		slices.Sort(names)
		for _, name := range names {
			u := cfg.Users[name]
			if u.UID != info.UID {
				continue
			}
			pr := &Principal{Name: name}
			for _, prof := range u.PermissionProfiles {
				pr.Grants = append(pr.Grants, cfg.PermissionProfiles[prof].Grants...)
			}
			pr.Admin = slices.Contains(pr.Grants, GrantAdmin)
			return pr, nil
		}
	}
	trust := cfg == nil || cfg.Security.TrustDaemonUID
	if info.UID == daemonUID && trust {
		return &Principal{Name: "operator", Admin: true}, nil
	}
	return nil, jsonrpc.NewError(api.CodeAuthRequired, fmt.Sprintf("peer not allowed: uid %d is not a configured user", info.UID), nil)
}

func forbidden(grant string) *jsonrpc.Error {
	return jsonrpc.NewError(api.CodeForbidden, "Forbidden: missing grant "+grant, map[string]any{"grant": grant})
}

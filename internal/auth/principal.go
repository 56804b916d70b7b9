package auth

import (
	"slices"

	"github.com/zeroclaw-go/zeroclaw/internal/config"
)

// OperatorName names the shared operator: the daemon's own uid (when trusted) or a local named-pipe peer.
const OperatorName = "operator"

// Principal is who a connection acts as (protocol.md §8).
type Principal struct {
	Name   string   // user name, or OperatorName
	Admin  bool     // holds the admin grant, which reaches everything
	Grants []string // union of the user's permission profiles' grants
}

// Allows reports whether the principal may call a method that needs grant (see the package function Allows).
// A nil principal is allowed nothing.
func (p *Principal) Allows(grant string) bool {
	if p == nil {
		return false
	}
	return p.Admin || Allows(p.Grants, grant)
}

// AllowsPath reports whether the principal may apply grant to the property path prop (see AllowsPath).
func (p *Principal) AllowsPath(grant, prop string) bool {
	if p == nil {
		return false
	}
	return p.Admin || AllowsPath(p.Grants, grant, prop)
}

// Resolve maps a peer to its principal from the config in force (nil cfg: no users, the daemon uid trusted).
// A named-pipe peer is the operator: the pipe's ACL already restricts it to the creating user and SYSTEM. A
// uid listed under [users.<name>] becomes that user (the first name in sorted order if several list it);
// otherwise the daemon's own uid is the operator when security.trust_daemon_uid holds. Anyone else is refused:
// Resolve returns nil.
func Resolve(cfg *config.Config, t Transport, uid, daemonUID int) *Principal {
	if t == TransportPipe {
		return &Principal{Name: OperatorName, Admin: true}
	}
	if cfg != nil {
		names := make([]string, 0, len(cfg.Users))
		for name := range cfg.Users {
			names = append(names, name)
		}
		slices.Sort(names)
		for _, name := range names {
			u := cfg.Users[name]
			if u.UID != uid {
				continue
			}
			pr := &Principal{Name: name}
			for _, prof := range u.PermissionProfiles {
				pr.Grants = append(pr.Grants, cfg.PermissionProfiles[prof].Grants...)
			}
			pr.Admin = slices.Contains(pr.Grants, GrantAdmin)
			return pr
		}
	}
	if uid == daemonUID && (cfg == nil || cfg.Security.TrustDaemonUID) {
		return &Principal{Name: OperatorName, Admin: true}
	}
	return nil
}

// DevicePrefix starts the principal name of a paired gateway device ("device:<id>").
const DevicePrefix = "device:"

// Device is the principal of a paired gateway device (or, with pairing off, of any gateway client). A device
// paired with a profile (gateway.paired_token_profiles, profile != "") gets that profile's grants only; any
// other gets the grants of gateway.device_permission_profiles, and with none configured it is admin, as
// upstream lets any token do everything. An admin device is the owner's equal (protocol.md §8, README
// "Security model").
func Device(cfg *config.Config, id, profile string) *Principal {
	pr := &Principal{Name: DevicePrefix + id}
	profiles := []string{profile}
	if profile == "" {
		if cfg == nil || len(cfg.Gateway.DevicePermissionProfiles) == 0 {
			pr.Admin = true
			return pr
		}
		profiles = cfg.Gateway.DevicePermissionProfiles
	}
	if cfg != nil {
		for _, prof := range profiles {
			pr.Grants = append(pr.Grants, cfg.PermissionProfiles[prof].Grants...)
		}
	}
	pr.Admin = slices.Contains(pr.Grants, GrantAdmin)
	return pr
}

package auth

import (
	"slices"

	"github.com/zeroclaw-go/zeroclaw/internal/api"
	"github.com/zeroclaw-go/zeroclaw/internal/config"
)

// OperatorName names the shared operator: the daemon's own uid (when trusted) or a local named-pipe peer.
const OperatorName = "operator"

// Principal is who a connection acts as (protocol.md §8).
type Principal struct {
	Name   string   // user name, or OperatorName
	Roster bool     // a [users.<name>] entry (its wire principal_id is "user:<name>")
	Admin  bool     // holds the admin grant, which reaches everything
	Grants []string // union of the user's permission profiles' grants
	// MaxApproveRisk caps the risk ("low", "medium", "high") of the tool calls the principal may approve: the
	// strictest max_risk of its permission profiles; "" is no cap. An admin is never capped.
	MaxApproveRisk string
	// Agents and Tools are what the allowed_agents and allowed_tools of its permission profiles leave it: nil
	// is every agent (tool); otherwise only those listed, none when empty. An admin is never restricted.
	Agents []string
	Tools  []string
}

// AllowsAgent reports whether the principal may open and prompt sessions of agent alias.
func (p *Principal) AllowsAgent(alias string) bool {
	return p != nil && (p.Admin || p.Agents == nil || slices.Contains(p.Agents, alias))
}

// AgentScope is the agents whose work (sessions, jobs, log events) the principal may read: nil when it is not
// restricted (an admin, or no allowed_agents), else the list, empty but not nil when it allows none.
func (p *Principal) AgentScope() []string {
	if p == nil || p.Admin || p.Agents == nil {
		return nil
	}
	return append(make([]string, 0, len(p.Agents)), p.Agents...)
}

// AllowsTool reports whether the principal's turns may offer and run tool.
func (p *Principal) AllowsTool(tool string) bool {
	return p != nil && (p.Admin || p.Tools == nil || slices.Contains(p.Tools, tool))
}

// Owner reports whether the principal is the owner or the owner's equal: the daemon's own uid on the local
// socket (the operator), or a principal holding the admin grant, which reaches everything. Only the owner may
// move a session out of its agent's workspace or approve a call above a profile's cap.
func (p *Principal) Owner() bool { return p != nil && p.Admin }

// Risk levels of a tool call, lowest first: the values of permission_profiles.<name>.max_risk.
var riskOrder = []string{"low", "medium", "high"}

// RiskAbove reports whether risk exceeds the cap maxRisk ("" caps nothing; an unknown risk is above any cap).
func RiskAbove(risk, maxRisk string) bool {
	if maxRisk == "" {
		return false
	}
	r, c := slices.Index(riskOrder, risk), slices.Index(riskOrder, maxRisk)
	return r < 0 || c < 0 || r > c
}

// fromProfiles fills pr's grants, approval cap and agent and tool selectors from the named permission
// profiles. The selectors are a union, as upstream merges profiles: a profile without the key (or with "*")
// lifts the restriction; with no profile at all nothing is restricted (nor granted).
func (pr *Principal) fromProfiles(cfg *config.Config, profiles []string) {
	var agents, tools []string
	anyAgent, anyTool := len(profiles) == 0, len(profiles) == 0
	for _, prof := range profiles {
		pp := cfg.PermissionProfiles[prof]
		pr.Grants = append(pr.Grants, pp.Grants...)
		if pp.MaxRisk != "" && (pr.MaxApproveRisk == "" || RiskAbove(pr.MaxApproveRisk, pp.MaxRisk)) {
			pr.MaxApproveRisk = pp.MaxRisk
		}
		anyAgent = anyAgent || pp.AllowedAgents == nil || slices.Contains(pp.AllowedAgents, "*")
		anyTool = anyTool || pp.AllowedTools == nil || slices.Contains(pp.AllowedTools, "*")
		agents, tools = append(agents, pp.AllowedAgents...), append(tools, pp.AllowedTools...)
	}
	pr.Admin = slices.Contains(pr.Grants, api.GrantAdmin)
	if pr.Admin {
		pr.MaxApproveRisk = ""
	}
	if !anyAgent && !pr.Admin {
		pr.Agents = uniq(agents)
	}
	if !anyTool && !pr.Admin {
		pr.Tools = uniq(tools)
	}
}

// uniq is list sorted without repeats, never nil.
func uniq(list []string) []string {
	out := slices.Clone(list)
	slices.Sort(out)
	return append([]string{}, slices.Compact(out)...)
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
			pr := &Principal{Name: name, Roster: true}
			pr.fromProfiles(cfg, u.PermissionProfiles)
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
		pr.fromProfiles(cfg, profiles)
	}
	return pr
}

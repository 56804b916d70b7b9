package auth

import (
	"testing"

	"github.com/zeroclaw-go/zeroclaw/internal/api"
	"github.com/zeroclaw-go/zeroclaw/internal/config"
)

// Every grant form against method grants and config paths. Only admin, the exact name, and (for config:update)
// a well-formed config:update:<pattern> cover anything.
func TestGrantForms(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		grants []string
		need   string
		prop   string // "" : the method-level check (Allows); otherwise AllowsPath
		want   bool
	}{
		// exact
		{"exact", []string{"sessions:delete"}, "sessions:delete", "", true},
		{"other verb", []string{"sessions:create"}, "sessions:execute", "", false},
		{"other resource", []string{"config:read"}, "sessions:read", "", false},
		{"prefix of the need", []string{"sessions"}, "sessions:delete", "", false},
		{"need is a prefix", []string{"sessions:deletex"}, "sessions:delete", "", false},
		{"case differs", []string{"Sessions:Delete"}, "sessions:delete", "", false},
		{"surrounding space", []string{" sessions:delete"}, "sessions:delete", "", false},
		{"none", nil, "sessions:read", "", false},
		// the widening regression: a scope only config:update defines
		{"scoped sessions:delete", []string{"sessions:delete:only-mine"}, "sessions:delete", "", false},
		{"scoped sessions:read", []string{"sessions:read:*"}, "sessions:read", "", false},
		{"scoped config:read", []string{"config:read:agents.**"}, "config:read", "", false},
		{"scoped admin", []string{"admin:x"}, "sessions:read", "", false},
		// admin, and a wildcard that is not one
		{"admin method", []string{"admin"}, "sessions:delete", "", true},
		{"admin config path", []string{"admin"}, "config:update", "users.x.uid", true},
		{"admin needed", []string{"admin"}, "admin", "", true},
		{"admin not held", []string{"sessions:create", "config:update"}, "admin", "", false},
		{"star is no wildcard", []string{"*"}, "sessions:read", "", false},
		{"star path", []string{"*"}, "config:update", "gateway.port", false},
		{"resource star", []string{"sessions:*"}, "sessions:read", "", false},
		// unscoped config:update
		{"config:update method", []string{"config:update"}, "config:update", "", true},
		{"config:update any path", []string{"config:update"}, "config:update", "users.x.uid", true},
		{"config:read is not update", []string{"config:read"}, "config:update", "users.x.uid", false},
		// config:update:<pattern>
		{"scoped update method level", []string{"config:update:agents.**"}, "config:update", "", true},
		{"one-segment star", []string{"config:update:agents.*.system_prompt"}, "config:update", "agents.a.system_prompt", true},
		{"one-segment star other leaf", []string{"config:update:agents.*.system_prompt"}, "config:update", "agents.a.risk_profile", false},
		{"one-segment star too deep", []string{"config:update:agents.*.system_prompt"}, "config:update", "agents.a.b.system_prompt", false},
		{"one-segment star too short", []string{"config:update:agents.*"}, "config:update", "agents", false},
		{"double star", []string{"config:update:agents.**"}, "config:update", "agents.a.workspace.path", true},
		{"double star zero segments", []string{"config:update:agents.**"}, "config:update", "agents", true},
		{"double star elsewhere", []string{"config:update:agents.**"}, "config:update", "users.a.uid", false},
		{"exact path", []string{"config:update:gateway.port"}, "config:update", "gateway.port", true},
		{"exact path is no prefix", []string{"config:update:gateway"}, "config:update", "gateway.port", false},
		{"quoted key", []string{`config:update:providers.models.openai."gpt-4.1".*`}, "config:update", `providers.models.openai."gpt-4.1".model`, true},
		{"quoted key differs", []string{`config:update:providers.models.openai."gpt-4.1".*`}, "config:update", `providers.models.openai."gpt-4".model`, false},
		{"scope does not reach other needs", []string{"config:update:**"}, "config:read", "", false},
		{"one of several", []string{"config:read", "config:update:users.**"}, "config:update", "users.a.uid", true},
		// malformed scoped grants cover nothing, not even the method
		{"empty pattern", []string{"config:update:"}, "config:update", "", false},
		{"empty pattern path", []string{"config:update:"}, "config:update", "gateway.port", false},
		{"double star not last", []string{"config:update:agents.**.x"}, "config:update", "agents.a.x", false},
		{"double star not last method", []string{"config:update:agents.**.x"}, "config:update", "", false},
		{"unterminated quote", []string{`config:update:a."b`}, "config:update", "a.b", false},
		{"trailing dot", []string{"config:update:agents."}, "config:update", "agents.a", false},
		{"malformed prop", []string{"config:update:**"}, "config:update", "a..b", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var got bool
			if c.prop == "" {
				got = Allows(c.grants, c.need)
			} else {
				got = AllowsPath(c.grants, c.need, c.prop)
			}
			if got != c.want {
				t.Fatalf("grants %q, need %q, prop %q: allowed = %v, want %v", c.grants, c.need, c.prop, got, c.want)
			}
			// The principal answers the same, and an admin principal is allowed whatever the grants.
			p := &Principal{Name: "u", Grants: c.grants}
			if c.prop == "" && p.Allows(c.need) != c.want || c.prop != "" && p.AllowsPath(c.need, c.prop) != c.want {
				t.Fatalf("principal disagrees with the matcher")
			}
			a := &Principal{Name: "root", Admin: true}
			if !a.Allows(c.need) || !a.AllowsPath(c.need, "gateway.port") {
				t.Fatalf("admin principal refused %q", c.need)
			}
		})
	}
}

// AllowsPath on a need other than config:update is the method check: there is no other scoped grant.
func TestAllowsPathOtherNeed(t *testing.T) {
	t.Parallel()
	if AllowsPath([]string{"sessions:delete:only-mine"}, "sessions:delete", "only-mine") {
		t.Fatal("a scoped sessions:delete covered a path")
	}
	if !AllowsPath([]string{"sessions:delete"}, "sessions:delete", "anything") {
		t.Fatal("exact grant refused")
	}
}

func TestNilPrincipalAllowsNothing(t *testing.T) {
	t.Parallel()
	var p *Principal
	if p.Allows("status:read") || p.AllowsPath(api.GrantConfigUpdate, "gateway.port") {
		t.Fatal("nil principal allowed")
	}
}

func TestResolve(t *testing.T) {
	t.Parallel()
	const me = 1000
	cfg := &config.Config{
		Users: map[string]config.UserConfig{
			"alice": {UID: 2000, PermissionProfiles: []string{"chat", "cfg"}},
			"boss":  {UID: 3000, PermissionProfiles: []string{"root"}},
		},
		PermissionProfiles: map[string]config.PermissionProfile{
			"chat": {Grants: []string{"sessions:create"}},
			"cfg":  {Grants: []string{"config:update:agents.**"}},
			"root": {Grants: []string{"admin"}},
		},
	}
	cfg.Security.TrustDaemonUID = true

	alice := Resolve(cfg, TransportUnix, 2000, me)
	if alice == nil || alice.Name != "alice" || alice.Admin || len(alice.Grants) != 2 {
		t.Fatalf("alice = %+v", alice)
	}
	if !alice.AllowsPath(api.GrantConfigUpdate, "agents.a.system_prompt") || alice.AllowsPath(api.GrantConfigUpdate, "users.alice.uid") {
		t.Fatal("alice's scoped grant is not applied")
	}
	if boss := Resolve(cfg, TransportUnix, 3000, me); boss == nil || !boss.Admin {
		t.Fatalf("boss = %+v", boss)
	}
	if op := Resolve(cfg, TransportUnix, me, me); op == nil || op.Name != OperatorName || !op.Admin {
		t.Fatalf("daemon uid = %+v", op)
	}
	if p := Resolve(cfg, TransportUnix, 4000, me); p != nil {
		t.Fatalf("stranger resolved to %+v", p)
	}
	if p := Resolve(cfg, TransportPipe, -1, me); p == nil || !p.Admin {
		t.Fatalf("pipe peer = %+v", p)
	}
	cfg.Security.TrustDaemonUID = false
	if p := Resolve(cfg, TransportUnix, me, me); p != nil {
		t.Fatalf("untrusted daemon uid resolved to %+v", p)
	}
	if p := Resolve(nil, TransportUnix, me, me); p == nil || !p.Admin {
		t.Fatalf("no config: daemon uid = %+v", p)
	}
}

func TestTransportLocal(t *testing.T) {
	t.Parallel()
	for tr, want := range map[Transport]bool{TransportUnix: true, TransportPipe: true, TransportWSS: false, "": false} {
		if tr.Local() != want {
			t.Errorf("%q.Local() = %v", tr, !want)
		}
	}
}

// A device gets the grants of gateway.device_permission_profiles, and is admin only with none configured.
func TestDevicePrincipal(t *testing.T) {
	t.Parallel()
	cfg := &config.Config{PermissionProfiles: map[string]config.PermissionProfile{"ro": {Grants: []string{"status:read"}}}}
	if p := Device(cfg, "d1", ""); !p.Admin || p.Name != "device:d1" {
		t.Fatalf("no profiles: %+v", p)
	}
	cfg.Gateway.DevicePermissionProfiles = []string{"ro"}
	p := Device(cfg, "d1", "")
	if p.Admin || !p.Allows("status:read") || p.Allows("config:update") {
		t.Fatalf("ro device: %+v", p)
	}
	// A device paired with a profile gets that profile alone, even when devices are otherwise admin.
	cfg.Gateway.DevicePermissionProfiles = nil
	cfg.PermissionProfiles["all"] = config.PermissionProfile{Grants: []string{"admin"}}
	if p := Device(cfg, "d2", "ro"); p.Admin || !p.Allows("status:read") || p.Allows("sessions:execute") {
		t.Fatalf("device paired with ro: %+v", p)
	}
	if p := Device(cfg, "d3", "all"); !p.Admin {
		t.Fatalf("device paired with an admin profile: %+v", p)
	}
	if p := Device(cfg, "d4", "gone"); p.Admin || len(p.Grants) != 0 {
		t.Fatalf("device paired with an unknown profile: %+v", p)
	}
}

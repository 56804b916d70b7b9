package auth

import (
	"slices"
	"testing"

	"github.com/zeroclaw-go/zeroclaw/internal/config"
)

// allowed_agents and allowed_tools: a profile that sets them restricts its principals to what they list, []
// being nothing; profiles are a union, so one that does not set the key (or says "*") lifts it; admin is never
// restricted.
func TestPrincipalSelectors(t *testing.T) {
	cfg := &config.Config{
		PermissionProfiles: map[string]config.PermissionProfile{
			"bot":    {Grants: []string{"sessions:create"}, AllowedAgents: []string{"writer"}, AllowedTools: []string{"file_read"}},
			"none":   {Grants: []string{"sessions:create"}, AllowedAgents: []string{}, AllowedTools: []string{}},
			"plain":  {Grants: []string{"status:read"}},
			"star":   {AllowedAgents: []string{"*"}, AllowedTools: []string{"*", "x"}},
			"admin":  {Grants: []string{"admin"}, AllowedAgents: []string{}},
			"helper": {AllowedAgents: []string{"helper", "writer"}, AllowedTools: []string{"shell"}},
		},
	}
	cases := []struct {
		profiles      []string
		agent, tool   string
		wantA, wantT  bool
		agents, tools []string
	}{
		{[]string{"bot"}, "writer", "file_read", true, true, []string{"writer"}, []string{"file_read"}},
		{[]string{"bot"}, "default", "shell", false, false, []string{"writer"}, []string{"file_read"}},
		{[]string{"none"}, "writer", "file_read", false, false, []string{}, []string{}},
		{[]string{"plain"}, "anything", "shell", true, true, nil, nil},
		{[]string{"bot", "plain"}, "default", "shell", true, true, nil, nil},
		{[]string{"bot", "star"}, "default", "shell", true, true, nil, nil},
		{[]string{"bot", "helper"}, "helper", "shell", true, true, []string{"helper", "writer"}, []string{"file_read", "shell"}},
		{[]string{"bot", "helper"}, "default", "time", false, false, []string{"helper", "writer"}, []string{"file_read", "shell"}},
		{[]string{"admin"}, "default", "shell", true, true, nil, nil},
	}
	for _, c := range cases {
		pr := &Principal{Name: "x"}
		pr.fromProfiles(cfg, c.profiles)
		if pr.AllowsAgent(c.agent) != c.wantA || pr.AllowsTool(c.tool) != c.wantT {
			t.Errorf("%v: agent %s %v, tool %s %v", c.profiles, c.agent, pr.AllowsAgent(c.agent), c.tool, pr.AllowsTool(c.tool))
		}
		if (pr.Agents == nil) != (c.agents == nil) || !slices.Equal(pr.Agents, c.agents) ||
			(pr.Tools == nil) != (c.tools == nil) || !slices.Equal(pr.Tools, c.tools) {
			t.Errorf("%v: agents %#v tools %#v, want %#v %#v", c.profiles, pr.Agents, pr.Tools, c.agents, c.tools)
		}
	}
	var nobody *Principal
	if nobody.AllowsAgent("default") || nobody.AllowsTool("time") {
		t.Error("a nil principal is allowed nothing")
	}
	// A paired device gets its profile's selectors.
	if d := Device(cfg, "d2", "bot"); d.AllowsAgent("default") || !d.AllowsAgent("writer") {
		t.Errorf("device with profile bot: %+v", d)
	}
}

package tools

import (
	"errors"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/zeroclaw-go/zeroclaw/internal/api"
)

func TestParamOptions(t *testing.T) {
	in := ParamInputs{Agents: []string{"zed", "alpha"}, Channels: []ParamChannel{{Ref: "mqtt.plant"}, {Ref: "filesystem.inbox", Disabled: true}}}
	got, err := ParamOptions(api.ParamDomainChannelRefs, in)
	if err != nil || len(got) != 2 || got[0] != (api.ParamOption{Value: "filesystem.inbox", Hint: "disabled"}) || got[1] != (api.ParamOption{Value: "mqtt.plant"}) {
		t.Fatalf("channel_refs %+v %v", got, err)
	}
	got, _ = ParamOptions(api.ParamDomainAgentAliases, in)
	if len(got) != 2 || got[0].Value != "alpha" || got[1].Value != "zed" {
		t.Fatalf("agent_aliases %+v", got)
	}
	got, _ = ParamOptions(api.ParamDomainToolNames, in)
	if len(got) == 0 {
		t.Fatal("no tool names")
	}
	for i, o := range got {
		if i > 0 && got[i-1].Value >= o.Value {
			t.Errorf("not sorted at %s", o.Value)
		}
		if n := utf8.RuneCountInString(o.Hint); n > 61 || (n == 61 && !strings.HasSuffix(o.Hint, "…")) {
			t.Errorf("%s: hint of %d characters", o.Value, n)
		}
	}
	for _, d := range []string{api.ParamDomainPeerTargets, api.ParamDomainPeerGroups} {
		if got, err := ParamOptions(d, in); err != nil || got == nil || len(got) != 0 {
			t.Errorf("%s: %+v %v", d, got, err)
		}
	}
	if _, err := ParamOptions("Channel_Refs", in); !errors.Is(err, ErrParamDomain) || !strings.Contains(err.Error(), "unknown variant `Channel_Refs`") {
		t.Fatalf("unknown domain: %v", err)
	}
}

func TestParamOptionsPeers(t *testing.T) {
	in := ParamInputs{Agents: []string{"b", "a", "c"}, Groups: []ParamGroup{
		{Name: "team", Channel: "telegram", Agents: []string{"a", "b"}, ExternalPeers: []string{"alice", "@bob"}},
		{Name: "irc-ops", Channel: "irc.libera", Agents: []string{"a", "c"}, ExternalPeers: []string{"alice"}},
		{Name: "other", Channel: "telegram", Agents: []string{"b", "c"}},
	}}
	got, _ := ParamOptions(api.ParamDomainPeerGroups, in) // agent "" is the smallest alias, a
	if len(got) != 2 || got[0] != (api.ParamOption{Value: "irc-ops", Hint: "group: 3 members"}) || got[1].Value != "team" || got[1].Hint != "group: 4 members" {
		t.Fatalf("peer_groups %+v", got)
	}
	got, _ = ParamOptions(api.ParamDomainPeerTargets, in)
	var vals []string
	for _, o := range got {
		vals = append(vals, o.Value+"|"+o.Hint)
	}
	if strings.Join(vals, ",") != "c|peer agent,b|peer agent,@alice|external peer,@bob|external peer" {
		t.Fatalf("peer_targets %v", vals)
	}
	in.Channel = "telegram.main"
	got, _ = ParamOptions(api.ParamDomainPeerTargets, in)
	if len(got) != 3 || got[0].Value != "b" {
		t.Fatalf("peer_targets on telegram.main %+v", got)
	}
	in.Agent, in.Channel = "  nobody ", ""
	if got, _ := ParamOptions(api.ParamDomainPeerGroups, in); len(got) != 0 {
		t.Fatalf("unknown agent %+v", got)
	}
}

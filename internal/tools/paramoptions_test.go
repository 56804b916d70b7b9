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

package rpctest

import (
	"strings"
	"testing"
)

// memory/store without agent on an install with no agent named default: the only enabled agent's memory, which
// memory/search for that agent finds; with two agents, -32602 naming them.
func TestMemoryStoreWithoutAgent(t *testing.T) {
	one := strings.Replace(zerocodeConfig, "[agents.default]", "[agents.helper]", 1)
	d := Start(t, WithConfig(one))
	c := &zc{Client: d.Dial(t), t: t}
	c.call("initialize", map[string]any{"protocol_version": 1})
	c.call("memory/store", map[string]any{"key": "fav", "content": "The favourite colour is teal"})
	var found struct {
		Entries []struct {
			Key string `json:"key"`
		} `json:"entries"`
	}
	c.decode("memory/search", map[string]any{"query": "teal", "agent": "helper"}, &found)
	if len(found.Entries) != 1 || found.Entries[0].Key != "fav" {
		t.Fatalf("memory/search for the only agent: %+v", found)
	}

	two := one + "\n[agents.second]\nmodel_provider = \"echo.default\"\nrisk_profile = \"supervised\"\n"
	d2 := Start(t, WithConfig(two))
	c2 := &zc{Client: d2.Dial(t), t: t}
	c2.call("initialize", map[string]any{"protocol_version": 1})
	_, werr := c2.tryCall("memory/store", map[string]any{"key": "fav", "content": "teal"})
	if werr == nil || werr.Code != -32602 || !strings.Contains(werr.Message, "helper, second") {
		t.Fatalf("memory/store without agent among two agents: %+v, want -32602 naming them", werr)
	}
}

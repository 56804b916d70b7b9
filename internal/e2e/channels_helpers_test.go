package e2e

import (
	"testing"
)

// echoHome is a home whose default agent answers with the echo model under a supervised profile: the config
// the channels' kill -9 rounds start from. It returns the home and its .zeroclaw root.
func echoHome(t *testing.T) (string, string) {
	t.Helper()
	return homeWithConfig(t, "schema_version = 3\n\n[providers.models.echo.default]\nmodel = \"echo\"\n\n"+
		"[agents.default]\nmodel_provider = \"echo.default\"\nrisk_profile = \"p\"\n\n[risk_profiles.p]\nlevel = \"supervised\"\n")
}

// channelSessionListed checks through the daemon's socket that channel id's session is an ordinary one
// (session/list names it by its channel_id) and that health shows the channel ok.
func channelSessionListed(t *testing.T, h, id string) {
	t.Helper()
	c := dialRPC(t, agentSock(h))
	c.Initialize()
	list := c.Call("session/list", map[string]any{}, 2)
	found := false
	for _, it := range list["result"].(map[string]any)["sessions"].([]any) {
		if m := it.(map[string]any); m["channel_id"] == id {
			found = true
		}
	}
	if !found {
		t.Fatalf("no channel session in session/list: %v", list)
	}
	health := c.Call("health", map[string]any{}, 3)
	comp, _ := health["result"].(map[string]any)["components"].(map[string]any)["channel:"+id].(map[string]any)
	if comp == nil || comp["status"] != "ok" {
		t.Fatalf("health: %v", health)
	}
}

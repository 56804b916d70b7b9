package rpctest

import (
	"encoding/json"
	"fmt"
	"os"
	"testing"

	"github.com/zeroclaw-go/zeroclaw/internal/api"
)

// A user restricted by allowed_agents = ["writer"] with logs:read reads only agent writer's events: a log
// event carries another agent's work (its tool arguments, outputs, errors), so logs/query leaves other agents'
// and unattributed events out, logs/get answers "not found" for them, and logs/subscribe's replay skips them.
func TestLogsScopedToAllowedAgents(t *testing.T) {
	t.Parallel()
	d := Start(t, WithConfig(agentConfig("", "echo.default", "full", echoTOML+fmt.Sprintf(`
[agents.writer]
model_provider = "echo.default"
risk_profile = "full"

[permission_profiles.reader]
grants = ["sessions:create", "sessions:execute", "logs:read", "config:update:users.alice.uid"]
allowed_agents = ["writer"]

[users.alice]
uid = %d
permission_profiles = ["reader"]

[observability]
log_persistence = "full"
`, os.Getuid()+100000))))
	op := dialRC(t, d, "")
	for _, agent := range []string{"a", "writer", "a"} {
		s := op.newSession(api.SessionNewParams{AgentAlias: agent})
		if tr := op.prompt(s.SessionID, "hello from "+agent, hooks{}); tr.err != nil {
			t.Fatal(tr.err)
		}
	}
	var page api.LogsQueryResult
	op.mustCall(api.MethodLogsQuery, map[string]any{"agent_alias": "a", "limit": 50}, &page)
	if len(page.Events) == 0 {
		t.Fatal("the operator sees no event of agent a")
	}
	var aEvent logEvent
	if err := json.Unmarshal(page.Events[0], &aEvent); err != nil {
		t.Fatal(err)
	}
	var status api.LogsSubscribeResult
	dialRC(t, d, "").mustCall(api.MethodLogsSubscribe, map[string]any{}, &status) // for the ring's epoch

	// This uid becomes alice.
	op.mustCall(api.MethodConfigSet, map[string]any{"prop": "users.alice.uid", "value": os.Getuid()}, nil)
	alice := dialRC(t, d, "")
	page = api.LogsQueryResult{}
	alice.mustCall(api.MethodLogsQuery, map[string]any{"limit": 500}, &page)
	if len(page.Events) == 0 {
		t.Fatal("alice sees none of agent writer's events")
	}
	for _, raw := range page.Events {
		var e logEvent
		if err := json.Unmarshal(raw, &e); err != nil || e.Zeroclaw["agent_alias"] != "writer" {
			t.Fatalf("alice's logs/query returned %s, want only agent writer's events", raw)
		}
	}
	page = api.LogsQueryResult{}
	alice.mustCall(api.MethodLogsQuery, map[string]any{"agent_alias": "a", "limit": 50}, &page)
	if len(page.Events) != 0 {
		t.Fatalf("alice's logs/query for agent a returned %d events", len(page.Events))
	}
	if _, werr := alice.call(api.MethodLogsGet, api.LogsGetParams{ID: aEvent.ID}); werr == nil {
		t.Fatalf("alice's logs/get of agent a's event %s succeeded", aEvent.ID)
	}

	// The live feed from the start of the ring: every replayed event is writer's, and they are all there.
	var all api.LogsQueryResult
	alice.mustCall(api.MethodLogsQuery, map[string]any{"agent_alias": "writer", "limit": 500}, &all)
	var sub api.LogsSubscribeResult
	alice.mustCall(api.MethodLogsSubscribe, map[string]any{"since_seq": 0, "epoch": status.Epoch}, &sub)
	for i, e := range readEvents(t, alice, len(all.Events)) {
		if e.Zeroclaw["agent_alias"] != "writer" {
			t.Fatalf("replayed event %d: %+v, want only agent writer's", i, e)
		}
	}
}

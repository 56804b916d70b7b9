package rpctest

import (
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/zeroclaw-go/zeroclaw/internal/api"
	"github.com/zeroclaw-go/zeroclaw/internal/clock/clocktest"
)

// toolResults returns the tool_result events of a turn, in order.
func toolResults(t *testing.T, tr turn) []api.SessionUpdate {
	t.Helper()
	if tr.err != nil {
		t.Fatalf("prompt: %+v", tr.err)
	}
	return only(tr.events, api.UpdateToolResult)
}

// The model schedules, lists, changes, runs, inspects and removes a job with the cron_* tools; the jobs it
// makes belong to the agent running the turn and are what cron/list shows. Another agent neither sees nor
// touches them, and a readonly agent may list but not add.
func TestCronToolsFromATurn(t *testing.T) {
	t.Parallel()
	clk := clocktest.New(time.Date(2026, 6, 1, 8, 0, 0, 0, time.UTC)) // a Monday
	responders := []http.HandlerFunc{
		stream(ctSSE, openAIToolCall("cron_add", `{"name":"Standup","schedule":{"kind":"cron","expr":"0 9 * * 1-5","tz":"Europe/Paris"},"command":"echo standup"}`)),
		stream(ctSSE, openAIToolCall("cron_list", `{}`)),
		stream(ctSSE, openAIToolCall("cron_update", `{"job_id":"standup","patch":{"command":"echo daily standup","schedule":{"kind":"every","every_ms":3600000}}}`)),
		stream(ctSSE, openAIToolCall("cron_run", `{"job_id":"standup"}`)),
		stream(ctSSE, openAIToolCall("cron_runs", `{"job_id":"standup","limit":5}`)),
		stream(ctSSE, openAIToolCall("cron_add", `{"schedule":"0 9 * * *","command":"echo x"}`)),
		stream(ctSSE, openAIText(5, 2, "Done.")),
		// agent b (full): cannot see or remove a's job
		stream(ctSSE, openAIToolCall("cron_remove", `{"job_id":"standup"}`)),
		stream(ctSSE, openAIToolCall("cron_list", `{}`)),
		stream(ctSSE, openAIText(5, 2, "No.")),
		// agent r (readonly): may list, may not add
		stream(ctSSE, openAIToolCall("cron_list", `{}`)),
		stream(ctSSE, openAIToolCall("cron_add", `{"schedule":{"kind":"after","after_seconds":60},"command":"echo sneaky"}`)),
		stream(ctSSE, openAIText(5, 2, "Refused.")),
		// agent a again: removes its job by name
		stream(ctSSE, openAIToolCall("cron_remove", `{"job_id":"STANDUP"}`)),
		stream(ctSSE, openAIText(5, 2, "Removed.")),
	}
	llm := newLLM(t, responders...)
	extra := `
[agents.b]
model_provider = "openai.fake"
risk_profile = "full"

[agents.r]
model_provider = "openai.fake"
risk_profile = "readonly"
`
	cfg := agentConfig(fakeProviderTOML("openai", llm.URL), "openai.fake", "full", extra)
	d := Start(t, WithConfig(cfg), WithClock(clk))
	c := dialRC(t, d, "")

	sa := c.newSession(api.SessionNewParams{AgentAlias: "a"})
	res := toolResults(t, c.prompt(sa.SessionID, "schedule my standup", hooks{}))
	if len(res) != 6 {
		t.Fatalf("%d tool results, want 6: %+v", len(res), res)
	}
	for i, r := range res[:5] {
		if r.IsError {
			t.Fatalf("tool %d (%s) failed: %s", i, r.Name, output(t, r))
		}
	}
	var added map[string]any
	if err := json.Unmarshal([]byte(output(t, res[0])), &added); err != nil {
		t.Fatalf("cron_add output is not JSON: %v\n%s", err, output(t, res[0]))
	}
	id, _ := added["id"].(string)
	if id == "" || added["name"] != "Standup" || added["job_type"] != "shell" || added["next_run_utc"] != "2026-06-02T07:00:00Z" ||
		added["next_run_local"] != "2026-06-02T09:00:00+02:00" || added["timezone_source"] != "explicit" ||
		added["schedule_timezone"] != "Europe/Paris" || added["enabled"] != true {
		t.Fatalf("cron_add output: %v", added)
	}
	if _, ok := added["allowed_tools"]; !ok {
		t.Fatalf("cron_add output lacks allowed_tools (null): %v", added)
	}
	var listed []map[string]any
	if err := json.Unmarshal([]byte(output(t, res[1])), &listed); err != nil || len(listed) != 1 || listed[0]["id"] != id ||
		listed[0]["agent_alias"] != "a" || listed[0]["next_run_utc"] != "2026-06-02T07:00:00Z" {
		t.Fatalf("cron_list output (%v): %s", err, output(t, res[1]))
	}
	var updated map[string]any
	if err := json.Unmarshal([]byte(output(t, res[2])), &updated); err != nil || updated["command"] != "echo daily standup" ||
		updated["next_run"] != "2026-06-01T09:00:00Z" || updated["timezone_source"] != "not_applicable" {
		t.Fatalf("cron_update output (%v): %s", err, output(t, res[2]))
	}
	var ran map[string]any
	if err := json.Unmarshal([]byte(output(t, res[3])), &ran); err != nil || ran["job_id"] != id || ran["status"] != "ok" ||
		!strings.Contains(ran["output"].(string), "daily standup") {
		t.Fatalf("cron_run output (%v): %s", err, output(t, res[3]))
	}
	var runs []map[string]any
	if err := json.Unmarshal([]byte(output(t, res[4])), &runs); err != nil || len(runs) != 1 || runs[0]["status"] != "ok" || runs[0]["job_id"] != id {
		t.Fatalf("cron_runs output (%v): %s", err, output(t, res[4]))
	}
	if !res[5].IsError || !strings.Contains(output(t, res[5]), `expected a JSON object with a "kind" field`) {
		t.Fatalf("cron_add with a plain string schedule: %+v %s", res[5], output(t, res[5]))
	}
	_, bodies := llm.requests()
	if offered := toolNames(t, bodies[0]); !containsAll(offered, "cron_add", "cron_list", "cron_update", "cron_remove", "cron_run", "cron_runs") {
		t.Fatalf("a chat turn was offered %v", offered)
	}

	var list api.CronListResult
	c.mustCall(api.MethodCronList, map[string]any{}, &list)
	if len(list.Jobs) != 1 || list.Jobs[0].ID != id || list.Jobs[0].AgentAlias != "a" || list.Jobs[0].Command != "echo daily standup" ||
		list.Jobs[0].Source != "imperative" {
		t.Fatalf("cron/list after the turn: %+v", list.Jobs)
	}

	sb := c.newSession(api.SessionNewParams{AgentAlias: "b"})
	res = toolResults(t, c.prompt(sb.SessionID, "remove the standup", hooks{}))
	if len(res) != 2 || !res[0].IsError || !strings.Contains(output(t, res[0]), "no cron job") || output(t, res[1]) != "[]" {
		t.Fatalf("agent b reached a's job: %+v / %s", res, output(t, res[1]))
	}

	sr := c.newSession(api.SessionNewParams{AgentAlias: "r"})
	res = toolResults(t, c.prompt(sr.SessionID, "add a job", hooks{}))
	if len(res) != 2 || res[0].IsError || output(t, res[0]) != "[]" {
		t.Fatalf("readonly cron_list: %+v", res)
	}
	if !res[1].IsError || !strings.Contains(output(t, res[1]), "readonly") {
		t.Fatalf("readonly cron_add was not refused: %+v %s", res[1], output(t, res[1]))
	}
	c.mustCall(api.MethodCronList, map[string]any{}, &list)
	if len(list.Jobs) != 1 {
		t.Fatalf("jobs after the refused add: %+v", list.Jobs)
	}

	res = toolResults(t, c.prompt(sa.SessionID, "drop it", hooks{}))
	if len(res) != 1 || res[0].IsError || output(t, res[0]) != "Removed cron job "+id {
		t.Fatalf("cron_remove: %+v %s", res, output(t, res[0]))
	}
	c.mustCall(api.MethodCronList, map[string]any{}, &list)
	if len(list.Jobs) != 0 {
		t.Fatalf("jobs after remove: %+v", list.Jobs)
	}
}

// An agent job's turn is not offered the scheduler's mutating tools unless its allowed_tools names them.
func TestCronAgentJobWithoutSchedulerMutations(t *testing.T) {
	t.Parallel()
	llm := newLLM(t, stream(ctSSE, openAIText(5, 2, "ok")))
	cfg := agentConfig(fakeProviderTOML("openai", llm.URL), "openai.fake", "full", "")
	d := Start(t, WithConfig(cfg))
	c := dialRC(t, d, "")
	var plain, opted api.CronJob
	c.mustCall(api.MethodCronAdd, map[string]any{"agent": "a", "schedule": "0 9 * * *", "prompt": "tidy up"}, &plain)
	c.mustCall(api.MethodCronAdd, map[string]any{"agent": "a", "schedule": "0 9 * * *", "prompt": "plan",
		"allowed_tools": []string{"cron_add", "cron_list"}}, &opted)
	var trig api.CronTriggerResult
	c.mustCall(api.MethodCronTrigger, map[string]any{"id": plain.ID}, &trig)
	c.mustCall(api.MethodCronTrigger, map[string]any{"id": opted.ID}, &trig)
	_, bodies := llm.requests()
	if len(bodies) != 2 {
		t.Fatalf("%d provider requests", len(bodies))
	}
	got := toolNames(t, bodies[0])
	if !containsAll(got, "cron_list", "cron_runs", "shell") {
		t.Fatalf("agent job offered %v", got)
	}
	for _, no := range []string{"cron_add", "cron_update", "cron_remove", "cron_run"} {
		if slices.Contains(got, no) {
			t.Fatalf("agent job was offered %s: %v", no, got)
		}
	}
	if got := toolNames(t, bodies[1]); !slices.Equal(got, []string{"cron_add", "cron_list"}) {
		t.Fatalf("agent job with allowed_tools offered %v", got)
	}
}

func containsAll(have []string, want ...string) bool {
	for _, w := range want {
		if !slices.Contains(have, w) {
			return false
		}
	}
	return true
}

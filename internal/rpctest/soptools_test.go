package rpctest

import (
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/zeroclaw-go/zeroclaw/internal/api"
)

var runIDInBody = regexp.MustCompile(`run-[0-9]+-[0-9]{4}`)

// withRunID answers with a tool call whose arguments carry the run id the model saw last (the newest one in
// the request the backend just recorded): the model at the edge, reading what the sop_execute tool said.
func withRunID(m *llm, tool, args string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		reqs := m.Requests()
		ids := runIDInBody.FindAllString(string(reqs[len(reqs)-1].Body), -1)
		id := "run-missing-0000"
		if len(ids) > 0 {
			id = ids[len(ids)-1]
		}
		stream(ctSSE, openAIToolCall(tool, strings.ReplaceAll(args, "RUN", id)))(w, r)
	}
}

// An agent drives a SOP with upstream's tools: it lists and starts one; its first step is gated (supervised),
// so reporting it parks the run instead of recording it; reporting again is refused while the run waits
// (upstream's #8678: the gate could be skipped), and the agent may not clear its own gate under
// approval_mode = "out_of_band_required". sop_status shows it waiting, and a person approves it on the socket.
func TestSopToolsFromATurn(t *testing.T) {
	t.Parallel()
	var m *llm
	m = newLLM(t,
		stream(ctSSE, openAIToolCall("sop_list", `{"filter":"dep"}`)),
		stream(ctSSE, openAIToolCall("sop_execute", `{"name":"deploy","payload":"{\"build\":\"7\"}"}`)),
		func(w http.ResponseWriter, r *http.Request) {
			withRunID(m, "sop_advance", `{"run_id":"RUN","status":"completed","output":"checked"}`)(w, r)
		},
		func(w http.ResponseWriter, r *http.Request) {
			withRunID(m, "sop_advance", `{"run_id":"RUN","status":"completed","output":"checked again"}`)(w, r)
		},
		func(w http.ResponseWriter, r *http.Request) { withRunID(m, "sop_approve", `{"run_id":"RUN"}`)(w, r) },
		func(w http.ResponseWriter, r *http.Request) { withRunID(m, "sop_status", `{"run_id":"RUN"}`)(w, r) },
		stream(ctSSE, openAIText(5, 2, "Waiting for a person.")),
	)
	cfgDir := filepath.Join(ShortTempDir(t), "install")
	if err := os.MkdirAll(cfgDir, 0o700); err != nil {
		t.Fatal(err)
	}
	sopInstall(t, cfgDir)
	cfg := agentConfig(fakeProviderTOML("openai", m.URL), "openai.fake", "full",
		"\n[sop]\nsops_dir = \"shared/sops\"\napproval_mode = \"out_of_band_required\"\n")
	d := StartOn(t, cfgDir, WithConfig(cfg))
	c := dialRC(t, d, "")
	s := c.newSession(api.SessionNewParams{AgentAlias: "a"})
	res := toolResults(t, c.prompt(s.SessionID, "deploy build 7", hooks{}))
	if len(res) != 6 {
		t.Fatalf("%d tool results, want 6: %+v", len(res), res)
	}
	want := []struct {
		isErr bool
		says  string
	}{
		{false, "**deploy** [normal] — 2 steps, 1 trigger(s): manual"},
		{false, "SOP run started: run-"},
		{true, "needs approval first"},
		{true, "waiting_approval"},
		{true, "out_of_band_required"},
		{false, "waiting_approval, step 1 of 2"},
	}
	for i, w := range want {
		out := output(t, res[i])
		if res[i].IsError != w.isErr || !strings.Contains(out, w.says) {
			t.Fatalf("tool %d (%s): error=%v %q, want error=%v containing %q", i, res[i].Name, res[i].IsError, out, w.isErr, w.says)
		}
	}
	if !strings.Contains(output(t, res[1]), "Current step: **Check**") {
		t.Fatalf("sop_execute gave no step instruction: %q", output(t, res[1]))
	}
	id := runIDInBody.FindString(output(t, res[1]))

	// Nothing was recorded for the gated step; a person's approval on the socket lets the agent go on.
	var run api.SopRun
	c.mustCall(api.MethodSopsRunGet, api.SopRunIDParams{RunID: id}, &run)
	if run.Status != api.SopRunWaitingApproval || len(run.StepResults) != 0 || run.Gate == nil || run.Gate.Step != 1 {
		t.Fatalf("run after the turn = %+v", run)
	}
	var out api.SopResolveResult
	c.mustCall(api.MethodSopsApprove, api.SopResolveParams{RunID: id}, &out)
	if out.Outcome != api.SopOutcomeResumed {
		t.Fatalf("approve = %+v", out)
	}
}

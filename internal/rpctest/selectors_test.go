package rpctest

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/zeroclaw-go/zeroclaw/internal/api"
)

// A user whose permission profile lists allowed_agents = ["writer"] and allowed_tools = ["file_read"]: the
// daemon's own socket, as that user (its uid is this test's).
func selectorsConfig() string {
	return agentConfig("", "echo.default", "full", echoTOML+fmt.Sprintf(`
[agents.writer]
model_provider = "echo.default"
risk_profile = "full"

[permission_profiles.bot]
grants = ["sessions:create", "sessions:execute", "sessions:read", "cron:create", "cron:update", "cron:execute"]
allowed_agents = ["writer"]
allowed_tools = ["file_read"]

[users.alice]
uid = %d
permission_profiles = ["bot"]
`, os.Getuid()))
}

// A restricted user asking for another agent gets -32012 naming the agent and what it may use, in either chat
// mode; a session of its own agent works, and in its turns a tool it may not use is refused even when the
// model calls it, while an allowed one runs.
func TestAllowedAgentsAndToolsOverSocket(t *testing.T) {
	t.Parallel()
	d := Start(t, WithConfig(selectorsConfig()))
	c := dialRC(t, d, "")
	for _, p := range []api.SessionNewParams{{AgentAlias: "a"}, {AgentAlias: "a", ChatMode: "acp"}} {
		_, werr := c.call(api.MethodSessionNew, p)
		if werr == nil || werr.Code != api.CodeForbidden || !strings.Contains(werr.Message, `may not use agent "a"`) ||
			!strings.Contains(werr.Message, "allowed_agents: writer") {
			t.Fatalf("session/new %+v: %+v, want -32012 naming the agent", p, werr)
		}
	}
	s := c.newSession(api.SessionNewParams{AgentAlias: "writer"})
	if err := os.WriteFile(filepath.Join(s.WorkspaceDir, "notes.txt"), []byte("hello notes"), 0o600); err != nil {
		t.Fatal(err)
	}

	tr := c.prompt(s.SessionID, shellHook("touch pwned.txt"), hooks{})
	r := toolResult(t, tr)
	if !r.IsError || !strings.Contains(output(t, r), "shell") || exists(t, filepath.Join(s.WorkspaceDir, "pwned.txt")) {
		t.Fatalf("a disallowed tool: error %v output %q", r.IsError, output(t, r))
	}
	tr = c.prompt(s.SessionID, `/tool file_read {"path":"notes.txt"}`, hooks{})
	if r := toolResult(t, tr); r.IsError || !strings.Contains(output(t, r), "hello notes") {
		t.Fatalf("an allowed tool: error %v output %q", r.IsError, output(t, r))
	}

	// A job runs unattended with the daemon's reach: it may only be what the principal could run itself.
	for _, p := range []map[string]any{
		{"agent": "a", "schedule": "0 9 * * *", "prompt": "hi", "job_type": "agent"},
		{"agent": "writer", "schedule": "0 9 * * *", "command": "touch pwned.txt"},
		{"agent": "writer", "schedule": "0 9 * * *", "prompt": "hi", "allowed_tools": []string{"shell"}},
	} {
		if _, werr := c.call(api.MethodCronAdd, p); werr == nil || werr.Code != api.CodeForbidden {
			t.Errorf("cron/add %v: %+v, want -32012", p, werr)
		}
	}
	var job api.CronJob
	c.mustCall(api.MethodCronAdd, map[string]any{"agent": "writer", "schedule": "0 9 * * *", "prompt": "hi"}, &job)
	if job.AgentAlias != "writer" || len(job.AllowedTools) != 1 || job.AllowedTools[0] != "file_read" {
		t.Errorf("an agent job of a tool-restricted principal: %+v, want its tools narrowed to file_read", job)
	}

	// The owner (an admin) is not restricted: the other agent and the shell work for it.
	d2 := Start(t, WithConfig(agentConfig("", "echo.default", "full", echoTOML)))
	o := dialRC(t, d2, "")
	os2 := o.newSession(api.SessionNewParams{AgentAlias: "a"})
	if r := toolResult(t, o.prompt(os2.SessionID, shellHook("echo fine"), hooks{})); r.IsError {
		t.Fatalf("the owner's shell: %q", output(t, r))
	}
}

// The delegate tool would run another agent's turn: a principal restricted to some agents (and to no tools)
// does not get it, while the owner, on the same agent, does.
func TestAllowedAgentsHideDelegate(t *testing.T) {
	t.Parallel()
	cfg := agentConfig("", "echo.default", "deleg", echoTOML+`
[risk_profiles.deleg]
level = "full"
workspace_only = true
delegation_policy = { mode = "allow" }

[agents.writer]
model_provider = "echo.default"
risk_profile = "deleg"
delegates = ["a"]
`)
	owner := Start(t, WithConfig(cfg))
	o := dialRC(t, owner, "")
	os1 := o.newSession(api.SessionNewParams{AgentAlias: "writer"})
	hook := `/tool delegate {"agent":"a","prompt":"hi"}`
	if r := toolResult(t, o.prompt(os1.SessionID, hook, hooks{})); r.IsError {
		t.Fatalf("the owner's delegation: %q", output(t, r))
	}
	d := Start(t, WithConfig(cfg+fmt.Sprintf(`
[permission_profiles.bot]
grants = ["sessions:create", "sessions:execute", "sessions:read"]
allowed_agents = ["writer"]

[users.alice]
uid = %d
permission_profiles = ["bot"]
`, os.Getuid())))
	c := dialRC(t, d, "")
	s := c.newSession(api.SessionNewParams{AgentAlias: "writer"})
	if r := toolResult(t, c.prompt(s.SessionID, hook, hooks{})); !r.IsError || !strings.Contains(output(t, r), "delegate") {
		t.Fatalf("an agent-restricted principal's delegation: error %v %q", r.IsError, output(t, r))
	}
}

// allowed_tools is what the model is offered: a restricted user's turn sends the provider only its tools (and
// none at all for allowed_tools = []), the owner's turn on the same agent all of them.
func TestAllowedToolsOffered(t *testing.T) {
	t.Parallel()
	llm := newLLM(t, stream(ctSSE, openAIText(5, 2, "ok")))
	cfg := agentConfig(fakeProviderTOML("openai", llm.URL), "openai.fake", "full", "")
	owner := Start(t, WithConfig(cfg))
	o := dialRC(t, owner, "")
	if tr := o.prompt(o.newSession(api.SessionNewParams{AgentAlias: "a"}).SessionID, "hi", hooks{}); tr.err != nil {
		t.Fatal(tr.err)
	}
	for _, tools := range []string{`["file_read", "file_list"]`, `[]`} {
		d := Start(t, WithConfig(cfg+fmt.Sprintf(`
[permission_profiles.bot]
grants = ["sessions:create", "sessions:execute", "sessions:read"]
allowed_tools = %s

[users.alice]
uid = %d
permission_profiles = ["bot"]
`, tools, os.Getuid())))
		u := dialRC(t, d, "")
		if tr := u.prompt(u.newSession(api.SessionNewParams{AgentAlias: "a"}).SessionID, "hi", hooks{}); tr.err != nil {
			t.Fatal(tr.err)
		}
	}
	_, bodies := llm.requests()
	if len(bodies) != 3 {
		t.Fatalf("%d provider requests, want 3", len(bodies))
	}
	if got := toolNames(t, bodies[0]); !containsAll(got, "shell", "file_read", "file_write") {
		t.Errorf("the owner was offered %v", got)
	}
	got := toolNames(t, bodies[1])
	slices.Sort(got)
	if !slices.Equal(got, []string{"file_list", "file_read"}) {
		t.Errorf("allowed_tools [file_read, file_list] offered %v", got)
	}
	if got := toolNames(t, bodies[2]); len(got) != 0 {
		t.Errorf("allowed_tools [] offered %v", got)
	}
}

// config/patch checks every op's path against a scoped config:update (the forbidden one named by its index,
// nothing written); config/migrate rewrites the whole file, so a scoped grant cannot run it.
func TestConfigPatchAndMigrateGrants(t *testing.T) {
	t.Parallel()
	d := Start(t, asUser("config:read", "config:update:agents.*.system_prompt"))
	cfgPath := filepath.Join(d.ConfigDir, "config.toml")
	before, err := os.ReadFile(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	u := d.Dial(t)
	u.Initialize()
	data := mustError(t, call(t, u, 1, "config/patch", map[string]any{"ops": []map[string]any{
		{"op": "set", "prop": "agents.default.system_prompt", "value": "be brief"},
		{"op": "comment", "prop": "gateway.port", "comment": "x"},
	}}), api.CodeForbidden)
	if data["index"] != float64(1) || data["prop"] != "gateway.port" {
		t.Fatalf("data %v, want index 1 gateway.port", data)
	}
	mustError(t, call(t, u, 2, "config/migrate", map[string]any{}), api.CodeForbidden)
	if after, _ := os.ReadFile(cfgPath); string(after) != string(before) {
		t.Fatalf("a refused patch or migrate changed config.toml:\n%s", after)
	}
	mustResult(t, call(t, u, 3, "config/patch", map[string]any{"ops": []map[string]any{
		{"op": "set", "prop": "agents.default.system_prompt", "value": "be brief", "comment": "set by alice"}}}))
	if after, _ := os.ReadFile(cfgPath); !strings.Contains(string(after), "# set by alice\nsystem_prompt = \"be brief\"") {
		t.Fatalf("config.toml after the allowed patch:\n%s", after)
	}
	mustResult(t, call(t, u, 4, "config/drift", map[string]any{}))
}

// A hostile model in a tool-restricted principal's turn must not reach, through the cron_* tools it was
// allowed, what allowed_tools keeps from it: a shell job (the shell, unattended, with the daemon's reach), an
// agent job whose turns get every tool (none named) or a tool the principal lacks, nor a patch widening a job's
// tools. The same rules as cron/add over the socket (checkCronAdd), on the tool path.
func TestAllowedToolsHoldThroughCronTools(t *testing.T) {
	t.Parallel()
	llm := newLLM(t,
		stream(ctSSE, openAIToolCall("cron_add", `{"name":"sneak","schedule":{"kind":"every","every_ms":3600000},"job_type":"shell","command":"touch pwned.txt"}`)),
		stream(ctSSE, openAIToolCall("cron_run", `{"job_id":"sneak"}`)),
		stream(ctSSE, openAIToolCall("cron_add", `{"name":"wide","schedule":{"kind":"every","every_ms":3600000},"prompt":"hi"}`)),
		stream(ctSSE, openAIToolCall("cron_add", `{"name":"shelly","schedule":{"kind":"every","every_ms":3600000},"prompt":"hi","allowed_tools":["shell"]}`)),
		stream(ctSSE, openAIToolCall("cron_update", `{"job_id":"wide","patch":{"allowed_tools":["shell","file_read"]}}`)),
		stream(ctSSE, openAIText(5, 2, "done")),
	)
	cfg := agentConfig(fakeProviderTOML("openai", llm.URL), "openai.fake", "full", fmt.Sprintf(`
[permission_profiles.bot]
grants = ["sessions:create", "sessions:execute", "sessions:read", "cron:read"]
allowed_tools = ["cron_add", "cron_run", "cron_update", "file_read"]

[users.alice]
uid = %d
permission_profiles = ["bot"]
`, os.Getuid()))
	d := Start(t, WithConfig(cfg))
	c := dialRC(t, d, "")
	s := c.newSession(api.SessionNewParams{AgentAlias: "a"})
	res := toolResults(t, c.prompt(s.SessionID, "schedule things", hooks{}))
	if len(res) != 5 {
		t.Fatalf("%d tool results, want 5: %+v", len(res), res)
	}
	if !res[0].IsError || !strings.Contains(output(t, res[0]), "shell") {
		t.Errorf("cron_add of a shell job: error %v %q, want refused naming the shell", res[0].IsError, output(t, res[0]))
	}
	if exists(t, filepath.Join(s.WorkspaceDir, "pwned.txt")) {
		t.Errorf("the shell job ran: pwned.txt exists")
	}
	if res[2].IsError {
		t.Fatalf("cron_add of an agent job: %q", output(t, res[2]))
	}
	var added struct {
		AllowedTools []string `json:"allowed_tools"`
	}
	if err := json.Unmarshal([]byte(output(t, res[2])), &added); err != nil {
		t.Fatal(err)
	}
	if want := []string{"cron_add", "cron_run", "cron_update", "file_read"}; !slices.Equal(added.AllowedTools, want) {
		t.Errorf("an agent job of a tool-restricted turn has allowed_tools %v, want %v", added.AllowedTools, want)
	}
	for _, i := range []int{3, 4} {
		if !res[i].IsError || !strings.Contains(output(t, res[i]), `"shell"`) {
			t.Errorf("tool %d (%s): error %v %q, want refused naming shell", i, res[i].Name, res[i].IsError, output(t, res[i]))
		}
	}
	var list struct {
		Jobs []api.CronJob `json:"jobs"`
	}
	c.mustCall(api.MethodCronList, map[string]any{}, &list)
	if jobs := list.Jobs; len(jobs) != 1 || jobs[0].Name == nil || *jobs[0].Name != "wide" || slices.Contains(jobs[0].AllowedTools, "shell") {
		t.Fatalf("jobs after the turn: %+v, want only wide, without the shell", list.Jobs)
	}
}

// A principal allowed only the delegate tool must not run, through the delegated agent's turn, the tools its
// allowed_tools keeps from it: the delegated turn is offered only the caller's tools (here none but delegate,
// which a delegated turn never has), so the model there cannot touch a file with the shell.
func TestAllowedToolsHoldThroughDelegate(t *testing.T) {
	t.Parallel()
	d := Start(t, WithConfig(agentConfig("", "echo.default", "deleg", echoTOML+fmt.Sprintf(`
[risk_profiles.deleg]
level = "full"
workspace_only = true
delegation_policy = { mode = "allow" }

[agents.writer]
model_provider = "echo.default"
risk_profile = "deleg"
delegates = ["a"]

[permission_profiles.bot]
grants = ["sessions:create", "sessions:execute", "sessions:read"]
allowed_tools = ["delegate"]

[users.alice]
uid = %d
permission_profiles = ["bot"]
`, os.Getuid()))))
	c := dialRC(t, d, "")
	sa := c.newSession(api.SessionNewParams{AgentAlias: "a"}) // where a's shell would write
	sw := c.newSession(api.SessionNewParams{AgentAlias: "writer"})
	args, _ := json.Marshal(map[string]string{"agent": "a", "prompt": shellHook("touch pwned.txt")})
	r := toolResult(t, c.prompt(sw.SessionID, "/tool delegate "+string(args), hooks{}))
	if exists(t, filepath.Join(sa.WorkspaceDir, "pwned.txt")) {
		t.Fatalf("the delegated turn ran the shell for a principal allowed only delegate (delegate said %q)", output(t, r))
	}
	if r.IsError || !strings.Contains(output(t, r), "Agent 'a'") || strings.Contains(output(t, r), "exit code") {
		t.Fatalf("delegate: error %v %q, want a's reply with its shell call refused", r.IsError, output(t, r))
	}
}

// cron/delete is a change to a job as cron/patch is: a principal restricted to agent writer may not remove a
// job of agent other (here one declared in config), and the job stays; one of its own agent's it may. Nor may
// it list, get or read the runs of agent other's jobs.
func TestAllowedAgentsHoldOnCronReadAndDelete(t *testing.T) {
	t.Parallel()
	job := func(id string) string {
		return fmt.Sprintf("\n[cron.%s]\njob_type = \"agent\"\nprompt = \"hi\"\nschedule = { kind = \"every\", every_ms = 3600000 }\n", id)
	}
	d := Start(t, WithConfig(agentConfig("", "echo.default", "full", echoTOML+`
[agents.other]
model_provider = "echo.default"
risk_profile = "full"
cron_jobs = ["nightly"]

[agents.writer]
model_provider = "echo.default"
risk_profile = "full"
cron_jobs = ["mine"]
`+job("nightly")+job("mine")+fmt.Sprintf(`
[permission_profiles.bot]
grants = ["cron:read", "cron:delete", "config:update:users.alice.uid"]
allowed_agents = ["writer"]

[users.alice]
uid = %d
permission_profiles = ["bot"]
`, os.Getuid()))))
	c := dialRC(t, d, "")
	if _, werr := c.call(api.MethodCronDelete, map[string]any{"id": "nightly"}); werr == nil || werr.Code != api.CodeForbidden ||
		!strings.Contains(werr.Message, `"other"`) {
		t.Fatalf("cron/delete of agent other's job: %+v, want -32012 naming the agent", werr)
	}
	var list struct {
		Jobs []api.CronJob `json:"jobs"`
	}
	// Reading is held the same way: another agent's job (its prompt, its run outputs) is not alice's to read.
	c.mustCall(api.MethodCronList, map[string]any{}, &list)
	if len(list.Jobs) != 1 || list.Jobs[0].ID != "mine" {
		t.Fatalf("cron/list as alice: %+v, want only agent writer's job", list.Jobs)
	}
	for _, m := range []string{api.MethodCronGet, api.MethodCronRuns} {
		if _, werr := c.call(m, map[string]any{"id": "nightly"}); werr == nil || werr.Code != api.CodeForbidden ||
			!strings.Contains(werr.Message, `"other"`) {
			t.Errorf("%s of agent other's job: %+v, want -32012 naming the agent", m, werr)
		}
	}
	// Its own agent's job passes the agent check and meets the next one: a job declared in config is not
	// deleted through the API (it would come back at the next reconcile).
	if _, werr := c.call(api.MethodCronDelete, map[string]any{"id": "mine"}); werr == nil || werr.Code != api.CodeInvalidParams ||
		!strings.Contains(werr.Message, "[cron.mine]") {
		t.Fatalf("cron/delete of its own agent's declared job: %+v, want -32602 naming [cron.mine]", werr)
	}
	// As the operator again (alice moves to another uid): the refused delete left the job in place.
	c.mustCall(api.MethodConfigSet, map[string]any{"prop": "users.alice.uid", "value": os.Getuid() + 100000}, nil)
	op := dialRC(t, d, "")
	list.Jobs = nil
	op.mustCall(api.MethodCronList, map[string]any{}, &list)
	if !slices.ContainsFunc(list.Jobs, func(j api.CronJob) bool { return j.ID == "nightly" }) {
		t.Fatalf("after alice's refused delete the operator sees %+v, want nightly kept", list.Jobs)
	}
}

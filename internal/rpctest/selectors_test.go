package rpctest

import (
	"fmt"
	"os"
	"path/filepath"
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
grants = ["sessions:create", "sessions:execute", "sessions:read"]
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

	// The owner (an admin) is not restricted: the other agent and the shell work for it.
	d2 := Start(t, WithConfig(agentConfig("", "echo.default", "full", echoTOML)))
	o := dialRC(t, d2, "")
	os2 := o.newSession(api.SessionNewParams{AgentAlias: "a"})
	if r := toolResult(t, o.prompt(os2.SessionID, shellHook("echo fine"), hooks{})); r.IsError {
		t.Fatalf("the owner's shell: %q", output(t, r))
	}
}

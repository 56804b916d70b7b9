package rpctest

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zeroclaw-go/zeroclaw/internal/api"
)

// A SOP's steps run unattended with the daemon's reach, as a scheduled job: a principal restricted by
// allowed_agents or allowed_tools may start (sops/run) only a SOP whose every step runs one of its agents and,
// when its tools are restricted, is scoped to tools it may use (cron/add's rule, checkCronAdd). The owner
// starts any of them.
func TestSopRunHoldsSelectors(t *testing.T) {
	t.Parallel()
	cfgDir := filepath.Join(ShortTempDir(t), "install")
	sops := filepath.Join(cfgDir, "shared", "sops")
	for name, sopToml := range map[string]string{
		"other":  "[sop]\nname = \"other\"\ndescription = \"runs agent a\"\nagent = \"a\"\nexecution_mode = \"supervised\"\n\n[[triggers]]\ntype = \"manual\"\n",
		"mine":   "[sop]\nname = \"mine\"\ndescription = \"runs writer\"\nagent = \"writer\"\nexecution_mode = \"supervised\"\n\n[[triggers]]\ntype = \"manual\"\n",
		"scoped": "[sop]\nname = \"scoped\"\ndescription = \"runs writer, file_read only\"\nagent = \"writer\"\nexecution_mode = \"supervised\"\n\n[[triggers]]\ntype = \"manual\"\n",
	} {
		dir := filepath.Join(sops, name)
		if err := os.MkdirAll(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		md := "## Steps\n\n1. **Look** — Look around.\n"
		if name == "scoped" {
			md = "## Steps\n\n1. **Look** — Look around.\n   - tools: file_read\n"
		}
		for f, body := range map[string]string{"SOP.toml": sopToml, "SOP.md": md} {
			if err := os.WriteFile(filepath.Join(dir, f), []byte(body), 0o600); err != nil {
				t.Fatal(err)
			}
		}
	}
	base := agentConfig("", "echo.default", "full", echoTOML+`
[agents.writer]
model_provider = "echo.default"
risk_profile = "full"

[sop]
sops_dir = "shared/sops"
`)
	user := func(selectors string) string {
		return base + fmt.Sprintf(`
[permission_profiles.bot]
grants = ["sops:read", "sops:execute"]
%s

[users.alice]
uid = %d
permission_profiles = ["bot"]
`, selectors, os.Getuid())
	}
	run := func(c *rc, name string) *wireError {
		_, werr := c.call(api.MethodSopsRun, map[string]any{"name": name})
		return werr
	}

	agents := dialRC(t, StartOn(t, cfgDir, WithConfig(user(`allowed_agents = ["writer"]`))), "")
	if werr := run(agents, "other"); werr == nil || werr.Code != api.CodeForbidden || !strings.Contains(werr.Message, `"a"`) {
		t.Errorf("an agent-restricted principal's sops/run of a SOP running agent a: %+v, want -32012 naming a", werr)
	}
	if werr := run(agents, "mine"); werr != nil {
		t.Errorf("sops/run of a SOP running its own agent: %+v", werr)
	}

	toolsDir := filepath.Join(ShortTempDir(t), "install")
	if err := os.CopyFS(filepath.Join(toolsDir, "shared", "sops"), os.DirFS(sops)); err != nil {
		t.Fatal(err)
	}
	enforced := strings.Replace(user(`allowed_tools = ["file_read", "sop_advance", "sop_approve", "sop_status"]`),
		"[sop]\n", "[sop]\nstep_scope_enforce = true\n", 1)
	tools := dialRC(t, StartOn(t, toolsDir, WithConfig(enforced)), "")
	if werr := run(tools, "mine"); werr == nil || werr.Code != api.CodeForbidden || !strings.Contains(werr.Message, "allowed_tools") {
		t.Errorf("a tool-restricted principal's sops/run of an unscoped SOP: %+v, want -32012 naming allowed_tools", werr)
	}
	if werr := run(tools, "scoped"); werr != nil {
		t.Errorf("sops/run of a SOP scoped to its tools: %+v", werr)
	}
}

package rpctest

import (
	"path/filepath"
	"testing"

	"github.com/zeroclaw-go/zeroclaw/internal/api"
)

// skills/list shows each agent's own workspace skills (what the agent loads first) beside the bundles', and
// alone with bundle "workspace" or for one agent.
func TestSkillsListShowsWorkspaceSkills(t *testing.T) {
	t.Parallel()
	d := Start(t)
	c := dialRC(t, d, "")
	ws := filepath.Join(d.ConfigDir, "agents", "default", "workspace", "skills", "deploy")
	mustWrite(t, filepath.Join(ws, "SKILL.md"), "---\nname: deploy\ndescription: Ships the site.\n---\nRun make deploy.\n")

	for _, params := range []map[string]any{{}, {"bundle": "workspace"}, {"agent": "default"}} {
		var list api.SkillsListResult
		c.mustCall(api.MethodSkillsList, params, &list)
		if len(list.Skills) != 1 || list.Skills[0].Bundle != "workspace" || list.Skills[0].Agent != "default" ||
			list.Skills[0].Name != "deploy" || list.Skills[0].Directory != ws {
			t.Fatalf("skills/list %v = %+v", params, list)
		}
	}
	_, werr := c.call(api.MethodSkillsList, map[string]any{"agent": "nobody"})
	wantErr(t, "skills/list of an unknown agent", werr, -32602, "nobody")
}

package doctor

import (
	"fmt"
	"os/exec"
	"path/filepath"

	"github.com/zeroclaw-go/zeroclaw/internal/api"
	"github.com/zeroclaw-go/zeroclaw/internal/config"
)

// CategoryMCP holds the MCP server findings.
const CategoryMCP = "mcp"

// checkMCP checks each [[mcp.servers]] entry (a stdio command that can be found, a server some agent is granted)
// and, inside the daemon, each server's live state.
func checkMCP(r *report, cfg *config.Config, status func() []api.MCPServerStatus) {
	if len(cfg.MCP.Servers) == 0 {
		return
	}
	if !cfg.MCP.Enabled {
		r.ok(CategoryMCP, "mcp-disabled", r.t("doctor-mcp-disabled", "count", len(cfg.MCP.Servers)))
		return
	}
	granted := map[string]bool{}
	for alias := range cfg.Agents {
		for _, s := range cfg.MCPServersForAgent(alias) {
			granted[s.Name] = true
		}
	}
	var live map[string]api.MCPServerStatus
	if status != nil {
		live = map[string]api.MCPServerStatus{}
		for _, s := range status() {
			live[s.Name] = s
		}
	}
	for _, s := range cfg.MCP.Servers {
		path := "mcp.servers." + s.Name
		if s.TransportOrDefault() == config.MCPStdio {
			if _, err := exec.LookPath(s.Command); err != nil {
				r.fail(CategoryMCP, "mcp-command", path, r.t("doctor-mcp-command-missing", "server", s.Name, "command", fmt.Sprintf("%q", s.Command)),
					r.t("doctor-mcp-command-missing-fix", "property", path+".command"))
				continue
			}
			if !filepath.IsAbs(s.Command) {
				// Found on the daemon's PATH: fine, but a service's PATH may differ from this shell's.
				r.ok(CategoryMCP, "mcp-command", r.t("doctor-mcp-command-on-path", "server", s.Name, "command", s.Command))
			}
		}
		if !granted[s.Name] {
			r.warn(CategoryMCP, "mcp-ungranted", path, r.t("doctor-mcp-ungranted", "server", s.Name),
				r.t("doctor-mcp-ungranted-fix", "server", fmt.Sprintf("%q", s.Name)))
		}
		if st, ok := live[s.Name]; ok {
			switch st.State {
			case "ready":
				r.ok(CategoryMCP, "mcp-state", r.t("doctor-mcp-ready", "server", s.Name, "count", st.Tools))
			case "backoff":
				r.warn(CategoryMCP, "mcp-state", path, r.t("doctor-mcp-backoff", "server", s.Name, "count", st.Restarts, "error", st.LastError),
					r.t("doctor-mcp-backoff-fix", "property", path))
			}
		}
	}
}

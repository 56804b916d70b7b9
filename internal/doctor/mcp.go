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
		r.ok(CategoryMCP, "mcp-disabled", fmt.Sprintf("mcp.enabled = false: none of the %d MCP servers is started", len(cfg.MCP.Servers)))
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
				r.fail(CategoryMCP, "mcp-command", path, fmt.Sprintf("MCP server %s: command %q not found", s.Name, s.Command),
					"install it, or set an absolute path in "+path+".command")
				continue
			}
			if !filepath.IsAbs(s.Command) {
				// Found on the daemon's PATH: fine, but a service's PATH may differ from this shell's.
				r.ok(CategoryMCP, "mcp-command", fmt.Sprintf("MCP server %s: %s is on PATH", s.Name, s.Command))
			}
		}
		if !granted[s.Name] {
			r.warn(CategoryMCP, "mcp-ungranted", path, fmt.Sprintf("MCP server %s is granted to no agent (deny by default): its tools reach no one", s.Name),
				fmt.Sprintf("add [mcp_bundles.<name>] servers = [%q] and list the bundle in agents.<alias>.mcp_bundles", s.Name))
		}
		if st, ok := live[s.Name]; ok {
			switch st.State {
			case "ready":
				r.ok(CategoryMCP, "mcp-state", fmt.Sprintf("MCP server %s is ready with %d tools", s.Name, st.Tools))
			case "backoff":
				r.warn(CategoryMCP, "mcp-state", path, fmt.Sprintf("MCP server %s is down (restarted %d times): %s", s.Name, st.Restarts, st.LastError),
					"check the command, its arguments and env in "+path+", or raise startup_timeout_secs for a slow server")
			}
		}
	}
}

package acp

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/zeroclaw-go/zeroclaw/internal/config"
	"github.com/zeroclaw-go/zeroclaw/internal/router"
)

// maxEditorServers bounds the MCP servers one session/new may name.
const maxEditorServers = 16

// acpMCPServer is one entry of ACP's session/new mcpServers: stdio {name, command, args, env:[{name,value}]},
// or {type:"http"|"sse", name, url, headers}. Only stdio is accepted: initialize advertises
// mcpCapabilities {http:false, sse:false}, as upstream does.
type acpMCPServer struct {
	Type    string     `json:"type"`
	Name    string     `json:"name"`
	Command string     `json:"command"`
	Args    []string   `json:"args"`
	Env     []envEntry `json:"env"`
	URL     string     `json:"url"`
}

type envEntry struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// editorServers decodes mcpServers (absent, null or [] mean none) into server configs, or an invalid-params
// error naming the entry and what is wrong with it.
func editorServers(raw json.RawMessage) ([]config.MCPServerConfig, error) {
	if t := strings.TrimSpace(string(raw)); t == "" || t == "null" || t == "[]" {
		return nil, nil
	}
	var list []acpMCPServer
	if err := json.Unmarshal(raw, &list); err != nil {
		return nil, router.InvalidParams("invalid params: mcpServers must be an array of MCP server objects: " + err.Error())
	}
	if len(list) > maxEditorServers {
		return nil, router.InvalidParams(fmt.Sprintf("invalid params: mcpServers names %d servers; at most %d", len(list), maxEditorServers))
	}
	out := make([]config.MCPServerConfig, 0, len(list))
	seen := map[string]bool{}
	for i, s := range list {
		name := strings.TrimSpace(s.Name)
		switch {
		case s.Type != "" && s.Type != "stdio":
			return nil, router.InvalidParams(fmt.Sprintf("invalid params: mcpServers[%d]: transport %q is not supported (mcpCapabilities: http and sse are false); use a stdio server", i, s.Type))
		case name == "" || strings.Contains(name, "__") || len(name) > 64:
			return nil, router.InvalidParams(fmt.Sprintf("invalid params: mcpServers[%d].name must be 1 to 64 characters without \"__\"", i))
		case seen[strings.ToLower(name)]:
			return nil, router.InvalidParams(fmt.Sprintf("invalid params: mcpServers contains duplicate name: %s", name))
		case strings.TrimSpace(s.Command) == "":
			return nil, router.InvalidParams(fmt.Sprintf("invalid params: mcpServers[%d].command is required", i))
		}
		seen[strings.ToLower(name)] = true
		env := map[string]string{}
		for _, e := range s.Env {
			if e.Name == "" || strings.ContainsAny(e.Name, "=\x00") {
				return nil, router.InvalidParams(fmt.Sprintf("invalid params: mcpServers[%d].env has an invalid variable name", i))
			}
			env[e.Name] = e.Value
		}
		out = append(out, config.MCPServerConfig{Name: name, Command: s.Command, Args: s.Args, Env: env})
	}
	return out, nil
}

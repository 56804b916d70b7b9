package acp

import (
	"encoding/json"
	"fmt"
	"net/url"
	"strings"

	"github.com/zeroclaw-go/zeroclaw/internal/config"
	"github.com/zeroclaw-go/zeroclaw/internal/router"
)

// Bounds on the MCP servers one session/new may name.
const (
	maxEditorServers = 16
	maxEditorHeaders = 32
	maxEditorHeader  = 8 << 10 // one header's name and value
	maxEditorURL     = 2048
)

// acpMCPServer is one entry of ACP's session/new mcpServers: stdio {name, command, args, env:[{name,value}]},
// or {type:"http"|"sse", name, url, headers:[{name,value}]}. All three are accepted (initialize advertises
// mcpCapabilities {http:true, sse:true} to the owner; upstream reads none of them), for the owner only (the session layer).
type acpMCPServer struct {
	Type    string     `json:"type"`
	Name    string     `json:"name"`
	Command string     `json:"command"`
	Args    []string   `json:"args"`
	Env     []envEntry `json:"env"`
	URL     string     `json:"url"`
	Headers []envEntry `json:"headers"`
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
		typ := strings.ToLower(strings.TrimSpace(s.Type))
		switch {
		case typ != "" && typ != config.MCPStdio && typ != config.MCPHTTP && typ != config.MCPSSE:
			return nil, router.InvalidParams(fmt.Sprintf("invalid params: mcpServers[%d]: unknown type %q (stdio, http or sse)", i, s.Type))
		case name == "" || strings.Contains(name, "__") || len(name) > 64:
			return nil, router.InvalidParams(fmt.Sprintf("invalid params: mcpServers[%d].name must be 1 to 64 characters without \"__\"", i))
		case seen[strings.ToLower(name)]:
			return nil, router.InvalidParams(fmt.Sprintf("invalid params: mcpServers contains duplicate name: %s", name))
		}
		seen[strings.ToLower(name)] = true
		if typ == config.MCPHTTP || typ == config.MCPSSE {
			srv, err := remoteServer(i, name, typ, s)
			if err != nil {
				return nil, err
			}
			out = append(out, srv)
			continue
		}
		if strings.TrimSpace(s.Command) == "" {
			return nil, router.InvalidParams(fmt.Sprintf("invalid params: mcpServers[%d].command is required", i))
		}
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

// remoteServer is an http or sse entry: an http(s) URL and headers that are valid HTTP header fields, bounded.
func remoteServer(i int, name, typ string, s acpMCPServer) (config.MCPServerConfig, error) {
	u, err := url.Parse(s.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || len(s.URL) > maxEditorURL {
		return config.MCPServerConfig{}, router.InvalidParams(fmt.Sprintf("invalid params: mcpServers[%d].url must be an http or https URL of at most %d bytes", i, maxEditorURL))
	}
	if len(s.Headers) > maxEditorHeaders {
		return config.MCPServerConfig{}, router.InvalidParams(fmt.Sprintf("invalid params: mcpServers[%d].headers: at most %d", i, maxEditorHeaders))
	}
	headers := map[string]string{}
	for _, h := range s.Headers {
		if !headerName(h.Name) || strings.ContainsAny(h.Value, "\r\n\x00") || len(h.Name)+len(h.Value) > maxEditorHeader {
			return config.MCPServerConfig{}, router.InvalidParams(fmt.Sprintf("invalid params: mcpServers[%d].headers has an invalid or oversized header", i))
		}
		headers[h.Name] = h.Value
	}
	return config.MCPServerConfig{Name: name, Transport: typ, URL: s.URL, Headers: headers}, nil
}

// headerName reports whether n is an HTTP header field name (an RFC 9110 token).
func headerName(n string) bool {
	if n == "" {
		return false
	}
	for _, c := range []byte(n) {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0) {
			return false
		}
	}
	return true
}

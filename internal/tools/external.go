package tools

import (
	"context"
	"slices"
	"strings"
)

// External is a set of tools implemented outside this package: the tools of the MCP servers a turn's agent is
// granted. The session layer puts the same value in Env.External and Policy.External when it builds a turn,
// so every surface (native and ACP sessions, /ws/chat, cron, unattended turns) offers and decides them alike.
type External interface {
	// Specs returns the tools offered now, in a stable order. It may change between calls (a server that
	// arrived, a tool list that changed), so callers read it once per model request.
	Specs() []Spec
	// Risk returns the risk class of the named tool; ok is false when it is not one of the set's tools.
	Risk(name string) (r Risk, ok bool)
	// Call runs the tool. Its output is untrusted text, already scrubbed of secrets and bounded to about
	// outputCap bytes. It never panics and reports every failure as an IsError Result.
	Call(ctx context.Context, call Call, outputCap int) Result
}

// externalName reports whether name is an MCP-style prefixed name (<server>__<tool>), which a non-empty
// allowed_tools list admits as upstream does.
func externalName(name string) bool { return strings.Contains(name, "__") }

func (p Policy) externalRisk(name string) (Risk, bool) {
	if p.External == nil {
		return "", false
	}
	return p.External.Risk(name)
}

// offersExternal reports whether an external tool is offered under p: excluded_tools subtract, and a
// non-empty allowed_tools admits <server>__<tool> names (upstream's MCP exception) and those it lists.
func (p Policy) offersExternal(name string) bool {
	if slices.Contains(p.ExcludedTools, name) {
		return false
	}
	return len(p.AllowedTools) == 0 || externalName(name) || slices.Contains(p.AllowedTools, name)
}

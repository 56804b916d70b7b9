package rpctest

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/zeroclaw-go/zeroclaw/internal/api"
)

// memUserConfig is agent "a" (full, so no memory call asks) with this process's uid as user alice holding grants.
func memUserConfig(grants string) string {
	return agentConfig(echoTOML, "echo.default", "full", fmt.Sprintf(`
[permission_profiles.chat]
grants = %s

[users.alice]
uid = %d
permission_profiles = ["chat"]
`, grants, os.Getuid()))
}

// Issue 20 item 6: the memory tools act with the grants and the scope of the principal the turn runs for. The
// owner's auto-saved prompt and stored fact are in agent a's memory; alice, without memory:read, gets a tool error
// naming the grant from memory_export and memory_recall (and her turn's recall injects nothing of the owner's);
// with memory:read and memory:write she sees her own memories and none of the owner's.
func TestMemoryToolsActWithTheCallersGrants(t *testing.T) {
	t.Parallel()
	d := Start(t, WithConfig(agentConfig(echoTOML, "echo.default", "full", "")))
	owner := dialRC(t, d, "")
	own := owner.newSession(api.SessionNewParams{AgentAlias: "a"})
	if tr := owner.prompt(own.SessionID, "owner-secret-plan for the merger", hooks{}); tr.err != nil {
		t.Fatal(tr.err)
	}
	if ev := sandboxTool(t, owner, own.SessionID, "memory_store", map[string]any{"key": "owner_fact", "content": "owner-core-fact"}); ev.IsError {
		t.Fatalf("owner memory_store: %s", toolOut(ev))
	}
	// The owner's model sees both: the control for what follows.
	if ev := sandboxTool(t, owner, own.SessionID, "memory_export", map[string]any{}); ev.IsError ||
		!strings.Contains(toolOut(ev), "owner-secret-plan") || !strings.Contains(toolOut(ev), "owner-core-fact") {
		t.Fatalf("owner memory_export: %s", toolOut(ev))
	}
	if err := d.Stop(); err != nil {
		t.Fatal(err)
	}

	d = StartOn(t, d.ConfigDir, WithConfig(memUserConfig(chatGrants)))
	alice := dialRC(t, d, "")
	s := alice.newSession(api.SessionNewParams{AgentAlias: "a"})
	for _, c := range []struct {
		tool string
		args map[string]any
	}{
		{"memory_export", map[string]any{}},
		{"memory_recall", map[string]any{"query": "owner"}},
		{"memory_recall", map[string]any{}},
	} {
		ev := sandboxTool(t, alice, s.SessionID, c.tool, c.args)
		if out := toolOut(ev); !ev.IsError || !strings.Contains(out, "lacks the memory:read grant") || strings.Contains(out, "owner-") {
			t.Fatalf("alice without memory:read: %s %v = %q (error %v), want refused naming memory:read", c.tool, c.args, out, ev.IsError)
		}
	}
	if ev := sandboxTool(t, alice, s.SessionID, "memory_store", map[string]any{"key": "k", "content": "v"}); !ev.IsError || !strings.Contains(toolOut(ev), "memory:write") {
		t.Fatalf("alice without memory:write: memory_store = %q", toolOut(ev))
	}
	if ev := sandboxTool(t, alice, s.SessionID, "memory_forget", map[string]any{"key": "owner_fact"}); !ev.IsError {
		t.Fatalf("alice without memory:write: memory_forget = %q", toolOut(ev))
	}
	if err := d.Stop(); err != nil {
		t.Fatal(err)
	}

	d = StartOn(t, d.ConfigDir, WithConfig(memUserConfig(`["sessions:create", "sessions:execute", "sessions:read", "memory:read", "memory:write"]`)))
	alice = dialRC(t, d, "")
	s = alice.newSession(api.SessionNewParams{AgentAlias: "a"})
	if tr := alice.prompt(s.SessionID, "alice-own-note about owner merger", hooks{}); tr.err != nil {
		t.Fatal(tr.err)
	}
	if ev := sandboxTool(t, alice, s.SessionID, "memory_store", map[string]any{"key": "alice_fact", "content": "alice-core-fact"}); ev.IsError {
		t.Fatalf("alice memory_store: %s", toolOut(ev))
	}
	ev := sandboxTool(t, alice, s.SessionID, "memory_export", map[string]any{})
	if out := toolOut(ev); ev.IsError || !strings.Contains(out, "alice-own-note") || !strings.Contains(out, "alice-core-fact") || strings.Contains(out, "owner-") {
		t.Fatalf("alice memory_export = %q, want her memories and none of the owner's", out)
	}
	ev = sandboxTool(t, alice, s.SessionID, "memory_recall", map[string]any{"query": "merger"})
	if out := toolOut(ev); ev.IsError || !strings.Contains(out, "alice-own-note") || strings.Contains(out, "owner-") {
		t.Fatalf("alice memory_recall = %q, want her note only", out)
	}
	if ev := sandboxTool(t, alice, s.SessionID, "memory_forget", map[string]any{"key": "owner_fact"}); ev.IsError || !strings.Contains(toolOut(ev), "No memory found") {
		t.Fatalf("alice memory_forget of the owner's key = %q, want not found", toolOut(ev))
	}
	if ev := sandboxTool(t, alice, s.SessionID, "memory_purge", map[string]any{"namespace": "default"}); !ev.IsError {
		t.Fatalf("alice memory_purge of a namespace = %q, want refused", toolOut(ev))
	}
	// The owner's fact survived alice's attempts.
	if err := d.Stop(); err != nil {
		t.Fatal(err)
	}
	d = StartOn(t, d.ConfigDir, WithConfig(agentConfig(echoTOML, "echo.default", "full", "")))
	owner = dialRC(t, d, "")
	os2 := owner.newSession(api.SessionNewParams{AgentAlias: "a"})
	if ev := sandboxTool(t, owner, os2.SessionID, "memory_export", map[string]any{}); !strings.Contains(toolOut(ev), "owner-core-fact") {
		t.Fatalf("owner's fact gone: %s", toolOut(ev))
	}
}

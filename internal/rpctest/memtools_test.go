package rpctest

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/zeroclaw-go/zeroclaw/internal/api"
)

// memUser is agent "a" (echo, full) with this process's uid as user alice holding grants.
func memUser(grants string) Option {
	return WithConfig(agentConfig(echoTOML, "echo.default", "full", fmt.Sprintf(`
[permission_profiles.chat]
grants = %s

[users.alice]
uid = %d
permission_profiles = ["chat"]
`, grants, os.Getuid())))
}

// toolCall runs `/tool name args` in session sid and returns the tool_result.
func toolCall(t *testing.T, c *rc, sid, name, args string) api.SessionUpdate {
	t.Helper()
	var res api.SessionUpdate
	tr := c.prompt(sid, "/tool "+name+" "+args, hooks{onUpdate: func(u api.SessionUpdate) {
		if u.Type == api.UpdateToolResult {
			res = u
		}
	}})
	if tr.err != nil {
		t.Fatalf("%s: %v", name, tr.err)
	}
	if res.Type == "" {
		t.Fatalf("%s: no tool_result", name)
	}
	return res
}

// injected runs prompt in sid and returns what the echo model answered: the prompt as the model got it, with
// the [Memory context] the turn's recall prepended.
func injected(t *testing.T, c *rc, sid, prompt string) string {
	t.Helper()
	tr := c.prompt(sid, prompt, hooks{})
	if tr.err != nil {
		t.Fatalf("prompt: %v", tr.err)
	}
	b, _ := json.Marshal(tr.events)
	return string(b)
}

// Issue 20 item 6: the memory tools of a turn act with the grants and scope of the principal it runs for. The
// owner stores a memory and its prompt is auto-saved; alice (a roster user) without memory:read gets a tool
// error naming the grant from every memory tool and nothing of the owner's; without memory:write her
// memory_store is refused; with both grants she sees her own memories only.
func TestMemoryToolsActWithCallersGrants(t *testing.T) {
	t.Parallel()
	d := Start(t, WithConfig(agentConfig(echoTOML, "echo.default", "full", "")))
	o := dialRC(t, d, "")
	var st api.MemoryStoreResult
	o.mustCall(api.MethodMemoryStore, api.MemoryStoreParams{Agent: "a", Key: "owner_plan", Content: "zebra owner secret plan"}, &st)
	so := o.newSession(api.SessionNewParams{AgentAlias: "a"})
	if tr := o.prompt(so.SessionID, "zebra owner prompt sentinel", hooks{}); tr.err != nil {
		t.Fatalf("owner prompt: %v", tr.err)
	}
	if res := toolCall(t, o, so.SessionID, "memory_export", "{}"); res.IsError || !strings.Contains(toolOut(res), "zebra owner secret plan") {
		t.Fatalf("the owner's memory_export = %q, want its memory", toolOut(res))
	}
	if err := d.Stop(); err != nil {
		t.Fatal(err)
	}

	// alice's own auto-saved prompts name "zebra" and "owner_plan"; the owner's memory and prompt say these.
	leaks := func(out string) bool {
		return strings.Contains(out, "secret plan") || strings.Contains(out, "prompt sentinel")
	}

	d = StartOn(t, d.ConfigDir, memUser(chatGrants))
	a := dialRC(t, d, "")
	sa := a.newSession(api.SessionNewParams{AgentAlias: "a"})
	for _, call := range [][2]string{
		{"memory_export", "{}"},
		{"memory_recall", `{"query":"zebra"}`},
		{"memory_forget", `{"key":"owner_plan"}`},
		{"memory_store", `{"key":"k","content":"v"}`},
	} {
		res := toolCall(t, a, sa.SessionID, call[0], call[1])
		want := "memory:read"
		if call[0] == "memory_store" || call[0] == "memory_forget" {
			want = "memory:write"
		}
		if out := toolOut(res); !res.IsError || !strings.Contains(out, "lacks the "+want+" grant") || leaks(out) {
			t.Fatalf("alice without memory grants: %s = %q (error %v), want a refusal naming %s", call[0], out, res.IsError, want)
		}
	}
	if out := injected(t, a, sa.SessionID, "zebra plan"); leaks(out) {
		t.Fatalf("alice without memory:read was given the owner's memory in her turn's context: %s", out)
	}
	if err := d.Stop(); err != nil {
		t.Fatal(err)
	}

	d = StartOn(t, d.ConfigDir, memUser(`["sessions:create", "sessions:execute", "sessions:read", "memory:read", "memory:write"]`))
	a = dialRC(t, d, "")
	sa = a.newSession(api.SessionNewParams{AgentAlias: "a"})
	if res := toolCall(t, a, sa.SessionID, "memory_store", `{"key":"alice_note","content":"alice likes tea"}`); res.IsError {
		t.Fatalf("alice's memory_store: %q", toolOut(res))
	}
	for _, call := range [][2]string{{"memory_export", "{}"}} {
		res := toolCall(t, a, sa.SessionID, call[0], call[1])
		if out := toolOut(res); res.IsError || leaks(out) || !strings.Contains(out, "alice likes tea") {
			t.Fatalf("alice with memory:read: %s = %q, want her memory and none of the owner's", call[0], out)
		}
	}
	if out := injected(t, a, sa.SessionID, "zebra plan tea"); leaks(out) || !strings.Contains(out, "alice likes tea") {
		t.Fatalf("alice's turn context = %s, want her memory and none of the owner's", out)
	}
	if res := toolCall(t, a, sa.SessionID, "memory_forget", `{"key":"owner_plan"}`); res.IsError || !strings.Contains(toolOut(res), "No memory found") {
		t.Fatalf("alice's memory_forget of the owner's key = %q", toolOut(res))
	}
	if res := toolCall(t, a, sa.SessionID, "memory_purge", `{"namespace":"default"}`); !res.IsError {
		t.Fatalf("alice's memory_purge of a namespace = %q, want refused", toolOut(res))
	}
	if err := d.Stop(); err != nil {
		t.Fatal(err)
	}

	d = StartOn(t, d.ConfigDir, WithConfig(agentConfig(echoTOML, "echo.default", "full", "")))
	o = dialRC(t, d, "")
	var got api.MemoryGetResult
	o.mustCall(api.MethodMemoryGet, api.MemoryGetParams{Agent: "a", Key: "owner_plan"}, &got)
	if got.Entry.Content != "zebra owner secret plan" {
		t.Fatalf("the owner's memory after alice's turns: %+v", got.Entry)
	}
}

// A restricted device's /webhook turn runs its memory tools with the device's grants: without memory:read its
// memory_export is refused and shows nothing of the owner's; with memory:read it works, in the device's scope.
func TestWebhookMemoryToolsActWithDeviceGrants(t *testing.T) {
	t.Parallel()
	d, g, code := StartGateway(t, GatewayProfilesConfig+`
[permission_profiles.reader]
grants = ["sessions:execute", "sessions:create", "sessions:read", "memory:read"]
`)
	_ = PairOnce(t, g, code) // the owner's equal
	c := dialRC(t, d, "")
	var st api.MemoryStoreResult
	c.mustCall(api.MethodMemoryStore, api.MemoryStoreParams{Key: "owner_plan", Content: "zebra owner secret plan"}, &st)
	chatter := PairWithProfile(t, d, g, "chatter")
	reader := PairWithProfile(t, d, g, "reader")
	export := func(auth, sid string) string {
		r := g.Do("POST", "/webhook", map[string]any{"message": "/tool memory_export {}"}, auth, "X-Session-Id: "+sid).Want(t, 200)
		out, _ := r.Body["response"].(string)
		return out
	}
	if out := export(chatter, "chatter-1"); strings.Contains(out, "secret plan") || !strings.Contains(out, "lacks the memory:read grant") {
		t.Fatalf("chatter's memory_export: %q", out)
	}
	if out := export(reader, "reader-1"); strings.Contains(out, "secret plan") || strings.Contains(out, "lacks") || !strings.Contains(out, "memory_export") {
		t.Fatalf("reader's memory_export: %q, want its own auto-saved prompt only", out)
	}
}

package rpctest

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zeroclaw-go/zeroclaw/internal/api"
	"github.com/zeroclaw-go/zeroclaw/internal/workspace"
)

// systemMessage returns the content of the system message of a recorded chat request ("" when none).
func systemMessage(t *testing.T, body []byte) string {
	t.Helper()
	var req struct {
		Messages []struct {
			Role    string `json:"role"`
			Content string `json:"content"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		t.Fatalf("request body: %v", err)
	}
	for _, m := range req.Messages {
		if m.Role == "system" {
			return m.Content
		}
	}
	return ""
}

// clearIdentityFiles removes the identity files session/new seeded into workspace ws.
func clearIdentityFiles(t *testing.T, ws string) {
	t.Helper()
	for _, name := range workspace.EditableFiles {
		if err := os.Remove(filepath.Join(ws, name)); err != nil {
			t.Fatal(err)
		}
	}
}

// lastSystem runs one turn on sid and returns the system message the provider received for it.
func lastSystem(t *testing.T, c *rc, model *llm, sid, prompt string) string {
	t.Helper()
	if tr := c.prompt(sid, prompt, hooks{}); tr.err != nil || tr.result.Outcome != api.OutcomeCompleted {
		t.Fatalf("turn %q: %+v %v", prompt, tr.result, tr.err)
	}
	_, bodies := model.requests()
	return systemMessage(t, bodies[len(bodies)-1])
}

// inOrder fails unless every part occurs in s, each after the previous one.
func inOrder(t *testing.T, s string, parts ...string) {
	t.Helper()
	at := 0
	for _, p := range parts {
		i := strings.Index(s[at:], p)
		if i < 0 {
			t.Fatalf("system prompt lacks %q after offset %d:\n%s", p, at, s)
		}
		at += i + len(p)
	}
}

// The workspace identity files are seeded at session/new without touching what the user wrote, reach the
// provider's system message in upstream's order, and are read again on each turn: a SOUL.md changed through
// personality/put, or by hand on disk, changes the very next request.
func TestPersonalityShapesTheSystemPrompt(t *testing.T) {
	t.Parallel()
	model := newLLM(t, stream(ctSSE, openAIText(5, 2, "Aye.")))
	cfg := agentConfig(fakeProviderTOML("openai", model.URL), "openai.fake", "supervised", "")
	d := Start(t, WithConfig(cfg))
	ws := filepath.Join(d.ConfigDir, "agents", "a", "workspace")
	if err := os.MkdirAll(ws, 0o700); err != nil {
		t.Fatal(err)
	}
	const mine = "# My user file\nAda writes Go.\n"
	if err := os.WriteFile(filepath.Join(ws, "USER.md"), []byte(mine), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ws, "IDENTITY.md"), []byte("\n   \n"), 0o600); err != nil {
		t.Fatal(err)
	}
	c := dialRC(t, d, "")
	c.mustCall(api.MethodConfigSet, map[string]any{"prop": "agents.a.system_prompt", "value": "Answer in English."}, nil)
	sid := c.newSession(api.SessionNewParams{AgentAlias: "a"}).SessionID

	if b, _ := os.ReadFile(filepath.Join(ws, "USER.md")); string(b) != mine {
		t.Fatalf("seeding overwrote USER.md: %q", b)
	}
	if b, _ := os.ReadFile(filepath.Join(ws, "IDENTITY.md")); !strings.Contains(string(b), "**Name:** a") {
		t.Fatalf("blank IDENTITY.md was not seeded: %q", b)
	}
	var list api.PersonalityListResult
	c.mustCall(api.MethodPersonalityList, map[string]any{"agent": "a"}, &list)
	if list.MaxChars != 20000 || len(list.Files) != 7 {
		t.Fatalf("personality/list = %+v", list)
	}
	for _, f := range list.Files {
		if !f.Exists || f.Size == 0 || f.MtimeMS == nil {
			t.Fatalf("personality/list: %s not seeded: %+v", f.Filename, f)
		}
	}

	sys := lastSystem(t, c, model, sid, "Who are you?")
	inOrder(t, sys, "## CRITICAL CONTEXT: CURRENT DATE", "## Project Context", "### SOUL.md", "You are **a**",
		"### IDENTITY.md", "### USER.md", "Ada writes Go.", "### AGENTS.md", "### TOOLS.md", "### HEARTBEAT.md",
		"### MEMORY.md", "Answer in English.", "## CRITICAL: Tool Honesty", "## Safety", "## Workspace", ws,
		"## Runtime", "Model: m")

	var put api.PersonalityPutResult
	soul := "You are Captain Nemo of the Nautilus."
	c.mustCall(api.MethodPersonalityPut, map[string]any{"agent": "a", "filename": "SOUL.md", "content": soul}, &put)
	if put.BytesWritten != len(soul) || put.MtimeMS == nil {
		t.Fatalf("personality/put = %+v", put)
	}
	sys = lastSystem(t, c, model, sid, "Who are you now?")
	if !strings.Contains(sys, "### SOUL.md\n\n"+soul+"\n\n### IDENTITY.md") || strings.Contains(sys, "You are **a**") {
		t.Fatalf("the put SOUL.md is not the next turn's:\n%s", sys)
	}

	if err := os.WriteFile(filepath.Join(ws, "SOUL.md"), []byte("You are Ishmael."), 0o600); err != nil {
		t.Fatal(err)
	}
	if sys = lastSystem(t, c, model, sid, "And now?"); !strings.Contains(sys, "You are Ishmael.") || strings.Contains(sys, "Nemo") {
		t.Fatalf("an edit on disk did not reach the next turn:\n%s", sys)
	}

	var got api.PersonalityGetResult
	c.mustCall(api.MethodPersonalityGet, map[string]any{"agent": "a", "filename": "SOUL.md"}, &got)
	if !got.Exists || got.Content == nil || *got.Content != "You are Ishmael." || got.Truncated {
		t.Fatalf("personality/get = %+v", got)
	}
}

// personality/put refuses content over the 20,000-character cap and file names outside the editable set; the
// file on disk is left as it was.
func TestPersonalityPutRefusals(t *testing.T) {
	t.Parallel()
	d := Start(t)
	c := dialRC(t, d, "")
	c.mustCall(api.MethodPersonalityPut, map[string]any{"agent": "default", "filename": "SOUL.md", "content": "kept"}, nil)

	_, werr := c.call(api.MethodPersonalityPut, map[string]any{"agent": "default", "filename": "SOUL.md", "content": strings.Repeat("ß", 20001)})
	wantErr(t, "over the cap", werr, -32602, "exceeds 20000 char limit")
	for _, name := range []string{"../config.toml", "BOOTSTRAP.md", "notes.md", "/etc/passwd"} {
		_, werr = c.call(api.MethodPersonalityPut, map[string]any{"agent": "default", "filename": name, "content": "x"})
		wantErr(t, "put "+name, werr, -32602, "not an editable file")
		_, werr = c.call(api.MethodPersonalityGet, map[string]any{"agent": "default", "filename": name})
		wantErr(t, "get "+name, werr, -32602, "not an editable file")
	}
	_, werr = c.call(api.MethodPersonalityPut, map[string]any{"agent": "../..", "filename": "SOUL.md", "content": "x"})
	wantErr(t, "unknown agent", werr, -32602, "unknown agent")

	var got api.PersonalityGetResult
	c.mustCall(api.MethodPersonalityGet, map[string]any{"agent": "default", "filename": "SOUL.md"}, &got)
	if got.Content == nil || *got.Content != "kept" {
		t.Fatalf("SOUL.md after refused puts: %+v", got)
	}
	if _, err := os.Stat(filepath.Join(d.ConfigDir, "config.toml")); err != nil {
		t.Fatal(err)
	}

	var tpl api.PersonalityTemplatesResult
	c.mustCall(api.MethodPersonalityTemplates, map[string]any{"agent": "default"}, &tpl)
	if tpl.Preset != "default" || len(tpl.Files) != 7 || tpl.Files[0].Filename != "SOUL.md" || !strings.Contains(tpl.Files[0].Content, "**default**") {
		t.Fatalf("personality/templates = %+v", tpl)
	}
}

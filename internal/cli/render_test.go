package cli

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/zeroclaw-go/zeroclaw/internal/api"
)

// The text view of logs shows why a turn failed (the error attribute, whole up to a bound) and short
// attributes; a nested or long one is left to --json.
func TestLogsTextShowsAttributes(t *testing.T) {
	var out bytes.Buffer
	p := &logPrinter{out: &out, seen: map[string]bool{}}
	long := strings.Repeat("x", 300)
	p.history(byteLines(
		`{"id":"1","@timestamp":"2026-01-01T00:00:00.000Z","severity_text":"WARN","event":{"category":"agent","action":"fail","outcome":"failure"},` +
			`"zeroclaw":{"agent_alias":"default"},"message":"turn failed","attributes":{"error":"provider: 401 Unauthorized","error_kind":"provider",` +
			`"n":3,"nested":{"a":1},"long":"` + long + `"}}`))
	got := out.String()
	for _, want := range []string{`turn failed agent_alias="default" error="provider: 401 Unauthorized" error_kind="provider"`,
		` n=3`, `long="` + strings.Repeat("x", maxShortAttr-1) + `…"`} {
		if !strings.Contains(got, want) {
			t.Fatalf("lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "nested") {
		t.Fatalf("a nested attribute is shown:\n%s", got)
	}
}

func byteLines(lines ...string) (out []json.RawMessage) {
	for _, l := range lines {
		out = append(out, json.RawMessage(l))
	}
	return out
}

func TestCleanMessage(t *testing.T) {
	for in, want := range map[string]string{
		`cron: invalid job: cron: invalid schedule: cron expression "x": expected 5, 6 or 7 fields, got 1`: `invalid job: invalid schedule: cron expression "x": expected 5, 6 or 7 fields, got 1`,
		"memory: not found: Memory key `k` not found":                                                      "not found: Memory key `k` not found",
		"Session busy: a turn is running":                                                                  "Session busy: a turn is running",
		"denied: cron":                                                                                     "denied: cron",
	} {
		if got := cleanMessage(in); got != want {
			t.Errorf("cleanMessage(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestSuggest(t *testing.T) {
	cands := []string{"list", "show", "delete", "risk_profile", "model_provider"}
	for in, want := range map[string]string{"lsit": "list", "shwo": "show", "risk_profle": "risk_profile", "delte": "delete",
		"nope": "", "x": "", "model": ""} {
		if got := suggest(in, cands); got != want {
			t.Errorf("suggest(%q) = %q, want %q", in, got, want)
		}
	}
	props := []string{"agents.default.risk_profile", "gateway.host", "gateway.port"}
	for in, want := range map[string]string{"agnts.default.risk_profile": "agents.default.risk_profile", "gateway.nope": "", "gateway.prot": "gateway.port"} {
		if got := suggestPath(in, props); got != want {
			t.Errorf("suggestPath(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestRenderToolTurns(t *testing.T) {
	for _, c := range []struct {
		m          api.SessionMessage
		role, text string
	}{
		{api.SessionMessage{Role: "assistant", Content: `{"zeroclaw_tool_calls":[{"id":"c1","name":"shell","arguments":{"command":"ls"}}],"text":"Let me look."}`},
			"assistant", "Let me look.\n→ shell {\"command\":\"ls\"}"},
		{api.SessionMessage{Role: "tool", Content: `{"zeroclaw_tool_result":{"tool_call_id":"c1","name":"shell","content":"a.txt","is_error":true}}`},
			"tool shell (error)", "a.txt"},
		{api.SessionMessage{Role: "user", Content: `{"zeroclaw_tool_calls": not json`}, "user", `{"zeroclaw_tool_calls": not json`},
		{api.SessionMessage{Role: "user", Content: "plain"}, "user", "plain"},
	} {
		role, text := renderMessage(c.m)
		if role != c.role || text != c.text {
			t.Errorf("renderMessage(%q) = %q, %q; want %q, %q", c.m.Content, role, text, c.role, c.text)
		}
	}
}

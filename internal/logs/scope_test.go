package logs

import "testing"

func TestScopeAllowsOnlyItsAgents(t *testing.T) {
	lines := map[string]string{
		`{"zeroclaw":{"agent_alias":"writer"}}`:   "writer",
		`{"zeroclaw":{"agent_alias":"a"}}`:        "a",
		`{"zeroclaw":{}}`:                         "",
		`{"zeroclaw":{"agent_alias":7}}`:          "",
		`{"zeroclaw":{"agent_alias":["writer"]}}`: "",
		`not json`: "",
		``:         "",
	}
	for line, agent := range lines {
		if got := AgentOfLine([]byte(line)); got != agent {
			t.Errorf("AgentOfLine(%q) = %q, want %q", line, got, agent)
		}
		if !Scope(nil).AllowsLine([]byte(line)) {
			t.Errorf("a nil scope refused %q", line)
		}
		if got := (Scope{"writer"}).AllowsLine([]byte(line)); got != (agent == "writer") {
			t.Errorf("scope [writer] on %q: %v", line, got)
		}
		if (Scope{}).AllowsLine([]byte(line)) {
			t.Errorf("an empty scope allowed %q", line)
		}
	}
}

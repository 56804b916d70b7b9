package e2e

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"
)

// The real binary: a turn leaves runtime events that `zeroclaw logs` prints (filtered, and as JSON lines of
// schema v2), and a cost line that `zeroclaw costs` tabulates by model; bad flags are refused with a hint.
func TestLogsAndCostsCLI(t *testing.T) {
	t.Parallel()
	h := home(t)
	d := start(t, env(h), "daemon")
	waitSocket(t, d, agentSock(h))
	runOK(t, env(h), "", "agent", "-m", "hello")

	out := runOK(t, env(h), "", "logs")
	if !strings.Contains(out, "system/start/success") || !strings.Contains(out, "agent/complete/success") || !strings.Contains(out, `agent_alias="default"`) {
		t.Fatalf("logs:\n%s", out)
	}
	js := runOK(t, env(h), "", "logs", "--category", "agent", "--json")
	lines := strings.Split(strings.TrimSpace(js), "\n")
	if len(lines) != 2 {
		t.Fatalf("logs --category agent --json: %d lines:\n%s", len(lines), js)
	}
	for _, l := range lines {
		var ev map[string]any
		if err := json.Unmarshal([]byte(l), &ev); err != nil || ev["schema_version"] != 2.0 || !strings.HasPrefix(l, `{"id":`) {
			t.Fatalf("line %q: %v", l, err)
		}
	}
	if out := runOK(t, env(h), "", "logs", "--severity", "error", "--since", "1h"); out != "" {
		t.Fatalf("no error events expected, got:\n%s", out)
	}
	_, errOut, code := run(t, env(h), "", "logs", "--since", "yesterday")
	if code == 0 || !strings.Contains(errOut, "neither a duration nor an RFC 3339 time") {
		t.Fatalf("bad --since: exit %d, %s", code, errOut)
	}

	costs := runOK(t, env(h), "", "costs", "--by", "model")
	if !strings.Contains(costs, "MODEL") || !strings.Contains(costs, "echo") || !strings.Contains(costs, "today: $0.0000") {
		t.Fatalf("costs --by model:\n%s", costs)
	}
	day := runOK(t, env(h), "", "costs")
	if !regexp.MustCompile(`(?m)^\s*\d{4}-\d{2}-\d{2}\s+1\s`).MatchString(day) {
		t.Fatalf("costs by day:\n%s", day)
	}
	if _, errOut, code := run(t, env(h), "", "costs", "--by", "week"); code == 0 || !strings.Contains(errOut, "want day, agent or model") {
		t.Fatalf("bad --by: exit %d, %s", code, errOut)
	}
}

package rpctest

import (
	"strings"
	"testing"
)

// Shell commands see only agents.<alias>.env and the admin client's forwarded initialize env, never the
// daemon's own environment.
func TestToolEnvironment(t *testing.T) {
	t.Setenv("ZC_DAEMON_ONLY", "leaked")
	cfg := strings.Replace(baseConfig, `risk_profile = "supervised"`, `risk_profile = "full"`, 1) +
		"\n[agents.default.env]\nGREETING = \"from-config\"\nBOTH = \"config\"\n\n[risk_profiles.full]\nlevel = \"full\"\n"
	d := Start(t, WithConfig(cfg))
	c := d.Dial(t)
	c.Send(`{"jsonrpc":"2.0","method":"initialize","params":{"protocol_version":1,"env":{"FORWARDED":"from-client","BOTH":"client"}},"id":1}`)
	c.MustRecv()
	c.Send(`{"jsonrpc":"2.0","method":"session/new","params":{"session_id":"env-1"},"id":2}`)
	c.MustRecv()
	c.Send(`{"jsonrpc":"2.0","method":"session/prompt","params":{"session_id":"env-1","prompt":"/tool shell {\"command\":\"echo G=$GREETING F=$FORWARDED B=$BOTH D=$ZC_DAEMON_ONLY\"}"},"id":3}`)
	var output string
	for {
		line := c.MustRecv()
		if strings.Contains(line, `"type":"tool_result"`) {
			output = line
		}
		if strings.Contains(line, `"id":3`) {
			break
		}
	}
	if !strings.Contains(output, "G=from-config F=from-client B=client D=") || strings.Contains(output, "leaked") {
		t.Fatalf("tool environment wrong: %s", output)
	}
	// The env map is a secret: masked over RPC.
	c.Send(`{"jsonrpc":"2.0","method":"config/get","params":{"prop":"agents.default.env.GREETING"},"id":4}`)
	if got := c.MustRecv(); !strings.Contains(got, "***MASKED***") {
		t.Fatalf("env value not masked: %s", got)
	}
}

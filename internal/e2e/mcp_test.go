package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// childrenOf returns the live (non-zombie) processes whose parent is pid.
func childrenOf(pid int) []int {
	var out []int
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		st, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		f := strings.Fields(string(st[strings.LastIndexByte(string(st), ')')+2:]))
		if len(f) > 2 && f[1] == strconv.Itoa(pid) && f[0] != "Z" {
			out = append(out, p)
		}
	}
	return out
}

// alive reports whether pid is a live (non-zombie) process.
func alive(pid int) bool {
	st, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	f := strings.Fields(string(st[strings.LastIndexByte(string(st), ')')+2:]))
	return len(f) > 0 && f[0] != "Z"
}

// The real binary: eager MCP servers start with the daemon as its children (one ignores stdin EOF, so only
// the kernel's Pdeathsig can end it), and kill -9 of the daemon leaves none of them alive. A clean stop
// reaps them too.
func TestMCPChildrenDieWithTheDaemon(t *testing.T) {
	t.Parallel()
	srvBin := filepath.Join(t.TempDir(), "mcptestserver")
	if out, err := exec.Command("go", "build", "-o", srvBin, "../mcp/mcptest/mcptestserver").CombinedOutput(); err != nil {
		t.Fatalf("building mcptestserver: %v\n%s", err, out)
	}
	cfg := fmt.Sprintf(`schema_version = 3

[providers.models.echo.default]
model = "echo"

[agents.default]
model_provider = "echo.default"
risk_profile = "supervised"
mcp_bundles = ["all"]

[risk_profiles.supervised]
level = "supervised"

[[mcp.servers]]
name = "stubborn"
command = %q
start = "eager"
env = { MCPTEST_IGNORE_EOF = "1" }

[[mcp.servers]]
name = "plain"
command = %q
start = "eager"

[mcp_bundles.all]
servers = ["stubborn", "plain"]
`, srvBin, srvBin)
	for _, stop := range []string{"kill -9", "zeroclaw stop"} {
		t.Run(stop, func(t *testing.T) {
			h, _ := homeWithConfig(t, cfg)
			d := start(t, env(h), "daemon")
			waitSocket(t, d, agentSock(h))
			var kids []int
			deadline := time.Now().Add(30 * time.Second)
			for len(kids) < 2 {
				if time.Now().After(deadline) {
					t.Fatalf("the eager MCP servers did not start: children %v\n%s", kids, d.stderr.String())
				}
				time.Sleep(20 * time.Millisecond)
				kids = childrenOf(d.cmd.Process.Pid)
			}
			if stop == "kill -9" {
				signal(t, d, syscall.SIGKILL)
			} else {
				runOK(t, env(h), "", "stop")
			}
			d.wait(t, 20*time.Second)
			deadline = time.Now().Add(10 * time.Second)
			for _, k := range kids {
				for alive(k) {
					if time.Now().After(deadline) {
						t.Fatalf("MCP server pid %d outlived the daemon (%s)", k, stop)
					}
					time.Sleep(20 * time.Millisecond)
				}
			}
		})
	}
}

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

// descendants returns every live process under pid (children, their children, ...) with its pgid.
func descendants(pid int) map[int]int {
	type info struct{ ppid, pgid int }
	procs := map[int]info{}
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
		if len(f) > 2 && f[0] != "Z" {
			pp, _ := strconv.Atoi(f[1])
			pg, _ := strconv.Atoi(f[2])
			procs[p] = info{pp, pg}
		}
	}
	out := map[int]int{}
	for grew := true; grew; {
		grew = false
		for p, in := range procs {
			if _, seen := out[p]; !seen && (in.ppid == pid || func() bool { _, ok := out[in.ppid]; return ok }()) {
				out[p] = in.pgid
				grew = true
			}
		}
	}
	return out
}

// livePGIDs returns the live processes in any of pgids.
func livePGIDs(pgids map[int]bool) []int {
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
		if len(f) > 2 && f[0] != "Z" {
			if pg, _ := strconv.Atoi(f[2]); pgids[pg] {
				out = append(out, p)
			}
		}
	}
	return out
}

// The real binary with a real npx server (npx, a shell, then node: grandchildren of the daemon's child) and a
// server whose grandchild escaped into a session of its own: after kill -9 of the daemon, the keeper each
// server runs under takes every descendant with it: no process of any of their groups survives, nor the
// escapee (which a group kill cannot reach).
func TestMCPKill9LeavesNoGrandchild(t *testing.T) {
	t.Parallel()
	root, err := filepath.Abs("../../tests/mcp-servers")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "node_modules", ".bin", "mcp-server-everything")); err != nil {
		t.Fatalf("%v: run `npm ci --prefix tests/mcp-servers` (.ci/run does)", err)
	}
	srvBin := filepath.Join(t.TempDir(), "mcptestserver")
	if out, err := exec.Command("go", "build", "-o", srvBin, "../mcp/mcptest/mcptestserver").CombinedOutput(); err != nil {
		t.Fatalf("building mcptestserver: %v\n%s", err, out)
	}
	escape := filepath.Join(t.TempDir(), "escaped.pid")
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
name = "everything"
command = "npx"
args = ["--prefix", %q, "--offline", "--no", "mcp-server-everything", "stdio"]
start = "eager"
startup_timeout_secs = 60

[[mcp.servers]]
name = "escaper"
command = %q
start = "eager"
env = { MCPTEST_IGNORE_EOF = "1", MCPTEST_GRANDCHILD = "1", MCPTEST_ESCAPE_FILE = %q }

[mcp_bundles.all]
servers = ["everything", "escaper"]
`, root, srvBin, escape)
	h, _ := homeWithConfig(t, cfg)
	d := start(t, env(h), "daemon")
	waitSocket(t, d, agentSock(h))
	var tree map[int]int
	var esc int
	t.Cleanup(func() { // whatever survives a failure is not left on the machine
		for p := range tree {
			_ = syscall.Kill(p, syscall.SIGKILL)
		}
		if esc > 0 {
			_ = syscall.Kill(esc, syscall.SIGKILL)
		}
	})
	deadline := time.Now().Add(60 * time.Second)
	for {
		tree = descendants(d.cmd.Process.Pid)
		node := false
		for p := range tree {
			if b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", p)); strings.Contains(string(b), "server-everything") && strings.HasPrefix(string(b), "node") {
				node = true
			}
		}
		b, _ := os.ReadFile(escape)
		esc, _ = strconv.Atoi(strings.TrimSpace(string(b)))
		if node && esc > 0 && len(tree) >= 6 { // 2 keepers, npx, node, mcptestserver, its grandchild
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the MCP servers did not start: tree %v, escapee %d\n%s", tree, esc, d.stderr.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	tree = descendants(d.cmd.Process.Pid) // the whole tree once everything is up
	if _, under := tree[esc]; !under {
		t.Fatalf("the escapee %d is not under the daemon (%v): it should be the keeper's adoptee", esc, tree)
	}
	pgids := map[int]bool{}
	for _, pg := range tree {
		pgids[pg] = true
	}
	if len(pgids) < 4 { // each keeper's group and each server's group, the escapee's session
		t.Fatalf("process groups %v: want the keepers' and the servers' own", pgids)
	}
	signal(t, d, syscall.SIGKILL)
	d.wait(t, 20*time.Second)
	deadline = time.Now().Add(15 * time.Second)
	for {
		var left []int
		for p := range tree {
			if alive(p) {
				left = append(left, p)
			}
		}
		left = append(left, livePGIDs(pgids)...)
		if len(left) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after kill -9 of the daemon, still alive: %v (tree %v)", left, tree)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

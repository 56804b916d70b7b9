//go:build linux

package mcp

import (
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/zeroclaw-go/zeroclaw/internal/config"
	"github.com/zeroclaw-go/zeroclaw/internal/mcp/mcptest"
)

// keptServer is a server that ignores EOF, leaves a grandchild in its group and one that escaped into a
// session of its own (as a daemonising server does), under this test binary as keeper.
func keptServer(t *testing.T, escape string) (*Manager, config.MCPServerConfig) {
	shim := SelfShim()
	if shim == "" {
		t.Fatal("the test binary is no keeper: TestMain must call RunShimIfAsked")
	}
	cfg := testServer("k", map[string]string{mcptest.EnvIgnoreEOF: "1", mcptest.EnvGrandchild: "1", mcptest.EnvEscapeFile: escape})
	m := New(Options{Environ: os.Environ(), Shim: shim, BackoffMin: 20 * time.Millisecond, BackoffMax: 200 * time.Millisecond})
	t.Cleanup(m.Close)
	return m, cfg
}

// The fixture's escapee is out of reach of a group kill: without the keeper it survives Close (which is why
// the keeper exists). Killed by the test afterwards.
func TestEscapedGrandchildSurvivesWithoutKeeper(t *testing.T) {
	escape := filepath.Join(t.TempDir(), "escaped.pid")
	m := newManager(t, testServer("d", map[string]string{mcptest.EnvEscapeFile: escape}))
	if st := m.ForServers(ctxT(t), []string{"d"}, ""); st == nil || len(st.Specs()) == 0 {
		t.Fatalf("not connected: %+v", m.Status())
	}
	esc := readPID(t, escape)
	t.Cleanup(func() { _ = syscall.Kill(esc, syscall.SIGKILL) })
	m.Close()
	time.Sleep(100 * time.Millisecond)
	if !live(esc) {
		t.Fatal("the escaped grandchild died with a plain group kill: the fixture does not escape")
	}
}

// Under the keeper, every descendant of a stdio server goes: on Close (EOF ignored, so the kill path), and when
// the keeper gets the SIGTERM the kernel sends it when the daemon dies (Pdeathsig, even after kill -9): the
// server, the grandchild in its group and the one that escaped its group, with no zombie left behind.
func TestKeeperTakesEveryDescendant(t *testing.T) {
	for _, how := range []string{"close", "daemon death"} {
		t.Run(how, func(t *testing.T) {
			escape := filepath.Join(t.TempDir(), "escaped.pid")
			m, cfg := keptServer(t, escape)
			m.Reconcile(mcpConfigOf(cfg))
			st := m.ForServers(ctxT(t), []string{"k"}, "")
			if st == nil || len(st.Specs()) == 0 {
				t.Fatalf("not connected: %+v", m.Status())
			}
			if res := call(t, st, "k__echo", `{"text":"kept"}`); res.Output != "echo: kept" {
				t.Fatalf("echo through the keeper = %+v", res)
			}
			keeper := statusOf(m, "k").PID
			esc := readPID(t, escape)
			var server int
			for pid := range childrenOfPID(keeper) {
				server = pid
			}
			if server == 0 {
				t.Fatalf("the keeper %d has no child", keeper)
			}
			group := inGroup(server)
			if _, _, pg := procStat(server); pg != server || len(group) < 2 {
				t.Fatalf("server %d: pgid %d, group %v: want its own group with the grandchild", server, pg, group)
			}
			if _, _, pg := procStat(esc); pg == server || !live(esc) {
				t.Fatalf("escapee %d: pgid %d, live %v", esc, pg, live(esc))
			}
			all := append([]int{keeper, esc}, group...)
			_ = os.Remove(escape) // the restarted server writes its own escapee's pid
			if how == "close" {
				m.Close()
			} else {
				if err := syscall.Kill(keeper, syscall.SIGTERM); err != nil {
					t.Fatal(err)
				}
			}
			waitGone(t, how, all...)
			if how != "close" { // the manager restarts the server; close it and check again
				waitFor(t, m, "the restart", func() bool { return statusOf(m, "k").State == StateReady })
				k2 := statusOf(m, "k").PID
				esc2 := readPID(t, escape)
				m.Close()
				waitGone(t, "close after the restart", k2, esc2)
			}
			for pid, state := range children(t) {
				t.Errorf("child %d left behind (state %s)", pid, state)
			}
		})
	}
}

// childrenOfPID returns the pids (live or zombie) whose parent is ppid.
func childrenOfPID(ppid int) map[int]bool {
	out := map[int]bool{}
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if st, pp, _ := procStat(pid); st != "" && pp == ppid {
			out[pid] = true
		}
	}
	return out
}

package mcp

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zeroclaw-go/zeroclaw/internal/config"
	"github.com/zeroclaw-go/zeroclaw/internal/mcp/mcptest"
)

const envChild = "ZC_MCPTEST_CHILD"

// TestMain makes the test binary the mcptest server when started as one.
func TestMain(m *testing.M) {
	RunShimIfAsked()
	if os.Getenv(envChild) == "1" {
		os.Exit(mcptest.RunStdio())
	}
	code := m.Run()
	if serverBin != "" {
		os.RemoveAll(filepath.Dir(serverBin))
	}
	os.Exit(code)
}

// testServer is a stdio [[mcp.servers]] entry running this test binary as the mcptest server.
func testServer(name string, env map[string]string) config.MCPServerConfig {
	e := map[string]string{envChild: "1"}
	for k, v := range env {
		e[k] = v
	}
	return config.MCPServerConfig{Name: name, Command: os.Args[0], Env: e, StartupTimeoutSecs: 20}
}

func newManager(t *testing.T, servers ...config.MCPServerConfig) *Manager {
	t.Helper()
	m := New(Options{Environ: os.Environ(), BackoffMin: 20 * time.Millisecond, BackoffMax: 200 * time.Millisecond})
	m.Reconcile(config.MCPConfig{Enabled: true, Servers: servers})
	t.Cleanup(m.Close)
	return m
}

// waitFor polls cond on every state change until it holds or the deadline (a test failure) passes.
func waitFor(t *testing.T, m *Manager, what string, cond func() bool) {
	t.Helper()
	deadline := time.After(30 * time.Second)
	for {
		ch := m.Changed()
		if cond() {
			return
		}
		select {
		case <-ch:
		case <-time.After(50 * time.Millisecond):
		case <-deadline:
			t.Fatalf("timed out waiting for %s; status %+v", what, m.Status())
		}
	}
}

func statusOf(m *Manager, name string) ServerStatus {
	for _, s := range m.Status() {
		if s.Name == name {
			return s
		}
	}
	return ServerStatus{}
}

func specNames(st *Set) []string {
	var out []string
	for _, s := range st.Specs() {
		out = append(out, s.Name)
	}
	return out
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// children returns the pids whose parent is this process, with their state letter (Z: zombie).
func children(t *testing.T) map[int]string {
	t.Helper()
	out := map[int]string{}
	me := os.Getpid()
	ents, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		st, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// pid (comm) S ppid pgrp ...
		rest := string(st[strings.LastIndexByte(string(st), ')')+2:])
		f := strings.Fields(rest)
		if len(f) < 3 {
			continue
		}
		if ppid, _ := strconv.Atoi(f[1]); ppid == me {
			out[pid] = f[0]
		}
	}
	return out
}

// inGroup reports the live pids of process group pgid.
func inGroup(pgid int) []int {
	var out []int
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		st, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		rest := string(st[strings.LastIndexByte(string(st), ')')+2:])
		f := strings.Fields(rest)
		if len(f) >= 3 && f[2] == strconv.Itoa(pgid) && f[0] != "Z" {
			out = append(out, pid)
		}
	}
	return out
}

func fdCount(t *testing.T) int {
	ents, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", os.Getpid()))
	if err != nil {
		t.Fatal(err)
	}
	return len(ents)
}

func mcpConfigOf(servers ...config.MCPServerConfig) config.MCPConfig {
	return config.MCPConfig{Enabled: true, Servers: servers}
}

var (
	serverBinOnce sync.Once
	serverBin     string
	serverBinErr  error
)

// builtServer is the mcptestserver command built without the race detector (once per test run): a small,
// quick child for the tests that start a thousand of them, whatever flags this test binary was built with.
func builtServer(t *testing.T, name string) config.MCPServerConfig {
	t.Helper()
	serverBinOnce.Do(func() {
		dir, err := os.MkdirTemp("", "mcptestserver")
		if err != nil {
			serverBinErr = err
			return
		}
		serverBin = filepath.Join(dir, "mcptestserver")
		out, err := exec.Command("go", "build", "-o", serverBin, "./mcptest/mcptestserver").CombinedOutput()
		if err != nil {
			serverBinErr = fmt.Errorf("%v: %s", err, out)
		}
	})
	if serverBinErr != nil {
		t.Fatalf("building mcptestserver: %v", serverBinErr)
	}
	return config.MCPServerConfig{Name: name, Command: serverBin, StartupTimeoutSecs: 20}
}

// procStat returns the state letter, ppid and pgid of pid ("" when it is gone).
func procStat(pid int) (state string, ppid, pgid int) {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return "", 0, 0
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+2:])
	if len(f) < 3 {
		return "", 0, 0
	}
	ppid, _ = strconv.Atoi(f[1])
	pgid, _ = strconv.Atoi(f[2])
	return f[0], ppid, pgid
}

func live(pid int) bool {
	st, _, _ := procStat(pid)
	return st != "" && st != "Z"
}

// waitGone gives pids a bounded while to be gone (the kernel ends a SIGKILLed process asynchronously) and
// fails naming the survivors.
func waitGone(t *testing.T, what string, pids ...int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		var alive []int
		for _, p := range pids {
			if live(p) {
				alive = append(alive, p)
			}
		}
		if len(alive) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: still alive after 10 s: %v", what, alive)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func readPID(t *testing.T, file string) int {
	t.Helper()
	var pid int
	deadline := time.Now().Add(10 * time.Second)
	for pid == 0 && time.Now().Before(deadline) {
		b, _ := os.ReadFile(file)
		pid, _ = strconv.Atoi(strings.TrimSpace(string(b)))
		if pid == 0 {
			time.Sleep(10 * time.Millisecond)
		}
	}
	if pid == 0 {
		t.Fatalf("no pid in %s", file)
	}
	return pid
}

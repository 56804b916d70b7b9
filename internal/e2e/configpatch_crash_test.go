//go:build unix

package e2e

import (
	"fmt"
	"math/rand/v2"
	"net"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/zeroclaw-go/zeroclaw/internal/config"
	"github.com/zeroclaw-go/zeroclaw/internal/rpctest/ndjson"
)

// Crash safety of config/patch (issue 23: PATCH /api/config is one atomic write): kill -9 the real daemon at
// random moments while a client alternates two patches, each a mix of sets, a comment and a delete; after every
// kill config.toml loads and is exactly one patch's whole result, never a set without its delete or comment.
func TestConfigPatchCrashSafety(t *testing.T) {
	t.Parallel()
	in := newConfigInstall(t)
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 0))
	patches := [2][]map[string]any{
		{{"op": "set", "prop": "agents.default.system_prompt", "value": strings.Repeat("A", 24<<10), "comment": "life A"},
			{"op": "set", "prop": "risk_profiles.supervised.approval_timeout_secs", "value": 111},
			{"op": "set", "prop": "agents.default.max_context_tokens", "value": 5000}},
		{{"op": "set", "prop": "agents.default.system_prompt", "value": strings.Repeat("b", 40<<10), "comment": "life B"},
			{"op": "set", "prop": "risk_profiles.supervised.approval_timeout_secs", "value": 222},
			{"op": "delete", "prop": "agents.default.max_context_tokens"}},
	}

	committed := map[string]bool{}
	d := start(t, in.env, "daemon")
	waitSocket(t, d, in.sock)
	c := dialRPC(t, in.sock)
	c.Initialize()
	for i := range 4 {
		if r := c.Call("config/patch", map[string]any{"ops": patches[i%2]}, 10+i); r["error"] != nil {
			t.Fatalf("warm-up patch: %v", r)
		}
		committed[string(in.read(t))] = true
	}
	if len(committed) != 2 {
		t.Fatalf("the two patches give %d distinct files, want 2", len(committed))
	}
	for text := range committed {
		if !strings.Contains(text, "# life A\n") && !strings.Contains(text, "# life B\n") {
			t.Fatalf("a committed file lacks its comment:\n%.300s", text)
		}
	}

	const kills = 12
	for k := range kills {
		if k > 0 {
			d = start(t, in.env, "daemon")
			waitSocket(t, d, in.sock)
		}
		progress := make(chan int, 1024)
		done := make(chan error, 1)
		go func() { done <- patchLoop(in.sock, patches, progress) }()
		select {
		case <-progress:
		case err := <-done:
			t.Fatalf("kill %d: the client stopped before its first commit: %v\n%s", k, err, d.stderr.String())
		case <-time.After(20 * time.Second):
			t.Fatalf("kill %d: no commit within 20s", k)
		}
		time.Sleep(time.Duration(rng.IntN(40_000)) * time.Microsecond)
		signal(t, d, syscall.SIGKILL)
		d.wait(t, 10*time.Second)
		if err := <-done; err != nil && !isConnGone(err) {
			t.Fatalf("kill %d: client: %v", k, err)
		}
		raw := in.read(t)
		if _, _, err := config.Load(in.cfg, nil); err != nil {
			t.Fatalf("kill %d: config.toml does not load: %v", k, err)
		}
		if !committed[string(raw)] {
			t.Fatalf("kill %d: config.toml (%d bytes) is not one patch's whole result", k, len(raw))
		}
		if temps, _ := filepath.Glob(filepath.Join(in.root, ".config.toml.tmp-*")); len(temps) > 1 {
			t.Fatalf("kill %d: %d temp files accumulate: %v", k, len(temps), temps)
		}
	}
}

// patchLoop alternates the two patches on its own connection until the daemon goes, reporting each commit.
func patchLoop(sock string, patches [2][]map[string]any, progress chan<- int) error {
	nc, err := net.Dial("unix", sock)
	if err != nil {
		return err
	}
	defer nc.Close()
	c := ndjson.New(nil, nc) // only TryCall: this runs outside the test's goroutine
	if m, err := c.TryCall("initialize", map[string]any{"protocol_version": 1}, 1); err != nil {
		return err
	} else if m["result"] == nil {
		return fmt.Errorf("initialize: %v", m)
	}
	for i := 0; ; i++ {
		m, err := c.TryCall("config/patch", map[string]any{"ops": patches[i%2]}, i+2)
		if err != nil {
			return err
		}
		if res, _ := m["result"].(map[string]any); res["saved"] != true {
			return fmt.Errorf("patch %d: %v", i, m)
		}
		select {
		case progress <- i:
		default:
		}
	}
}

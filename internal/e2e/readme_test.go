package e2e

import (
	"context"
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

// readmeBlock is one shell block of README.md marked to be run.
type readmeBlock struct {
	line   int  // 1-based line of its opening fence
	daemon bool // the marker asks for a running daemon
	script string
}

// readmeBlocks returns the blocks of README.md that follow a `<!-- readme-test -->` (or `<!-- readme-test
// daemon -->`) marker line; a marker not followed by a ```sh block fails the test.
func readmeBlocks(t *testing.T) []readmeBlock {
	t.Helper()
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(b), "\n")
	var out []readmeBlock
	for i := 0; i < len(lines); i++ {
		marker := strings.TrimSpace(lines[i])
		if !strings.HasPrefix(marker, "<!-- readme-test") {
			continue
		}
		if i+1 >= len(lines) || strings.TrimSpace(lines[i+1]) != "```sh" {
			t.Fatalf("README.md:%d: a readme-test marker must be followed by a ```sh block", i+1)
		}
		blk := readmeBlock{line: i + 2, daemon: strings.Contains(marker, "daemon")}
		var body []string
		j := i + 2
		for ; j < len(lines) && strings.TrimSpace(lines[j]) != "```"; j++ {
			body = append(body, lines[j])
		}
		if j == len(lines) {
			t.Fatalf("README.md:%d: unterminated block", blk.line)
		}
		blk.script = strings.Join(body, "\n") + "\n"
		out = append(out, blk)
		i = j
	}
	return out
}

// Every marked shell block of the README's quick sections runs as written on a fresh install, with the built
// binary on PATH as zeroclaw (and a daemon running for the blocks that say they need one).
func TestReadmeQuickBlocks(t *testing.T) {
	blocks := readmeBlocks(t)
	if len(blocks) < 10 {
		t.Fatalf("only %d readme-test blocks found in README.md: the markers were lost", len(blocks))
	}
	bin := t.TempDir()
	if err := os.Symlink(binary, filepath.Join(bin, "zeroclaw")); err != nil {
		t.Fatal(err)
	}
	for _, blk := range blocks {
		h := home(t)
		// Each block's gateway on a port of its own (the README's 42617 rewritten), so a parallel test or a
		// daemon on this machine holding the default port cannot make a block fail.
		port, _ := freePort(t, "")
		environ := []string{"HOME=" + h, "PATH=" + bin + ":" + os.Getenv("PATH"), fmt.Sprintf("ZEROCLAW_gateway__port=%d", port)}
		script := strings.ReplaceAll(blk.script, "42617", strconv.Itoa(port))
		var d *proc
		if blk.daemon {
			d = start(t, environ, "daemon")
			waitSocket(t, d, agentSock(h))
		}
		ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
		cmd := exec.CommandContext(ctx, "bash", "-c", "set -euo pipefail\n"+script)
		cmd.Env, cmd.Dir = environ, h
		out, err := cmd.CombinedOutput()
		cancel()
		if err != nil {
			t.Errorf("README.md:%d: the block failed (%v) on a fresh install:\n%s\noutput:\n%s", blk.line, err, blk.script, out)
		}
		if d != nil && !d.exited() {
			signal(t, d, syscall.SIGTERM)
			d.wait(t, 20*time.Second)
		}
	}
}

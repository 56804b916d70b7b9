package e2e

import (
	"context"
	"encoding/json"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// mcpServe starts `zeroclaw mcp serve` under the official SDK's client (its CommandTransport: the binary is the
// child, stdin and stdout the protocol).
func mcpServe(t *testing.T, environ []string) (*mcp.ClientSession, *exec.Cmd) {
	t.Helper()
	cmd := exec.Command(binary, "mcp", "serve")
	cmd.Env = environ
	var stderr syncBuffer
	cmd.Stderr = &stderr
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	c := mcp.NewClient(&mcp.Implementation{Name: "e2e", Version: "1"}, nil)
	cs, err := c.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("connect to zeroclaw mcp serve: %v\nstderr:\n%s", err, stderr.String())
	}
	t.Cleanup(func() {
		_ = cs.Close()
		if t.Failed() {
			t.Logf("stderr of mcp serve:\n%s", stderr.String())
		}
	})
	return cs, cmd
}

func mcpCall(t *testing.T, cs *mcp.ClientSession, name string, args any) string {
	t.Helper()
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("tools/call %s: %v", name, err)
	}
	raw, _ := json.Marshal(res.StructuredContent)
	if res.IsError {
		t.Fatalf("tools/call %s: tool error %s", name, raw)
	}
	return string(raw)
}

// `zeroclaw mcp serve` with no daemon running starts an ephemeral one; an MCP client lists every tool and
// calls each, acting as the socket's owner; what it stored is in the install (a later `zeroclaw memory`
// sees it); closing the client ends the server with exit 0 and the ephemeral daemon with it.
func TestMCPServeStdioEphemeral(t *testing.T) {
	t.Parallel()
	h, root := homeWithOpenAI(t, "fake", "http://127.0.0.1:1/v1")
	cs, cmd := mcpServe(t, env(h))

	list, err := cs.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range list.Tools {
		names = append(names, tl.Name)
	}
	slices.Sort(names)
	if want := []string{"cron_add", "cron_list", "memory_search", "memory_store", "session_messages", "session_search", "sop_list", "sop_run", "sop_runs"}; !slices.Equal(names, want) {
		t.Fatalf("tools %v, want %v", names, want)
	}
	if got := mcpCall(t, cs, "memory_store", map[string]any{"key": "editor", "content": "the user edits with helix", "agent": "default"}); !strings.Contains(got, `"stored":true`) {
		t.Fatalf("memory_store: %s", got)
	}
	if got := mcpCall(t, cs, "memory_search", map[string]any{"query": "helix"}); !strings.Contains(got, `"key":"editor"`) {
		t.Fatalf("memory_search: %s", got)
	}
	if got := mcpCall(t, cs, "cron_add", map[string]any{"agent": "default", "schedule": map[string]any{"kind": "every", "every_ms": 3600000}, "prompt": "tidy up", "name": "tidy"}); !strings.Contains(got, `"name":"tidy"`) {
		t.Fatalf("cron_add: %s", got)
	}
	if got := mcpCall(t, cs, "cron_list", nil); !strings.Contains(got, `"name":"tidy"`) {
		t.Fatalf("cron_list: %s", got)
	}
	if got := mcpCall(t, cs, "session_search", map[string]any{"limit": 3}); !strings.Contains(got, `"sessions":`) {
		t.Fatalf("session_search: %s", got)
	}
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "memory_search", Arguments: map[string]any{"query": 1}})
	if err != nil || !res.IsError {
		t.Fatalf("a wrong argument type: %v %+v", err, res)
	}

	if err := cs.Close(); err != nil {
		t.Fatalf("close: %v", err)
	}
	if st, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || st.ExitStatus() != 0 {
		t.Fatalf("mcp serve ended with %v", cmd.ProcessState)
	}
	waitSocketGone(t, filepath.Join(root, "data", "daemon.sock"), 20*time.Second)
	out, stderr, code := run(t, env(h), "", "memory", "search", "helix")
	if code != 0 || !strings.Contains(out, "editor") {
		t.Fatalf("zeroclaw memory search after the MCP session: %d %s %s", code, out, stderr)
	}
}

// Against a running daemon: the session works, and when the daemon stops (SIGTERM) or dies (kill -9), `mcp
// serve` ends (the client sees its session close) instead of answering every later call with an error; a
// daemon started again serves the next `mcp serve`, with what the first one stored.
func TestMCPServeStdioDaemonStops(t *testing.T) {
	t.Parallel()
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGKILL} {
		t.Run(sig.String(), func(t *testing.T) {
			t.Parallel()
			h, root := homeWithOpenAI(t, "fake", "http://127.0.0.1:1/v1")
			sock := filepath.Join(root, "data", "daemon.sock")
			d := start(t, env(h), "daemon")
			waitSocket(t, d, sock)
			cs, _ := mcpServe(t, env(h))
			mcpCall(t, cs, "memory_store", map[string]any{"key": "before", "content": "stored before the " + sig.String(), "agent": "default"})

			if err := d.cmd.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			d.wait(t, 30*time.Second)
			ended := make(chan error, 1)
			go func() { ended <- cs.Wait() }()
			select {
			case <-ended:
			case <-time.After(30 * time.Second):
				t.Fatal("mcp serve outlived its daemon")
			}

			d2 := start(t, env(h), "daemon")
			waitSocket(t, d2, sock)
			cs2, _ := mcpServe(t, env(h))
			if got := mcpCall(t, cs2, "memory_search", map[string]any{"query": "stored before", "agent": "default"}); !strings.Contains(got, `"key":"before"`) {
				t.Fatalf("after the restart: %s", got)
			}
		})
	}
}

// A frame over the stdio limit (1 MiB) ends the session with an error on stderr; what came before it was
// answered, and nothing but protocol reached stdout.
func TestMCPServeStdioOversizedFrame(t *testing.T) {
	t.Parallel()
	h, _ := homeWithOpenAI(t, "fake", "http://127.0.0.1:1/v1")
	in := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}` + "\n" +
		`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n" +
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"memory_store","arguments":{"key":"k","content":"` +
		strings.Repeat("x", 2<<20) + `"}}}` + "\n"
	stdout, stderr, code := run(t, env(h), in, "mcp", "serve")
	if code == 0 || !strings.Contains(stderr, "frame") {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	lines := strings.Split(strings.TrimSuffix(stdout, "\n"), "\n")
	if len(lines) != 1 || !strings.HasPrefix(lines[0], `{"jsonrpc":"2.0","id":1,"result":{`) {
		t.Fatalf("stdout:\n%.500s", stdout)
	}
	if out, _, _ := run(t, env(h), "", "memory", "list"); strings.Contains(out, "xxxx") {
		t.Fatal("the oversized frame was stored")
	}
}

// A client that writes its calls and closes its input (a shell pipe) still gets every answer, in order of the
// ids it sent, before `mcp serve` exits 0.
func TestMCPServeStdioAnswersBeforeEOF(t *testing.T) {
	t.Parallel()
	h, _ := homeWithOpenAI(t, "fake", "http://127.0.0.1:1/v1")
	in := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"sh","version":"1"}}}` + "\n" +
		`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n" +
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"memory_store","arguments":{"key":"color","content":"the user likes teal"}}}` + "\n" +
		`{"jsonrpc":"2.0","id":3,"method":"tools/list"}` + "\n"
	stdout, stderr, code := run(t, env(h), in, "mcp", "serve")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var ids []float64
	for line := range strings.SplitSeq(strings.TrimSuffix(stdout, "\n"), "\n") {
		var m struct {
			ID     float64         `json:"id"`
			Result json.RawMessage `json:"result"`
		}
		if err := json.Unmarshal([]byte(line), &m); err != nil || m.Result == nil {
			t.Fatalf("not an answer: %s", line)
		}
		ids = append(ids, m.ID)
	}
	slices.Sort(ids)
	if !slices.Equal(ids, []float64{1, 2, 3}) || !strings.Contains(stdout, `\"stored\":true`) {
		t.Fatalf("answers %v:\n%s", ids, stdout)
	}
}

// With ZEROCLAW_MCP_TOKEN a paired device's token, `mcp serve` acts as that device: the reader's memory_store
// is refused with the native -32012 and stores nothing, its memory_search works; a token that is not paired
// stops the command at once with a hint, before any MCP is spoken.
func TestMCPServeStdioAsDevice(t *testing.T) {
	t.Parallel()
	cfg := "schema_version = 3\n\n[providers.models.echo.default]\nmodel = \"echo\"\n\n[agents.default]\nmodel_provider = \"echo.default\"\nrisk_profile = \"supervised\"\n\n[risk_profiles.supervised]\nlevel = \"supervised\"\n\n[gateway]\nport = 0\n\n[permission_profiles.reader]\ngrants = [\"memory:read\"]\n"
	h, root := homeWithConfig(t, cfg)
	d := start(t, env(h), "daemon")
	waitSocket(t, d, filepath.Join(root, "data", "daemon.sock"))
	base, _ := pairWithBanner(t, d)
	reader := pairCode(t, base, strings.TrimSpace(runOK(t, env(h), "", "pair", "code", "--profile", "reader")))

	cs, _ := mcpServe(t, env(h, "ZEROCLAW_MCP_TOKEN="+reader))
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "memory_store", Arguments: map[string]any{"key": "k", "content": "planted by the reader"}})
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := json.Marshal(res.StructuredContent)
	if !res.IsError || !strings.Contains(string(raw), `"code":-32012`) || !strings.Contains(string(raw), "missing grant memory:write") {
		t.Fatalf("the reader's memory_store: %s", raw)
	}
	if got := mcpCall(t, cs, "memory_search", map[string]any{"query": "planted"}); strings.Contains(got, "planted by the reader") {
		t.Fatalf("a refused store stored: %s", got)
	}

	stdout, stderr, code := run(t, env(h, "ZEROCLAW_MCP_TOKEN=zc_not_paired"), "", "mcp", "serve")
	if code == 0 || stdout != "" || !strings.Contains(stderr, "ZEROCLAW_MCP_TOKEN is not a paired token") || !strings.Contains(stderr, "Try: ") {
		t.Fatalf("a wrong token: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
}

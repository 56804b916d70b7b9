package mcp

import (
	"encoding/json"
	"os"
	"os/exec"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/zeroclaw-go/zeroclaw/internal/tools"
)

// BenchmarkToolCallViaManager is one MCP tool call the way a turn makes it (Set.Call: lookup, argument
// decoding, the call over stdio, rendering, scrubbing, bounding); BenchmarkToolCallDirectSDK calls the same
// server's same tool with the bare SDK client. The difference is our overhead per call.
func BenchmarkToolCallViaManager(b *testing.B) { benchManager(b, "") }

// BenchmarkToolCallViaKeeper is BenchmarkToolCallViaManager with the server under the keeper (the daemon's
// default on Linux): the keeper hands the server the daemon's pipes, so a call crosses no extra process.
func BenchmarkToolCallViaKeeper(b *testing.B) {
	if SelfShim() == "" {
		b.Fatal("the test binary is no keeper")
	}
	benchManager(b, SelfShim())
}

func benchManager(b *testing.B, shim string) {
	m := New(Options{Environ: os.Environ(), Shim: shim})
	m.Reconcile(mcpConfigOf(testServer("b", nil)))
	defer m.Close()
	st := m.ForServers(b.Context(), []string{"b"}, "")
	call := tools.Call{ID: "1", Name: "b__echo", Arguments: json.RawMessage(`{"text":"hi"}`)}
	if r := st.Call(b.Context(), call, 4096); r.Output != "echo: hi" {
		b.Fatalf("warm-up: %+v", r)
	}
	b.ResetTimer()
	for b.Loop() {
		if r := st.Call(b.Context(), call, 4096); r.IsError {
			b.Fatal(r.Output)
		}
	}
}

func BenchmarkToolCallDirectSDK(b *testing.B) {
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), envChild+"=1")
	sess, err := sdk.NewClient(&sdk.Implementation{Name: "bench"}, nil).Connect(b.Context(), &sdk.CommandTransport{Command: cmd}, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer sess.Close()
	params := &sdk.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "hi"}}
	b.ResetTimer()
	for b.Loop() {
		if r, err := sess.CallTool(b.Context(), params); err != nil || r.IsError {
			b.Fatal(err)
		}
	}
}

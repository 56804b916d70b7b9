package agent

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zeroclaw-go/zeroclaw/internal/api"
	"github.com/zeroclaw-go/zeroclaw/internal/tools"
)

// A reject_with_edit replacement goes through the policy again: an edit is not a way around blocked commands,
// the workspace or forbidden paths.
func TestRejectWithEditIsCheckedByThePolicy(t *testing.T) {
	cases := []struct {
		name, prompt, replacement string
		escaped                   func(h *harness) bool
	}{
		{"blocked command", `/tool shell {"command":"echo hi"}`, `{"command":"echo pwned > marker; rm -rf /"}`,
			func(h *harness) bool { _, err := os.Stat(filepath.Join(h.ws, "marker")); return err == nil }},
		{"outside the workspace", `/tool file_write {"path":"a.txt","content":"x"}`, `{"path":"../escaped.txt","content":"x"}`,
			func(h *harness) bool { _, err := os.Stat(filepath.Join(h.ws, "..", "escaped.txt")); return err == nil }},
		{"forbidden path", `/tool file_write {"path":"a.txt","content":"x"}`, `{"path":"private/key","content":"x"}`,
			func(h *harness) bool { _, err := os.Stat(filepath.Join(h.ws, "private", "key")); return err == nil }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t)
			ap := &scriptedApprover{decision: ApprovalDecision{Decision: api.DecisionRejectWithEdit, Replacement: json.RawMessage(tc.replacement)}}
			pol := tools.Policy{Level: tools.LevelSupervised, WorkspaceOnly: true, ForbiddenPaths: []string{"private"}}
			if _, _, err := h.turn(echoProvider(t), pol, ap).Run(t.Context(), tc.prompt); err != nil {
				t.Fatal(err)
			}
			if tc.escaped(h) {
				t.Fatal("the edited call ran")
			}
			res := h.find(api.UpdateToolResult)[0]
			if !res.IsError || !strings.Contains(*res.RawOutput, "refused") {
				t.Fatalf("tool_result = %q is_error=%v", *res.RawOutput, res.IsError)
			}
		})
	}
}

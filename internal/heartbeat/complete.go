package heartbeat

import (
	"context"
	"encoding/json"
	"strings"
	"sync"

	"github.com/zeroclaw-go/zeroclaw/internal/tools"
)

// CompleteTool is the tool a heartbeat task's turn calls when its work is done. It is offered only in
// heartbeat turns (a Completion is made per task run), and a run is ok only when it was called: an answer
// alone is not completion.
const CompleteTool = "heartbeat_complete"

// maxSummaryBytes bounds what the tool keeps of the model's summary.
const maxSummaryBytes = 4 << 10

var completeSpec = tools.Spec{
	Name: CompleteTool,
	Description: "Report that the current heartbeat task is done. Call it once, after the work of the task has " +
		"actually been carried out, with a one-line summary of what was done. A heartbeat task that ends " +
		"without this call is recorded as failed.",
	Parameters: json.RawMessage(`{"type":"object","properties":{"summary":{"type":"string",` +
		`"description":"What was done, in one line."}},"additionalProperties":false}`),
}

// Completion is the heartbeat_complete tool of one task run, a tools.External the turn is given. It is safe for
// concurrent use.
type Completion struct {
	mu      sync.Mutex // guards the fields below
	called  bool
	summary string
}

// Specs implements tools.External.
func (c *Completion) Specs() []tools.Spec { return []tools.Spec{completeSpec} }

// Risk implements tools.External: reporting completion touches nothing, so every risk profile runs it.
func (c *Completion) Risk(name string) (tools.Risk, bool) {
	if name != CompleteTool {
		return "", false
	}
	return tools.RiskLow, true
}

// Call implements tools.External. Arguments that are not the tool's are refused and do not count.
func (c *Completion) Call(_ context.Context, call tools.Call, _ int) tools.Result {
	if call.Name != CompleteTool {
		return tools.Result{Output: call.Name + ": unknown tool", IsError: true}
	}
	var args struct {
		Summary string `json:"summary"`
	}
	if len(call.Arguments) > 0 {
		dec := json.NewDecoder(strings.NewReader(string(call.Arguments)))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&args); err != nil {
			return tools.Result{Output: CompleteTool + ": arguments must be {\"summary\": string}", IsError: true}
		}
	}
	s := strings.TrimSpace(args.Summary)
	if len(s) > maxSummaryBytes {
		s = strings.ToValidUTF8(s[:maxSummaryBytes], "")
	}
	c.mu.Lock()
	c.called, c.summary = true, s
	c.mu.Unlock()
	return tools.Result{Output: "heartbeat task recorded as complete"}
}

// PromptSection adds nothing to the system prompt: the tool's description says when to call it.
func (c *Completion) PromptSection(context.Context) string { return "" }

// Done reports whether the tool was called, and the summary it was given.
func (c *Completion) Done() (bool, string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.called, c.summary
}

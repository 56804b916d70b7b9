package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"regexp"
	"slices"
	"strings"
	"sync"
)

// NameDelegate is upstream's delegate tool.
const NameDelegate = "delegate"

// Delegator hands work to other agents for one calling agent's delegate tool. Implementations live with the
// session manager and the control plane; this package only describes what the tool needs.
type Delegator interface {
	// Targets are the agents the caller may delegate to, sorted.
	Targets() []string
	// Run runs prompt as one unattended turn of agent and returns its answer and the model that gave it.
	Run(ctx context.Context, agent, prompt string) (model, reply string, err error)
	// Start runs prompt as an unattended turn of agent in the background and returns its task id (a UUID)
	// once the task is registered and its result file says running.
	Start(ctx context.Context, agent, prompt string) (taskID string, err error)
	// Result reads a background task's result: the file, with lost or timed_out overlaid from the control
	// plane while the file still says running. An unknown task wraps fs.ErrNotExist.
	Result(ctx context.Context, taskID string) (DelegateResult, error)
	// Results reads every background task's result of the caller, oldest first.
	Results(ctx context.Context) ([]DelegateResult, error)
}

// NarrowingDelegator is a Delegator whose delegated turns can be bounded to a restricted principal's tools.
type NarrowingDelegator interface {
	Delegator
	// Narrowed is the same Delegator whose delegated turns are offered only allowed.
	Narrowed(allowed []string) Delegator
}

// DelegateResult is a background delegation's result as upstream's delegate tool shows it.
type DelegateResult struct {
	TaskID     string  `json:"task_id"`
	Agent      string  `json:"agent"`
	Status     string  `json:"status"`
	Output     *string `json:"output"`
	Error      *string `json:"error"`
	StartedAt  string  `json:"started_at"`
	FinishedAt *string `json:"finished_at"`
}

func delegateSpec(targets []string) Spec {
	avail := "(none configured)"
	if len(targets) > 0 {
		avail = strings.Join(targets, ", ")
	}
	return Spec{
		Name: NameDelegate,
		Description: "Hand a task to another agent: it runs the prompt as one turn with its own model, tools and risk profile. " +
			"With background=true it returns a task_id at once; read the result later with action='check_result'.",
		Parameters: json.RawMessage(`{"type":"object","additionalProperties":false,"properties":{` +
			`"action":{"type":"string","enum":["delegate","check_result","list_results","cancel_task","await_sessions"],"default":"delegate","description":"delegate (default) runs a task; check_result reads a background task's result; list_results lists them. cancel_task and await_sessions are not available here."},` +
			`"agent":{"type":"string","minLength":1,"description":` + quote("The agent to delegate to. Available: "+avail) + `},` +
			`"prompt":{"type":"string","minLength":1,"description":"The task for the agent."},` +
			`"context":{"type":"string","description":"Background the agent needs (findings, code), put before the task."},` +
			`"background":{"type":"boolean","default":false,"description":"Run in the background and return a task_id at once; the result is kept in the workspace's delegate_results/<task_id>.json."},` +
			`"parallel":{"type":"array","items":{"type":"string"},"description":"Not available here."},` +
			`"task_id":{"type":"string","description":"The task id for check_result (returned by a background delegation)."},` +
			`"task_ids":{"type":"array","items":{"type":"string"},"description":"Not available here (await_sessions)."},` +
			`"timeout_ms":{"type":"integer","minimum":0,"description":"Not available here (await_sessions)."}` +
			`},"required":[]}`),
	}
}

type delegateArgs struct {
	Action     *string         `json:"action"`
	Agent      *string         `json:"agent"`
	Prompt     *string         `json:"prompt"`
	Context    string          `json:"context"`
	Background bool            `json:"background"`
	Parallel   json.RawMessage `json:"parallel"`
	TaskID     *string         `json:"task_id"`
}

func parseDelegate(call Call) (delegateArgs, string, error) {
	var a delegateArgs
	if err := decodeArgs(call.Arguments, &a); err != nil {
		return a, "", fmt.Errorf("delegate: %w", err)
	}
	action := "delegate"
	if a.Action != nil {
		action = *a.Action
	}
	switch action {
	case "delegate", "check_result", "list_results", "cancel_task", "await_sessions":
		return a, action, nil
	}
	return a, "", fmt.Errorf("Unknown action '%s'. Use delegate, check_result or list_results", action)
}

// delegateWrite reports whether the call hands work to another agent (medium risk); reading results is low.
func delegateWrite(action string) bool { return action == "delegate" }

var taskIDRE = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`)
})

func runDelegate(ctx context.Context, env Env, call Call) Result {
	d := env.Delegate
	if d == nil {
		return errorf("delegate: delegation is not available to this turn")
	}
	a, action, err := parseDelegate(call)
	if err != nil {
		return errorf("%v", err)
	}
	switch action {
	case "cancel_task", "await_sessions":
		return errorf("delegate: action '%s' is not available here; use check_result to follow a background task", action)
	case "list_results":
		rs, err := d.Results(ctx)
		if err != nil {
			return errorf("delegate: %v", err)
		}
		if len(rs) == 0 {
			return Result{Output: "No background delegate results found."}
		}
		type row struct {
			TaskID     string  `json:"task_id"`
			Agent      string  `json:"agent"`
			Status     string  `json:"status"`
			StartedAt  string  `json:"started_at"`
			FinishedAt *string `json:"finished_at"`
		}
		out := make([]row, 0, len(rs))
		for _, r := range rs {
			out = append(out, row{r.TaskID, r.Agent, r.Status, r.StartedAt, r.FinishedAt})
		}
		return prettyJSON(out)
	case "check_result":
		if a.TaskID == nil {
			return errorf("Missing 'task_id' parameter for check_result")
		}
		id := *a.TaskID
		if !taskIDRE().MatchString(id) {
			return errorf("Invalid task_id '%s': must be a valid UUID", id)
		}
		r, err := d.Result(ctx, id)
		if errors.Is(err, fs.ErrNotExist) {
			return errorf("No result found for task_id '%s'", id)
		}
		if err != nil {
			return errorf("delegate: %v", err)
		}
		return delegateView(r)
	}
	if len(a.Parallel) > 0 && string(a.Parallel) != "null" {
		return errorf("delegate: 'parallel' is not available here; delegate to each agent in turn, or in the background")
	}
	if a.Agent == nil {
		return errorf("Missing 'agent' parameter")
	}
	agent := strings.TrimSpace(*a.Agent)
	if agent == "" {
		return errorf("'agent' parameter must not be empty")
	}
	if a.Prompt == nil {
		return errorf("Missing 'prompt' parameter")
	}
	prompt := strings.TrimSpace(*a.Prompt)
	if prompt == "" {
		return errorf("'prompt' parameter must not be empty")
	}
	targets := d.Targets()
	if !slices.Contains(targets, agent) {
		avail := "(none)"
		if len(targets) > 0 {
			avail = strings.Join(targets, ", ")
		}
		return errorf("Unknown agent '%s'. Available agents: %s", agent, avail)
	}
	if c := strings.TrimSpace(a.Context); c != "" {
		prompt = "[Context]\n" + c + "\n\n[Task]\n" + prompt
	}
	if a.Background {
		id, err := d.Start(ctx, agent, prompt)
		if err != nil {
			return errorf("Agent '%s' could not be started: %v", agent, err)
		}
		return Result{Output: fmt.Sprintf("Background task started for agent '%s'.\ntask_id: %s\n"+
			"Use action='check_result' with task_id='%s' to retrieve the result.", agent, id, id)}
	}
	model, reply, err := d.Run(ctx, agent, prompt)
	if err != nil {
		return errorf("Agent '%s' failed: %v", agent, err)
	}
	if strings.TrimSpace(reply) == "" {
		reply = "[Empty response]"
	}
	return Result{Output: fmt.Sprintf("[Agent '%s' (%s)]\n%s", agent, model, reply)}
}

// delegateView renders a result as check_result shows it: the file as it is, or, for a task lost with its
// daemon or past its runtime, a note saying so. Only a completed task is a success.
func delegateView(r DelegateResult) Result {
	switch r.Status {
	case "lost", "timed_out":
		res := prettyJSON(map[string]any{"task_id": r.TaskID, "agent": r.Agent, "status": r.Status, "started_at": r.StartedAt,
			"note": "the daemon that ran it exited, or it outlived its maximum runtime; it will not complete"})
		res.IsError = true
		return res
	}
	res := prettyJSON(r)
	res.IsError = r.Status == "failed" || r.Status == "cancelled"
	return res
}

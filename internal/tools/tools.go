// Package tools defines the tools offered to models (shell, file_read, file_write, file_list, ask_user, time),
// the workspace sandbox that confines their paths, and the risk policy that decides whether a call runs.
package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/zeroclaw-go/zeroclaw/internal/memory"
)

// Tool names, as offered to models.
const (
	NameShell     = "shell"
	NameFileRead  = "file_read"
	NameFileWrite = "file_write"
	NameFileList  = "file_list"
	NameAskUser   = "ask_user"
	NameTime      = "time"
)

// Defaults applied by Execute when the Env leaves them zero.
const (
	DefaultShellTimeout = 60 * time.Second
	DefaultOutputCap    = 64 << 10
)

// Spec describes one tool to a model: its name, what it does and a JSON Schema object for its arguments.
type Spec struct {
	Name        string
	Description string
	Parameters  json.RawMessage
}

// Specs returns every tool this package implements, in a stable order. The caller owns the returned slice.
// The memory and cron tools are included; SpecsFor leaves them out of a turn that cannot reach them.
func Specs() []Spec {
	return append(append(append(append(baseSpecs(), memorySpecs()...), cronSpecs()...), delegateSpec(nil)), sopSpecs()...)
}

// SpecsFor returns the tools a turn in env can use: all of them, less the memory tools when env has no memory,
// the cron tools when it has no scheduler and delegate when it may not delegate, plus read_skill when env can
// read skills.
func SpecsFor(env Env) []Spec {
	base := fixed.base()
	n := len(base) + 1
	if env.Memory != nil {
		n += len(fixed.memory())
	}
	if env.Cron != nil {
		n += len(fixed.cron())
	}
	if env.SOPs != nil {
		n += len(fixed.sop())
	}
	out := append(make([]Spec, 0, n+2), base...)
	if env.Memory != nil {
		out = append(out, fixed.memory()...)
	}
	if env.Cron != nil {
		out = append(out, fixed.cron()...)
	}
	if env.Delegate != nil {
		out = append(out, delegateSpec(env.Delegate.Targets()))
	}
	if env.ReadSkill != nil {
		out = append(out, fixed.readSkill())
	}
	if env.SOPs != nil {
		out = append(out, fixed.sop()...)
	}
	if env.External != nil {
		for _, s := range env.External.Specs() {
			if !known(s.Name) { // a built-in name is never shadowed
				out = append(out, s)
			}
		}
	}
	return out
}

// fixed holds the built-in specs that never change, each built once on first use: SpecsFor runs at every model
// request of every turn, and building them (the schema literals copied into byte slices, the cron schemas
// concatenated) cost a turn ~80 allocations. The lists are shared and never written; the functions below hand
// out copies that a caller may reorder.
var fixed = struct {
	base, memory, cron, sop func() []Spec
	readSkill               func() Spec
}{
	base: sync.OnceValue(buildBaseSpecs), memory: sync.OnceValue(buildMemorySpecs), cron: sync.OnceValue(buildCronSpecs),
	sop: sync.OnceValue(buildSopSpecs), readSkill: sync.OnceValue(buildReadSkillSpec),
}

func baseSpecs() []Spec   { return slices.Clone(fixed.base()) }
func memorySpecs() []Spec { return slices.Clone(fixed.memory()) }
func cronSpecs() []Spec   { return slices.Clone(fixed.cron()) }
func sopSpecs() []Spec    { return slices.Clone(fixed.sop()) }
func readSkillSpec() Spec { return fixed.readSkill() }

func buildBaseSpecs() []Spec {
	return []Spec{
		{
			Name:        NameShell,
			Description: "Run a shell command (sh -c) in the workspace directory. Returns combined stdout and stderr and the exit code.",
			Parameters:  json.RawMessage(`{"type":"object","properties":{"command":{"type":"string","description":"The command line to run."}},"required":["command"],"additionalProperties":false}`),
		},
		{
			Name:        NameFileRead,
			Description: "Read a text file. Relative paths are resolved against the workspace.",
			Parameters:  json.RawMessage(`{"type":"object","properties":{"path":{"type":"string","description":"File path, relative to the workspace or absolute."}},"required":["path"],"additionalProperties":false}`),
		},
		{
			Name:        NameFileWrite,
			Description: "Create or replace a file with the given content. Parent directories are created. Relative paths are resolved against the workspace.",
			Parameters:  json.RawMessage(`{"type":"object","properties":{"path":{"type":"string","description":"File path, relative to the workspace or absolute."},"content":{"type":"string","description":"The complete new content of the file."}},"required":["path","content"],"additionalProperties":false}`),
		},
		{
			Name:        NameFileList,
			Description: "List a directory: one name per line, sorted, directories end with a slash. An empty path lists the workspace.",
			Parameters:  json.RawMessage(`{"type":"object","properties":{"path":{"type":"string","description":"Directory path, relative to the workspace or absolute. Defaults to the workspace."}},"additionalProperties":false}`),
		},
		{
			Name:        NameAskUser,
			Description: "Ask the user a question and wait for the answer. Optionally offer a list of choices.",
			Parameters:  json.RawMessage(`{"type":"object","properties":{"question":{"type":"string","description":"The question to ask."},"choices":{"type":"array","items":{"type":"string"},"description":"Optional answers to choose from."},"multi_select":{"type":"boolean","description":"With choices: let the user pick several of them (default false)."}},"required":["question"],"additionalProperties":false}`),
		},
		{
			Name:        NameTime,
			Description: "Return the current date and time (RFC 3339).",
			Parameters:  json.RawMessage(`{"type":"object","properties":{},"additionalProperties":false}`),
		},
	}
}

// Names are the names of every built-in tool, in no particular order.
func Names() []string {
	return []string{NameShell, NameFileRead, NameFileWrite, NameFileList, NameAskUser, NameTime, NameReadSkill,
		NameMemoryStore, NameMemoryRecall, NameMemoryForget, NameMemoryExport, NameMemoryPurge,
		NameCronAdd, NameCronList, NameCronRemove, NameCronUpdate, NameCronRun, NameCronRuns, NameDelegate,
		NameSopList, NameSopExecute, NameSopAdvance, NameSopApprove, NameSopStatus}
}

// known reports whether name is a tool this package implements.
func known(name string) bool {
	switch name {
	case NameShell, NameFileRead, NameFileWrite, NameFileList, NameAskUser, NameTime, NameReadSkill:
		return true
	}
	return isMemoryTool(name) || isCronTool(name) || name == NameDelegate || isSopTool(name)
}

// Call is one tool invocation requested by a model. Arguments is a JSON object; empty or null means {}.
type Call struct {
	ID        string
	Name      string
	Arguments json.RawMessage
}

// Result is what the model is told about a call. IsError marks a failed or refused call; Output always explains.
type Result struct {
	Output  string
	IsError bool
}

// Env is everything a tool execution may touch. It is a value: the caller builds one per turn.
type Env struct {
	// Workspace is the agent's sandbox directory and the shell's working directory.
	Workspace string
	// Policy is re-checked by Execute as a defence in depth.
	Policy Policy
	// Environ is the complete environment of shell commands (KEY=value): only the configured passthrough,
	// never the daemon's own environment. A default PATH is added when absent.
	Environ []string
	// ShellTimeout bounds one shell command; zero means DefaultShellTimeout.
	ShellTimeout time.Duration
	// OutputCap bounds shell output, file_read content and file_list listings in bytes; zero means
	// DefaultOutputCap. Truncation is marked in the output.
	OutputCap int
	// Asker answers ask_user; nil means no interactive client can answer.
	Asker Asker
	// Now is the clock for the time tool; nil means time.Now.
	Now func() time.Time
	// Memory is the agent's memory for the memory_* tools; nil: the turn has no memory (tools not offered).
	Memory *memory.Scoped
	// MemoryAccess is what the principal the turn runs for may do with Memory; the zero value is the owner's.
	MemoryAccess MemoryAccess
	// ReadSkill returns the SKILL.md of one of the turn's skills by name, for read_skill; nil: the tool is not
	// offered (no skills, or skills injected in full).
	ReadSkill func(name string) (string, error)

	// Cron is the scheduler, scoped to the turn's agent, for the cron_* tools; nil: not offered.
	Cron Cron
	// Delegate hands work to other agents for the delegate tool; nil: the agent may not delegate (not offered).
	Delegate Delegator
	// External is the turn's MCP tools; nil: none.
	External External
	// SOPs is the SOP engine acting as the turn's agent, for the sop_* tools; nil: no engine (not offered).
	SOPs SOPs
}

func (e Env) outputCap() int {
	if e.OutputCap > 0 {
		return e.OutputCap
	}
	return DefaultOutputCap
}

func (e Env) shellTimeout() time.Duration {
	if e.ShellTimeout > 0 {
		return e.ShellTimeout
	}
	return DefaultShellTimeout
}

func (e Env) now() time.Time {
	if e.Now != nil {
		return e.Now()
	}
	return time.Now()
}

// Execute runs call in env. The caller must already have obtained approval when Policy.Decide said Ask.
// Execute re-checks the policy and the sandbox and refuses what Decide would refuse. It never panics and
// never returns a Go error: bad arguments, refusals and failures become an IsError Result naming the problem.
func Execute(ctx context.Context, env Env, call Call) (res Result) {
	defer func() {
		if r := recover(); r != nil {
			res = errorf("%s: internal error: %v", call.Name, r)
		}
	}()
	if d := env.Policy.Decide(call, env.Workspace); d.Verdict == Refuse {
		return errorf("%s: refused: %s", call.Name, d.Reason)
	}
	switch call.Name {
	case NameShell:
		return runShell(ctx, env, call)
	case NameFileRead:
		return readFile(env, call)
	case NameFileWrite:
		return writeFile(env, call)
	case NameFileList:
		return listDir(env, call)
	case NameAskUser:
		return askUser(ctx, env, call)
	case NameTime:
		return Result{Output: env.now().Format(time.RFC3339)}
	case NameReadSkill:
		return readSkill(env, call)
	}
	if isMemoryTool(call.Name) {
		return runMemory(ctx, env, call)
	}
	if isCronTool(call.Name) {
		return runCron(ctx, env, call)
	}
	if call.Name == NameDelegate {
		return runDelegate(ctx, env, call)
	}
	if isSopTool(call.Name) {
		return runSop(ctx, env, call)
	}
	if env.External != nil {
		if _, ok := env.External.Risk(call.Name); ok {
			return env.External.Call(ctx, call, env.outputCap())
		}
	}
	return errorf("%s: unknown tool", call.Name)
}

func errorf(format string, args ...any) Result {
	return Result{Output: fmt.Sprintf(format, args...), IsError: true}
}

// Argument shapes. Unknown fields are ignored: models add them, and they carry no authority.
type shellArgs struct {
	Command *string `json:"command"`
}

type pathArgs struct {
	Path *string `json:"path"`
}

type writeArgs struct {
	Path    *string `json:"path"`
	Content *string `json:"content"`
}

type askArgs struct {
	Question *string  `json:"question"`
	Choices  []string `json:"choices"`
	// MultiSelect lets the user pick several of the choices.
	MultiSelect *bool `json:"multi_select"`
}

var errBadArguments = errors.New("invalid arguments")

// decodeArgs decodes a call's JSON object arguments into v; empty or null arguments decode as {}.
func decodeArgs(raw json.RawMessage, v any) error {
	trimmed := bytes.TrimSpace(raw)
	if len(trimmed) == 0 || bytes.Equal(trimmed, []byte("null")) {
		return nil
	}
	if trimmed[0] != '{' {
		return fmt.Errorf("%w: arguments must be a JSON object", errBadArguments)
	}
	if err := json.Unmarshal(trimmed, v); err != nil {
		return fmt.Errorf("%w: %v", errBadArguments, err)
	}
	return nil
}

// required returns *s, or an error naming the missing argument.
func required(s *string, name string) (string, error) {
	if s == nil {
		return "", fmt.Errorf("%w: missing required argument %q", errBadArguments, name)
	}
	return *s, nil
}

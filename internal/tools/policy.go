package tools

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/zeroclaw-go/zeroclaw/internal/visible"
)

// Level is a risk profile's level.
type Level string

// Levels of a risk profile (state.md §2). Any other value, including "", is treated as LevelReadOnly.
const (
	LevelReadOnly   Level = "readonly"
	LevelSupervised Level = "supervised"
	LevelFull       Level = "full"
)

// Valid reports whether l is one of the three levels.
func (l Level) Valid() bool {
	return l == LevelReadOnly || l == LevelSupervised || l == LevelFull
}

// Risk is the risk class of one tool call.
type Risk string

// Risk classes (state.md §2).
const (
	RiskLow    Risk = "low"
	RiskMedium Risk = "medium"
	RiskHigh   Risk = "high"
)

// Verdict is what to do with a tool call. The zero value is Refuse, so a forgotten Decision fails closed.
type Verdict int

// Verdicts.
const (
	Refuse Verdict = iota // do not run; tell the model Decision.Reason
	Run                   // run without asking
	Ask                   // ask the user (approval_request) and run only if approved
)

func (v Verdict) String() string {
	switch v {
	case Run:
		return "run"
	case Ask:
		return "ask"
	case Refuse:
		return "refuse"
	}
	return fmt.Sprintf("Verdict(%d)", int(v))
}

// Decision is the policy's answer for one call. Reason is meant for the model and the user.
type Decision struct {
	Verdict Verdict
	Risk    Risk
	Reason  string
	// AskEveryTime, with Verdict Ask, means the call must be put to the user even when the tool was allowed
	// for the rest of the session (allow_always): a shell command whose expansions the blocklist cannot check.
	AskEveryTime bool
}

// Policy is one agent's effective risk profile, mapped from config by the agent layer. The zero Policy is
// readonly with no forbidden paths and the default blocked commands.
type Policy struct {
	Level Level
	// WorkspaceOnly makes file_* calls on paths outside the workspace high risk.
	WorkspaceOnly bool
	// AutoApprove lists tools whose medium-risk calls run without asking under supervised.
	AutoApprove []string
	// AlwaysAsk lists tools that are always asked about, even at low risk or under full, unless refused.
	AlwaysAsk []string
	// ExcludedTools are hidden from the model and refused.
	ExcludedTools []string
	// AllowedTools, when non-empty, are the only tools offered; others are refused.
	AllowedTools []string
	// ForbiddenPaths are refused for file_* calls at every level: a path equal to or below an entry, after
	// canonicalization. "~" is the user's home; relative entries are relative to the workspace.
	ForbiddenPaths []string
	// BlockedCommands are shell patterns refused at every level; nil means DefaultBlockedCommands (an empty
	// non-nil slice blocks nothing). A pattern is words, each a path.Match glob: the first matches the program
	// (or its base name), the others must each match one of its arguments in any order; combined short flags
	// are split ("-rf" = "-r -f"). Sudo/env/sh -c style wrappers and VAR=value prefixes are looked through,
	// and every simple command of a ; && || | list is checked. A pattern starting with punctuation (a fork
	// bomb) matches literally, ignoring whitespace.
	BlockedCommands []string
	// Protected is refused to every file_* call at every level (and a shell never runs in it): the daemon's
	// install root. Set by the agent layer; the zero value protects nothing.
	Protected Protected
	// External is the turn's MCP tools (the same value as Env.External): their risk comes from it.
	External External
}

func (p Policy) blocked() []string {
	if p.BlockedCommands == nil {
		return DefaultBlockedCommands
	}
	return p.BlockedCommands
}

// offers reports whether the tool name exists and is offered under p.
func (p Policy) offers(name string) bool {
	if !known(name) {
		if _, ok := p.externalRisk(name); ok {
			return p.offersExternal(name)
		}
		return false
	}
	if slices.Contains(p.ExcludedTools, name) {
		return false
	}
	return len(p.AllowedTools) == 0 || slices.Contains(p.AllowedTools, name)
}

// Offered returns the specs of all that p offers to the model: excluded tools are dropped, and a non-empty
// AllowedTools keeps only those. Order is preserved; all is not modified.
func (p Policy) Offered(all []Spec) []Spec {
	out := make([]Spec, 0, len(all))
	for _, s := range all {
		if !known(s.Name) {
			if _, ok := p.externalRisk(s.Name); ok && p.offersExternal(s.Name) {
				out = append(out, s)
			}
			continue
		}
		if slices.Contains(p.ExcludedTools, s.Name) {
			continue
		}
		if len(p.AllowedTools) > 0 && !slices.Contains(p.AllowedTools, s.Name) {
			continue
		}
		out = append(out, s)
	}
	return out
}

// classification is the risk of one call before the level is applied.
type classification struct {
	risk      Risk
	hard      bool // refused at every level (blocked command, forbidden path)
	unchecked bool // a shell command the blocklist cannot judge: asked under supervised, whatever auto_approve says
	write     bool // a low-risk call that changes stored state (memory_store/forget/purge): refused under readonly
	reason    string
}

// Decide classifies call per the state.md §2 risk table for workspace (paths canonicalized first) and
// applies p: readonly runs low risk and refuses the rest; supervised runs low, asks for medium unless the
// tool is in AutoApprove, refuses high; full runs everything except blocked commands and forbidden paths.
// A shell command that uses expansion, substitution or similar indirection (see indirection) is medium risk
// and asked about under supervised even when shell is in AutoApprove, with AskEveryTime set.
// The memory tools are low risk; memory_store, memory_forget and memory_purge write, so readonly refuses them.
// cron_list and cron_runs are low risk; the other cron tools (add, update, remove, run) are medium; delegate is
// medium when it hands work over and low when it reads results. sop_list and sop_status are low risk;
// sop_execute, sop_advance and sop_approve are medium (they start, steer or clear a run).
// AlwaysAsk turns any Run into Ask. A tool that is not offered (excluded, not allowed, unknown) and a call
// whose arguments cannot be classified are refused. Decide only reads the filesystem (to resolve symlinks).
func (p Policy) Decide(call Call, workspace string) Decision {
	if !p.offers(call.Name) {
		return Decision{Verdict: Refuse, Risk: RiskHigh, Reason: fmt.Sprintf("tool %q is not offered to this agent", call.Name)}
	}
	c, err := p.classify(call, workspace)
	if err != nil {
		return Decision{Verdict: Refuse, Risk: RiskHigh, Reason: err.Error()}
	}
	d := Decision{Risk: c.risk, Reason: c.reason}
	switch {
	case c.hard:
		d.Verdict = Refuse
		d.Reason += ": refused at every level"
	case p.Level == LevelFull:
		d.Verdict = Run
	case p.Level == LevelSupervised:
		switch {
		case c.risk == RiskLow:
			d.Verdict = Run
		case c.risk == RiskMedium && slices.Contains(p.AutoApprove, call.Name) && !c.unchecked:
			d.Verdict = Run
			d.Reason += " (auto-approved)"
		case c.risk == RiskMedium:
			d.Verdict = Ask
			d.AskEveryTime = c.unchecked
			d.Reason += ": needs approval under the supervised profile"
		default:
			d.Verdict = Refuse
			d.Reason += ": refused under the supervised profile"
		}
	default: // readonly, and any unknown level fails closed the same way
		if c.risk == RiskLow && !c.write {
			d.Verdict = Run
		} else {
			d.Verdict = Refuse
			d.Reason += ": refused under the readonly profile"
		}
	}
	if d.Verdict == Run && slices.Contains(p.AlwaysAsk, call.Name) {
		d.Verdict = Ask
		d.Reason += ": always asked for this tool"
	}
	return d
}

func (p Policy) classify(call Call, workspace string) (classification, error) {
	switch call.Name {
	case NameShell:
		var a shellArgs
		if err := decodeArgs(call.Arguments, &a); err != nil {
			return classification{}, fmt.Errorf("shell: %w", err)
		}
		cmd, err := required(a.Command, "command")
		if err != nil {
			return classification{}, fmt.Errorf("shell: %w", err)
		}
		if strings.TrimSpace(cmd) == "" {
			return classification{}, fmt.Errorf("shell: %w: empty command", errBadArguments)
		}
		if pat, ok := blockedBy(p.blocked(), cmd); ok {
			return classification{risk: RiskHigh, hard: true, reason: fmt.Sprintf("shell: blocked command (matches %q)", pat)}, nil
		}
		if what := indirection(cmd); what != "" {
			return classification{risk: RiskMedium, unchecked: true,
				reason: "shell: the command uses " + what + ", which the blocklist cannot check"}, nil
		}
		return classification{risk: RiskMedium, reason: "shell: command"}, nil
	case NameFileRead, NameFileList, NameFileWrite:
		pth, err := pathArg(call)
		if err != nil {
			return classification{}, err
		}
		loc, err := locate(workspace, pth, p.ForbiddenPaths, p.Protected)
		switch {
		case errors.Is(err, ErrProtectedPath):
			return classification{risk: RiskHigh, hard: true, reason: fmt.Sprintf("%s: %s is inside the daemon's install root (config, secrets and data)", call.Name, pth)}, nil
		case errors.Is(err, ErrForbiddenPath):
			return classification{risk: RiskHigh, hard: true, reason: fmt.Sprintf("%s: forbidden path %s", call.Name, pth)}, nil
		case err != nil:
			return classification{}, fmt.Errorf("%s: %w", call.Name, err)
		case !loc.inside && p.WorkspaceOnly:
			return classification{risk: RiskHigh, reason: fmt.Sprintf("%s: path %s is outside the workspace", call.Name, pth)}, nil
		case call.Name == NameFileWrite:
			return classification{risk: RiskMedium, reason: "file_write: " + pth}, nil
		}
		return classification{risk: RiskLow, reason: call.Name + ": " + pth}, nil
	case NameAskUser:
		if _, err := parseAsk(call); err != nil {
			return classification{}, err
		}
		return classification{risk: RiskLow, reason: "ask_user"}, nil
	case NameTime:
		return classification{risk: RiskLow, reason: "time"}, nil
	case NameReadSkill:
		name, err := readSkillName(call)
		if err != nil {
			return classification{}, err
		}
		return classification{risk: RiskLow, reason: "read_skill: " + name}, nil
	}
	if isMemoryTool(call.Name) {
		if _, err := parseMemory(call); err != nil {
			return classification{}, err
		}
		return classification{risk: RiskLow, write: memoryWrite(call.Name), reason: call.Name}, nil
	}
	if isCronTool(call.Name) {
		if _, err := parseCron(call); err != nil {
			return classification{}, err
		}
		if cronWrite(call.Name) {
			return classification{risk: RiskMedium, reason: call.Name + ": changes or runs scheduled jobs"}, nil
		}
		return classification{risk: RiskLow, reason: call.Name}, nil
	}
	if call.Name == NameDelegate {
		_, action, err := parseDelegate(call)
		if err != nil {
			return classification{}, err
		}
		if delegateWrite(action) {
			return classification{risk: RiskMedium, reason: "delegate: hands a task to another agent"}, nil
		}
		return classification{risk: RiskLow, reason: "delegate: " + action}, nil
	}
	if isSopTool(call.Name) {
		if _, err := parseSop(call); err != nil {
			return classification{}, err
		}
		if sopWrite(call.Name) {
			return classification{risk: RiskMedium, reason: call.Name + ": starts, steers or approves a SOP run"}, nil
		}
		return classification{risk: RiskLow, reason: call.Name}, nil
	}
	if r, ok := p.externalRisk(call.Name); ok {
		if err := decodeArgs(call.Arguments, &map[string]any{}); err != nil {
			return classification{}, fmt.Errorf("%s: %w", call.Name, err)
		}
		return classification{risk: r, reason: call.Name + ": MCP tool"}, nil
	}
	return classification{}, fmt.Errorf("%s: unknown tool", call.Name)
}

// pathArg extracts the path argument of a file_* call; file_list defaults to the workspace.
func pathArg(call Call) (string, error) {
	if call.Name == NameFileWrite {
		a, err := parseWrite(call)
		return a.path, err
	}
	var a pathArgs
	if err := decodeArgs(call.Arguments, &a); err != nil {
		return "", fmt.Errorf("%s: %w", call.Name, err)
	}
	if a.Path == nil || *a.Path == "" {
		if call.Name == NameFileList {
			return ".", nil
		}
		return "", fmt.Errorf("%s: %w: missing required argument \"path\"", call.Name, errBadArguments)
	}
	return *a.Path, nil
}

type writeRequest struct {
	path, content string
}

func parseWrite(call Call) (writeRequest, error) {
	var a writeArgs
	if err := decodeArgs(call.Arguments, &a); err != nil {
		return writeRequest{}, fmt.Errorf("file_write: %w", err)
	}
	pth, err := required(a.Path, "path")
	if err == nil && pth == "" {
		err = fmt.Errorf("%w: empty path", errBadArguments)
	}
	if err != nil {
		return writeRequest{}, fmt.Errorf("file_write: %w", err)
	}
	content, err := required(a.Content, "content")
	if err != nil {
		return writeRequest{}, fmt.Errorf("file_write: %w", err)
	}
	return writeRequest{path: pth, content: content}, nil
}

type askRequest struct {
	question string
	choices  []string
	multi    bool // the user may pick several of the choices
}

func parseAsk(call Call) (askRequest, error) {
	var a askArgs
	if err := decodeArgs(call.Arguments, &a); err != nil {
		return askRequest{}, fmt.Errorf("ask_user: %w", err)
	}
	q, err := required(a.Question, "question")
	if err == nil && strings.TrimSpace(q) == "" {
		err = fmt.Errorf("%w: empty question", errBadArguments)
	}
	if err != nil {
		return askRequest{}, fmt.Errorf("ask_user: %w", err)
	}
	return askRequest{question: q, choices: a.Choices, multi: a.MultiSelect != nil && *a.MultiSelect}, nil
}

// Bounds of Summary, in bytes of the original text: a shell command is shown whole up to shellSummaryLimit so
// the user sees what they approve; other summaries are cut at summaryLimit.
const (
	summaryLimit      = 2000
	shellSummaryLimit = 16 << 10
)

// Summary describes the call's arguments for an approval_request, for a person to judge. Every character that
// a terminal would act on or that would not be seen is escaped (visible.Escape), so nothing can be hidden or
// drawn over. A shell command with several lines is shown as a "shell: N lines" header followed by each line,
// numbered, on its own line. A cut is never silent: the text ends with "… (N more bytes not shown)".
func (p Policy) Summary(call Call) string {
	if call.Name == NameShell {
		var a shellArgs
		if decodeArgs(call.Arguments, &a) == nil && a.Command != nil {
			return shellSummary(*a.Command)
		}
	}
	var s string
	switch call.Name {
	case NameFileRead, NameFileList:
		if pth, err := pathArg(call); err == nil {
			s = call.Name + ": " + pth
		}
	case NameFileWrite:
		if w, err := parseWrite(call); err == nil {
			s = fmt.Sprintf("file_write: %s (%d bytes)", w.path, len(w.content))
		}
	case NameAskUser:
		if a, err := parseAsk(call); err == nil {
			s = "ask_user: " + a.question
			if len(a.choices) > 0 {
				s += " [" + strings.Join(a.choices, " | ") + "]"
			}
		}
	case NameTime:
		s = "time"
	}
	if s == "" {
		s = call.Name + " " + string(call.Arguments)
	}
	shown, left := clip(s, summaryLimit)
	out := visible.Escape(shown)
	if left > 0 {
		out += fmt.Sprintf("… (%d more bytes not shown)", left)
	}
	return out
}

func shellSummary(command string) string {
	shown, left := clip(command, shellSummaryLimit)
	lines := visible.Lines(shown)
	var b strings.Builder
	if len(lines) == 1 {
		b.WriteString("shell: " + lines[0])
		if left > 0 {
			fmt.Fprintf(&b, "… (%d more bytes not shown)", left)
		}
		return b.String()
	}
	total := strings.Count(command, "\n") + 1
	width := len(strconv.Itoa(total))
	fmt.Fprintf(&b, "shell: %d lines", total)
	for i, l := range lines {
		fmt.Fprintf(&b, "\n  %*d| %s", width, i+1, l)
	}
	if left > 0 {
		fmt.Fprintf(&b, "\n… (%d more bytes not shown)", left)
	}
	return b.String()
}

// clip cuts s to at most n bytes on a rune boundary and returns the kept part and the number of bytes left out.
func clip(s string, n int) (string, int) {
	if len(s) <= n {
		return s, 0
	}
	cut := n
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut], len(s) - cut
}

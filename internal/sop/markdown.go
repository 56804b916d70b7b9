package sop

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/pelletier/go-toml/v2"
)

// ParseSteps reads the steps of a SOP.md, as upstream's parse_steps: only the "## Steps" section
// (case-insensitive; any other "## " heading ends it); "N. " starts a step, numbered by position (the written
// number is ignored); the first **bold** is the title and the rest of the line, less a leading dash, the
// body; "- key: value" bullets set fields (see the package README table) and other lines join the body.
// It never fails: what it cannot read is body text, or dropped as upstream drops it (an invalid call: line).
func ParseSteps(md string) []Step {
	var steps []Step
	inSteps := false
	var cur *Step
	flush := func() {
		if cur != nil {
			cur.Body = strings.TrimSpace(cur.Body)
			steps = append(steps, *cur)
			cur = nil
		}
	}
	appendBody := func(s string) {
		if cur.Body != "" {
			cur.Body += "\n"
		}
		cur.Body += s
	}
	for line := range strings.Lines(md) {
		line = strings.TrimRight(line, "\r\n")
		trimmed := strings.TrimSpace(line)
		if strings.HasPrefix(trimmed, "## ") {
			if strings.EqualFold(trimmed, "## steps") {
				inSteps = true
				continue
			}
			if inSteps {
				flush()
				inSteps = false
			}
			continue
		}
		if !inSteps {
			continue
		}
		if rest, ok := numberedItem(trimmed); ok {
			flush()
			cur = &Step{Number: uint32(len(steps) + 1), Kind: KindExecute}
			if title, body, ok := boldTitle(rest); ok {
				cur.Title, cur.Body = title, body
			} else {
				cur.Title = rest
			}
			continue
		}
		if cur == nil {
			continue
		}
		if strings.HasPrefix(trimmed, "- ") {
			b := trimmed
			for strings.HasPrefix(b, "- ") {
				b = b[2:]
			}
			b = strings.TrimSpace(b)
			if !applyBullet(cur, b) {
				appendBody(trimmed)
			}
			continue
		}
		if trimmed != "" {
			appendBody(trimmed)
		}
	}
	flush()
	return steps
}

// applyBullet sets the field a "- key: value" bullet names; false when the bullet names none.
func applyBullet(s *Step, b string) bool {
	cut := func(prefixes ...string) (string, bool) {
		for _, p := range prefixes {
			if v, ok := strings.CutPrefix(b, p); ok {
				return v, true
			}
		}
		return "", false
	}
	ensureScope := func() *ToolScope {
		if s.Scope == nil {
			s.Scope = &ToolScope{}
		}
		return s.Scope
	}
	ensureSchema := func() *StepSchema {
		if s.Schema == nil {
			s.Schema = &StepSchema{}
		}
		return s.Schema
	}
	opt := func(v string) string { return strings.TrimSpace(v) }
	if v, ok := cut("tools:"); ok {
		s.SuggestedTools = csv(v)
	} else if v, ok := cut("allow-tools:", "allow_tools:"); ok {
		ensureScope().Allow = csvNonNil(v)
	} else if v, ok := cut("deny-tools:", "deny_tools:"); ok {
		ensureScope().Deny = csv(v)
	} else if v, ok := cut("requires_confirmation:"); ok {
		s.RequiresConfirmation = strings.EqualFold(strings.TrimSpace(v), "true")
	} else if v, ok := cut("kind:"); ok {
		s.Kind = parseStepKind(v)
	} else if v, ok := cut("capability:"); ok {
		s.Capability = strings.TrimSpace(v)
	} else if v, ok := cut("with:"); ok {
		s.With = valueFragment(strings.TrimSpace(v))
	} else if v, ok := cut("input:"); ok {
		ensureSchema().Input = valueFragment(strings.TrimSpace(v))
	} else if v, ok := cut("output:"); ok {
		ensureSchema().Output = valueFragment(strings.TrimSpace(v))
	} else if v, ok := cut("when:"); ok {
		if v = strings.TrimSpace(v); v != "" {
			s.Routing.When = v
		}
	} else if v, ok := cut("next:"); ok {
		s.Routing.Next = parseU32(v)
	} else if v, ok := cut("terminal:"); ok {
		s.Routing.Terminal = strings.EqualFold(strings.TrimSpace(v), "true")
	} else if v, ok := cut("depends_on:", "depends-on:"); ok {
		s.Routing.DependsOn = u32List(v)
	} else if v, ok := cut("switch:"); ok {
		s.Routing.Switch = switchRules(v)
	} else if v, ok := cut("on_failure:", "on-failure:"); ok {
		s.OnFailure = parseFailure(v)
	} else if v, ok := cut("mode:"); ok {
		s.Mode = ParseExecutionMode(v)
	} else if v, ok := cut("agent:"); ok {
		s.Agent = opt(v)
	} else if v, ok := cut("call:"); ok {
		var c PlannedCall
		if json.Unmarshal([]byte(strings.TrimSpace(v)), &c) == nil && c.Tool != "" {
			s.Calls = append(s.Calls, c)
		}
	} else if v, ok := cut("prompt:"); ok {
		if v = opt(v); v != "" {
			s.GatePrompt = v
		}
	} else if v, ok := cut("policy:"); ok {
		s.Policy = opt(v)
	} else if v, ok := cut("edit:"); ok {
		s.Edit = opt(v)
	} else {
		return false
	}
	return true
}

// UnmarshalJSON of a call requires tool (serde's required field); ParseSteps drops a call without one.
func (c *PlannedCall) UnmarshalJSON(b []byte) error {
	var w struct {
		Tool   *string         `json:"tool"`
		Args   json.RawMessage `json:"args"`
		Pinned json.RawMessage `json:"pinned"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	if w.Tool == nil {
		return fmt.Errorf("call: missing field `tool`")
	}
	*c = PlannedCall{Tool: *w.Tool, Args: w.Args, Pinned: w.Pinned}
	if isJSONNull(c.Pinned) {
		c.Pinned = nil
	}
	return nil
}

func numberedItem(line string) (string, bool) {
	dot := strings.Index(line, ". ")
	if dot <= 0 {
		return "", false
	}
	for _, c := range line[:dot] {
		if c < '0' || c > '9' {
			return "", false
		}
	}
	return strings.TrimSpace(line[dot+2:]), true
}

// boldTitle splits "**title** — body" (the dash may be —, – or -).
func boldTitle(text string) (title, body string, ok bool) {
	start := strings.Index(text, "**")
	if start < 0 {
		return "", "", false
	}
	end := strings.Index(text[start+2:], "**")
	if end < 0 {
		return "", "", false
	}
	title = text[start+2 : start+2+end]
	rest := strings.TrimSpace(text[start+2+end+2:])
	for _, d := range []string{"—", "–", "-"} {
		if r, ok := strings.CutPrefix(rest, d); ok {
			rest = r
			break
		}
	}
	return title, strings.TrimSpace(rest), true
}

func csv(v string) []string {
	var out []string
	for item := range strings.SplitSeq(v, ",") {
		if item = strings.TrimSpace(item); item != "" {
			out = append(out, item)
		}
	}
	return out
}

// csvNonNil is csv that keeps an empty list distinct from an absent one (an empty allow-list allows nothing).
func csvNonNil(v string) []string {
	if out := csv(v); out != nil {
		return out
	}
	return []string{}
}

func parseU32(v string) *uint32 {
	n, err := strconv.ParseUint(strings.TrimSpace(v), 10, 32)
	if err != nil {
		return nil
	}
	u := uint32(n)
	return &u
}

func u32List(v string) []uint32 {
	var out []uint32
	for item := range strings.SplitSeq(v, ",") {
		if n := parseU32(item); n != nil {
			out = append(out, *n)
		}
	}
	return out
}

// switchRules reads "name>when>goto; ..." (empty when = catch-all).
func switchRules(v string) []SwitchRule {
	var out []SwitchRule
	for seg := range strings.SplitSeq(v, ";") {
		parts := strings.SplitN(seg, ">", 3)
		name := strings.TrimSpace(parts[0])
		if name == "" {
			continue
		}
		r := SwitchRule{Name: name}
		if len(parts) > 1 {
			r.When = strings.TrimSpace(parts[1])
		}
		if len(parts) > 2 {
			r.Goto = parseU32(parts[2])
		}
		out = append(out, r)
	}
	return out
}

func parseStepKind(v string) StepKind {
	switch lowerTrim(v) {
	case "checkpoint", "approval":
		return KindCheckpoint
	case "capability":
		return KindCapability
	}
	return KindExecute
}

func parseFailure(v string) Failure {
	v = strings.TrimSpace(v)
	if strings.EqualFold(v, "fail") {
		return Failure{Action: FailRun}
	}
	for _, p := range []string{"retry:", "retry "} {
		if r, ok := strings.CutPrefix(v, p); ok {
			if n := parseU32(r); n != nil {
				return Failure{Action: FailRetry, Max: *n}
			}
		}
	}
	for _, p := range []string{"goto:", "goto "} {
		if r, ok := strings.CutPrefix(v, p); ok {
			if n := parseU32(r); n != nil {
				return Failure{Action: FailGoto, Step: *n}
			}
		}
	}
	return Failure{Action: FailRun}
}

// valueFragment reads a bullet's value as JSON, else as a TOML value, else as a string.
func valueFragment(v string) json.RawMessage {
	if json.Valid([]byte(v)) {
		return compactJSON([]byte(v))
	}
	var m map[string]any
	if toml.Unmarshal([]byte("value = "+v), &m) == nil {
		if x, ok := m["value"]; ok {
			if b, err := json.Marshal(x); err == nil {
				return b
			}
		}
	}
	b, _ := json.Marshal(v)
	return b
}

func compactJSON(b []byte) json.RawMessage {
	var buf bytes.Buffer
	if json.Compact(&buf, b) != nil {
		return append(json.RawMessage(nil), b...)
	}
	return buf.Bytes()
}

// RenderSteps writes steps as a SOP.md "## Steps" section, the inverse of ParseSteps. Unlike upstream's
// render_steps it writes every field (kind capability, capability, with, policy, prompt, edit too), so a
// saved step loads back whole; CheckRoundTrip refuses a step whose text could not.
func RenderSteps(steps []Step) string {
	var b strings.Builder
	b.WriteString("## Steps\n\n")
	for _, s := range steps {
		body := strings.Split(s.Body, "\n")
		if s.Body == "" {
			fmt.Fprintf(&b, "%d. **%s**\n", s.Number, s.Title)
		} else {
			fmt.Fprintf(&b, "%d. **%s** - %s\n", s.Number, s.Title, body[0])
		}
		for _, l := range body[1:] {
			fmt.Fprintf(&b, "   %s\n", l)
		}
		for _, bl := range stepBullets(s) {
			fmt.Fprintf(&b, "   - %s\n", bl)
		}
	}
	return b.String()
}

func stepBullets(s Step) []string {
	var out []string
	add := func(f string, a ...any) { out = append(out, fmt.Sprintf(f, a...)) }
	if len(s.SuggestedTools) > 0 {
		add("tools: %s", strings.Join(s.SuggestedTools, ", "))
	}
	if s.Scope != nil {
		if s.Scope.Allow != nil {
			add("allow-tools: %s", strings.Join(s.Scope.Allow, ", "))
		}
		if len(s.Scope.Deny) > 0 {
			add("deny-tools: %s", strings.Join(s.Scope.Deny, ", "))
		}
	}
	if s.RequiresConfirmation {
		add("requires_confirmation: true")
	}
	switch s.Kind {
	case KindCheckpoint, KindCapability:
		add("kind: %s", s.Kind)
	}
	if s.Capability != "" {
		add("capability: %s", s.Capability)
	}
	if !isJSONNull(s.With) {
		add("with: %s", compactJSON(s.With))
	}
	if s.Schema != nil {
		if !isJSONNull(s.Schema.Input) {
			add("input: %s", compactJSON(s.Schema.Input))
		}
		if !isJSONNull(s.Schema.Output) {
			add("output: %s", compactJSON(s.Schema.Output))
		}
	}
	if s.Routing.When != "" {
		add("when: %s", s.Routing.When)
	}
	if s.Routing.Next != nil {
		add("next: %d", *s.Routing.Next)
	}
	if s.Routing.Terminal {
		add("terminal: true")
	}
	if len(s.Routing.DependsOn) > 0 {
		parts := make([]string, len(s.Routing.DependsOn))
		for i, d := range s.Routing.DependsOn {
			parts[i] = strconv.FormatUint(uint64(d), 10)
		}
		add("depends_on: %s", strings.Join(parts, ", "))
	}
	if len(s.Routing.Switch) > 0 {
		parts := make([]string, len(s.Routing.Switch))
		for i, r := range s.Routing.Switch {
			g := ""
			if r.Goto != nil {
				g = strconv.FormatUint(uint64(*r.Goto), 10)
			}
			parts[i] = r.Name + ">" + r.When + ">" + g
		}
		add("switch: %s", strings.Join(parts, "; "))
	}
	switch s.OnFailure.Action {
	case FailRetry:
		add("on_failure: retry: %d", s.OnFailure.Max)
	case FailGoto:
		add("on_failure: goto: %d", s.OnFailure.Step)
	}
	if s.Mode != "" {
		add("mode: %s", s.Mode)
	}
	if s.Agent != "" {
		add("agent: %s", s.Agent)
	}
	for _, c := range s.Calls {
		if j, err := json.Marshal(c); err == nil {
			add("call: %s", j)
		}
	}
	if s.Policy != "" {
		add("policy: %s", s.Policy)
	}
	if s.GatePrompt != "" {
		add("prompt: %s", s.GatePrompt)
	}
	if s.Edit != "" {
		add("edit: %s", s.Edit)
	}
	return out
}

func lowerTrim(s string) string { return strings.ToLower(strings.TrimSpace(s)) }

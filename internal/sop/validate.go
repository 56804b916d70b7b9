package sop

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// Validation is sops/validate's result: blocking problems refuse a save, warnings do not.
type Validation struct {
	Blocking []string `json:"blocking"`
	Warnings []string `json:"warnings"`
	OK       bool     `json:"ok"`
}

// Finding is one validation problem, with the step it is about (0: the SOP as a whole).
type Finding struct {
	Step     uint32
	Blocking bool
	Message  string
}

// Validate is upstream's validate_sop_strict, plus one blocking check of ours: a step whose text SOP.md cannot
// hold (a title with "**", a body line that would read as a bullet or a new step...) is refused, because
// saving it would silently change it.
func Validate(s Sop) Validation {
	v := Validation{Blocking: []string{}, Warnings: []string{}}
	for _, f := range Findings(s) {
		if f.Blocking {
			v.Blocking = append(v.Blocking, f.Message)
		} else {
			v.Warnings = append(v.Warnings, f.Message)
		}
	}
	v.OK = len(v.Blocking) == 0
	return v
}

// Findings lists every problem of s in upstream's order: name, step titles and numbers, call bindings, graph
// diagnostics, then the advisory checks.
func Findings(s Sop) []Finding {
	var out []Finding
	block := func(step uint32, f string, a ...any) {
		out = append(out, Finding{Step: step, Blocking: true, Message: fmt.Sprintf(f, a...)})
	}
	warn := func(step uint32, f string, a ...any) {
		out = append(out, Finding{Step: step, Message: fmt.Sprintf(f, a...)})
	}
	if strings.TrimSpace(s.Name) == "" {
		block(0, "SOP name is empty")
	}
	seen := map[uint32]bool{}
	for _, st := range s.Steps {
		if strings.TrimSpace(st.Title) == "" {
			block(st.Number, "Step %d has an empty title", st.Number)
		}
		if seen[st.Number] {
			block(st.Number, "Duplicate step number %d", st.Number)
		}
		seen[st.Number] = true
	}
	out = append(out, bindingFindings(s)...)
	for _, d := range graphDiagnostics(s) {
		out = append(out, Finding{Step: d.Step, Blocking: d.Severity == SeverityError, Message: fmt.Sprintf("Step %d: %s", d.Step, d.Message)})
	}
	for _, st := range s.Steps {
		if msg := roundTripProblem(st); msg != "" {
			block(st.Number, "Step %d: %s", st.Number, msg)
		}
	}
	if s.Name == "" {
		warn(0, "SOP name is empty")
	}
	if s.Description == "" {
		warn(0, "SOP description is empty")
	}
	if len(s.Triggers) == 0 {
		warn(0, "SOP has no triggers defined")
	}
	if len(s.Steps) == 0 {
		warn(0, "SOP has no steps (missing or empty SOP.md)")
	}
	for i, st := range s.Steps {
		if want := uint32(i + 1); st.Number != want {
			warn(st.Number, "Step numbering gap: expected %d, got %d", want, st.Number)
		}
		if st.Title == "" {
			warn(st.Number, "Step %d has an empty title", st.Number)
		}
	}
	return out
}

// Severity of a graph diagnostic.
type Severity string

// Severities.
const (
	SeverityWarning Severity = "warning"
	SeverityError   Severity = "error"
)

// Diagnostic is a graph finding ({severity, step, message} on the wire).
type Diagnostic struct {
	Severity Severity `json:"severity"`
	Step     uint32   `json:"step"`
	Message  string   `json:"message"`
}

// graphDiagnostics are the routing-target findings of upstream's graph projection.
func graphDiagnostics(s Sop) []Diagnostic {
	valid := map[uint32]bool{}
	for _, st := range s.Steps {
		valid[st.Number] = true
	}
	var out []Diagnostic
	add := func(sev Severity, step uint32, f string, a ...any) {
		out = append(out, Diagnostic{Severity: sev, Step: step, Message: fmt.Sprintf(f, a...)})
	}
	for _, st := range s.Steps {
		hasSwitch := len(st.Routing.Switch) > 0
		if n := st.Routing.Next; n != nil && !hasSwitch && !valid[*n] {
			add(SeverityError, st.Number, "next target step %d does not exist", *n)
		}
		for _, d := range st.Routing.DependsOn {
			if !valid[d] {
				add(SeverityError, st.Number, "depends_on target step %d does not exist", d)
			}
		}
		if st.OnFailure.Action == FailGoto && !valid[st.OnFailure.Step] {
			add(SeverityError, st.Number, "on_failure goto target step %d does not exist", st.OnFailure.Step)
		}
		if hasSwitch && st.Routing.Next != nil {
			add(SeverityWarning, st.Number, "step has switch rules and a routing.next target; next is ignored because switch resolution takes precedence")
		}
		for _, r := range st.Routing.Switch {
			switch {
			case r.Goto == nil:
				add(SeverityWarning, st.Number, "switch port '%s' has no target", r.Name)
			case !valid[*r.Goto]:
				add(SeverityError, st.Number, "switch port '%s' target step %d does not exist", r.Name, *r.Goto)
			}
		}
	}
	return append(out, dataDiagnostics(s)...)
}

// Binding is one {{steps.N.path}} or {{calls.K.path}} reference in a planned call's args.
type Binding struct {
	Raw     string
	Calls   bool // calls.K, else steps.N
	Index   uint32
	Path    string
	Reason  string // non-empty: malformed
	ArgPath string // where in the call's args the binding is ("" at the top)
}

// Bindings extracts every binding from the string leaves of a JSON value, as upstream's extract_bindings,
// each with the dot path of the leaf it is in (object keys in sorted order, array indexes).
func Bindings(v json.RawMessage) []Binding {
	if isJSONNull(v) {
		return nil
	}
	var doc any
	if json.Unmarshal(v, &doc) != nil {
		return nil
	}
	var out []Binding
	var walk func(any, string)
	join := func(p, seg string) string {
		if p == "" {
			return seg
		}
		return p + "." + seg
	}
	walk = func(x any, at string) {
		switch t := x.(type) {
		case string:
			for _, b := range scanBindings(t) {
				b.ArgPath = at
				out = append(out, b)
			}
		case []any:
			for i, e := range t {
				walk(e, join(at, strconv.Itoa(i)))
			}
		case map[string]any:
			keys := make([]string, 0, len(t))
			for k := range t {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				walk(t[k], join(at, k))
			}
		}
	}
	walk(doc, "")
	return out
}

func scanBindings(s string) []Binding {
	var out []Binding
	rest := s
	for {
		start := strings.Index(rest, "{{")
		if start < 0 {
			return out
		}
		after := rest[start+2:]
		end := strings.Index(after, "}}")
		if end < 0 {
			return append(out, Binding{Raw: strings.TrimSpace(after), Reason: "unclosed '{{'"})
		}
		out = append(out, parseBinding(strings.TrimSpace(after[:end])))
		rest = after[end+2:]
	}
}

func parseBinding(body string) Binding {
	parts := strings.SplitN(body, ".", 3)
	b := Binding{Raw: body}
	if len(parts) < 2 {
		b.Reason = "missing index (expected steps.N or calls.K)"
		return b
	}
	n, err := strconv.ParseUint(parts[1], 10, 32)
	if err != nil {
		b.Reason = "index is not a number"
		return b
	}
	b.Index = uint32(n)
	switch parts[0] {
	case "steps":
	case "calls":
		b.Calls = true
	default:
		b.Reason = "unknown scope (expected steps or calls)"
		return b
	}
	if len(parts) == 3 {
		b.Path = parts[2]
	}
	return b
}

func bindingFindings(s Sop) []Finding {
	known := map[uint32]*Step{}
	for i := range s.Steps {
		known[s.Steps[i].Number] = &s.Steps[i]
	}
	var out []Finding
	for _, st := range s.Steps {
		for ci, c := range st.Calls {
			label := fmt.Sprintf("Step %d call %d (%s)", st.Number, ci, c.Tool)
			for _, b := range Bindings(c.Args) {
				add := func(blocking bool, f string, a ...any) {
					out = append(out, Finding{Step: st.Number, Blocking: blocking, Message: label + ": " + fmt.Sprintf(f, a...)})
				}
				switch {
				case b.Reason != "":
					add(true, "malformed binding '%s': %s", b.Raw, b.Reason)
				case b.Calls:
					if int(b.Index) >= ci {
						add(true, "binding '%s' references call %d, which does not run before call %d", b.Raw, b.Index, ci)
					}
				default:
					t, ok := known[b.Index]
					switch {
					case !ok:
						add(true, "binding '%s' references unknown step %d", b.Raw, b.Index)
					case b.Index >= st.Number:
						add(true, "binding '%s' references step %d, which does not run before step %d", b.Raw, b.Index, st.Number)
					case len(t.Calls) == 0 && (t.Schema == nil || isJSONNull(t.Schema.Output)):
						add(false, "binding '%s' targets step %d, which declares no output schema or planned calls", b.Raw, b.Index)
					}
				}
			}
		}
	}
	return out
}

// dataDiagnostics: a required input of a step's input schema that no earlier step can produce (upstream's
// "unsatisfiable inputs") is reported when the schema names required properties and no predecessor declares
// an output schema.
func dataDiagnostics(s Sop) []Diagnostic {
	var out []Diagnostic
	for i, st := range s.Steps {
		if i == 0 || st.Schema == nil || isJSONNull(st.Schema.Input) {
			continue
		}
		var in struct {
			Required []string `json:"required"`
		}
		if json.Unmarshal(st.Schema.Input, &in) != nil || len(in.Required) == 0 {
			continue
		}
		prev := s.Steps[i-1]
		if prev.Schema == nil || isJSONNull(prev.Schema.Output) {
			continue // nothing declared to check against
		}
		var po struct {
			Properties map[string]json.RawMessage `json:"properties"`
		}
		if json.Unmarshal(prev.Schema.Output, &po) != nil {
			continue
		}
		for _, r := range in.Required {
			if _, ok := po.Properties[r]; !ok {
				out = append(out, Diagnostic{Severity: SeverityError, Step: st.Number,
					Message: fmt.Sprintf("required input '%s' is not produced by step %d's output schema", r, prev.Number)})
			}
		}
	}
	return out
}

// roundTripProblem says why st would not load back the same from SOP.md ("" when it would).
func roundTripProblem(st Step) string {
	if strings.Contains(st.Title, "**") {
		return "title cannot contain \"**\" (SOP.md marks the title with it)"
	}
	for _, field := range []struct{ name, v string }{{"title", st.Title}, {"when", st.Routing.When},
		{"agent", st.Agent}, {"policy", st.Policy}, {"prompt", st.GatePrompt}, {"edit", st.Edit}, {"capability", st.Capability}} {
		if strings.ContainsAny(field.v, "\r\n") {
			return field.name + " cannot span lines"
		}
	}
	probe := st
	probe.Number, probe.Pos = 1, nil
	got := ParseSteps(RenderSteps([]Step{probe}))
	if len(got) != 1 {
		return "its text would read back as a different number of steps (a body line starting with \"N. \" or \"## \"?)"
	}
	a, _ := json.Marshal(canonicalStep(probe))
	b, _ := json.Marshal(canonicalStep(got[0]))
	if !bytes.Equal(a, b) {
		return "its text would not read back the same from SOP.md (a body line that looks like a \"- key:\" bullet, " +
			"surrounding spaces, a leading dash, a value with a separator of the bullet syntax?)"
	}
	return ""
}

// canonicalStep normalizes what SOP.md cannot tell apart and nothing reads differently: JSON formatting,
// empty lists versus absent ones.
func canonicalStep(s Step) any {
	b, _ := json.Marshal(s)
	var v any
	_ = json.Unmarshal(b, &v)
	return v
}

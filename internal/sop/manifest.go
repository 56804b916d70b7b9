package sop

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/pelletier/go-toml/v2"
)

// manifestTOML is SOP.toml as upstream's SopManifest reads it. Pointers tell an absent key from a zero one.
type manifestTOML struct {
	Sop       *metaTOML       `toml:"sop"`
	Triggers  []triggerFields `toml:"triggers"`
	Positions []positionTOML  `toml:"positions"`
	Steps     []stepTOML      `toml:"steps"`
}

type metaTOML struct {
	Name                *string          `toml:"name"`
	Description         *string          `toml:"description"`
	Version             *string          `toml:"version"`
	Priority            *Priority        `toml:"priority"`
	ExecutionMode       *ExecutionMode   `toml:"execution_mode"`
	CooldownSecs        uint64           `toml:"cooldown_secs"`
	MaxConcurrent       *uint32          `toml:"max_concurrent"`
	Deterministic       bool             `toml:"deterministic"`
	AdmissionPolicy     *AdmissionPolicy `toml:"admission_policy"`
	MaxPendingApprovals uint32           `toml:"max_pending_approvals"`
	Agent               *string          `toml:"agent"`
}

type positionTOML struct {
	Step uint32  `toml:"step"`
	X    float64 `toml:"x"`
	Y    float64 `toml:"y"`
}

type stepTOML struct {
	Number               uint32         `toml:"number"`
	Title                string         `toml:"title"`
	Body                 string         `toml:"body"`
	SuggestedTools       []string       `toml:"suggested_tools"`
	RequiresConfirmation bool           `toml:"requires_confirmation"`
	Kind                 *StepKind      `toml:"kind"`
	Schema               *schemaTOML    `toml:"schema"`
	Scope                *scopeTOML     `toml:"scope"`
	Routing              *routingTOML   `toml:"routing"`
	OnFailure            any            `toml:"on_failure"`
	Mode                 *ExecutionMode `toml:"mode"`
	Calls                []callTOML     `toml:"calls"`
	Pos                  *Pos           `toml:"pos"`
	Agent                *string        `toml:"agent"`
	Capability           *string        `toml:"capability"`
	With                 any            `toml:"with"`
	Policy               *string        `toml:"policy"`
	GatePrompt           *string        `toml:"gate_prompt"`
	Edit                 *string        `toml:"edit"`
}

type schemaTOML struct {
	Input  any `toml:"input"`
	Output any `toml:"output"`
}

type scopeTOML struct {
	Allow *[]string `toml:"allow"`
	Deny  []string  `toml:"deny"`
}

type routingTOML struct {
	When      *string      `toml:"when"`
	Next      *uint32      `toml:"next"`
	Terminal  bool         `toml:"terminal"`
	DependsOn []uint32     `toml:"depends_on"`
	Switch    []switchTOML `toml:"switch"`
}

type switchTOML struct {
	Name string  `toml:"name"`
	When *string `toml:"when"`
	Goto *uint32 `toml:"goto"`
}

type callTOML struct {
	Tool   *string `toml:"tool"`
	Args   any     `toml:"args"`
	Pinned any     `toml:"pinned"`
}

// Issue is one finding about a SOP file, with the line it is on when known (0: the whole file).
type Issue struct {
	File    string `json:"file"`
	Line    int    `json:"line,omitempty"`
	Message string `json:"message"`
}

func (i Issue) String() string {
	if i.Line > 0 {
		return fmt.Sprintf("%s:%d: %s", i.File, i.Line, i.Message)
	}
	return i.File + ": " + i.Message
}

// parseManifest decodes SOP.toml. Unknown keys are warnings (with their line), never fatal; a type or
// shape error is the returned Issue. file names the file in the issues.
func parseManifest(file string, data []byte) (manifestTOML, []Issue, *Issue) {
	var m manifestTOML
	var warnings []Issue
	dec := toml.NewDecoder(bytes.NewReader(data)).DisallowUnknownFields()
	err := dec.Decode(&m)
	var strict *toml.StrictMissingError
	if errors.As(err, &strict) {
		for _, e := range strict.Errors {
			row, _ := e.Position()
			warnings = append(warnings, Issue{File: file, Line: row, Message: fmt.Sprintf("unknown field `%s` ignored", strings.Join(e.Key(), "."))})
		}
		// The strict decode stops at the first unknown key on some shapes; decode again leniently.
		m = manifestTOML{}
		err = toml.NewDecoder(bytes.NewReader(data)).Decode(&m)
	}
	if err != nil {
		var de *toml.DecodeError
		if errors.As(err, &de) {
			row, _ := de.Position()
			return m, warnings, &Issue{File: file, Line: row, Message: de.Error()}
		}
		return m, warnings, &Issue{File: file, Message: err.Error()}
	}
	if m.Sop == nil {
		return m, warnings, &Issue{File: file, Message: "missing table `[sop]`"}
	}
	if m.Sop.Name == nil {
		return m, warnings, &Issue{File: file, Line: lineOf(data, "[sop]"), Message: "[sop]: missing field `name`"}
	}
	if m.Sop.Description == nil {
		return m, warnings, &Issue{File: file, Line: lineOf(data, "[sop]"), Message: "[sop]: missing field `description`"}
	}
	return m, warnings, nil
}

// lineOf is the 1-based line of the first line whose trimmed text starts with prefix (0: none).
func lineOf(data []byte, prefix string) int {
	n := 0
	for l := range strings.Lines(string(data)) {
		n++
		if strings.HasPrefix(strings.TrimSpace(l), prefix) {
			return n
		}
	}
	return 0
}

// nthLine is the line of the n-th (0-based) line starting with prefix, such as the n-th "[[triggers]]".
func nthLine(data []byte, prefix string, idx int) int {
	n, seen := 0, 0
	for l := range strings.Lines(string(data)) {
		n++
		if strings.HasPrefix(strings.TrimSpace(l), prefix) {
			if seen == idx {
				return n
			}
			seen++
		}
	}
	return 0
}

// toJSON turns a decoded TOML value into JSON (nil stays absent).
func toJSON(v any) (json.RawMessage, error) {
	if v == nil {
		return nil, nil
	}
	return json.Marshal(v)
}

func (s stepTOML) toStep() (Step, error) {
	st := Step{Number: s.Number, Title: s.Title, Body: s.Body, SuggestedTools: s.SuggestedTools,
		RequiresConfirmation: s.RequiresConfirmation, Kind: KindExecute, Pos: s.Pos}
	if s.Kind != nil {
		st.Kind = *s.Kind
	}
	if s.Mode != nil {
		st.Mode = *s.Mode
	}
	str := func(p *string) string {
		if p == nil {
			return ""
		}
		return *p
	}
	st.Agent, st.Capability, st.Policy, st.GatePrompt, st.Edit = str(s.Agent), str(s.Capability), str(s.Policy), str(s.GatePrompt), str(s.Edit)
	var err error
	if st.With, err = toJSON(s.With); err != nil {
		return st, fmt.Errorf("with: %w", err)
	}
	if s.Schema != nil {
		st.Schema = &StepSchema{}
		if st.Schema.Input, err = toJSON(s.Schema.Input); err != nil {
			return st, err
		}
		if st.Schema.Output, err = toJSON(s.Schema.Output); err != nil {
			return st, err
		}
	}
	if s.Scope != nil {
		st.Scope = &ToolScope{Deny: s.Scope.Deny}
		if s.Scope.Allow != nil {
			st.Scope.Allow = *s.Scope.Allow
			if st.Scope.Allow == nil {
				st.Scope.Allow = []string{}
			}
		}
	}
	if r := s.Routing; r != nil {
		st.Routing = Routing{When: str(r.When), Next: r.Next, Terminal: r.Terminal, DependsOn: r.DependsOn}
		for _, sw := range r.Switch {
			st.Routing.Switch = append(st.Routing.Switch, SwitchRule{Name: sw.Name, When: str(sw.When), Goto: sw.Goto})
		}
	}
	if s.OnFailure != nil {
		b, _ := json.Marshal(s.OnFailure)
		if err := json.Unmarshal(b, &st.OnFailure); err != nil {
			return st, err
		}
	}
	for i, c := range s.Calls {
		if c.Tool == nil {
			return st, fmt.Errorf("calls[%d]: missing field `tool`", i)
		}
		pc := PlannedCall{Tool: *c.Tool}
		if pc.Args, err = toJSON(c.Args); err != nil {
			return st, err
		}
		if pc.Pinned, err = toJSON(c.Pinned); err != nil {
			return st, err
		}
		st.Calls = append(st.Calls, pc)
	}
	return st, nil
}

// encodeManifest writes SOP.toml for s as upstream's save does (the [sop] table, [[triggers]], [[positions]]
// and [[steps]]). Steps whose values TOML cannot hold (a JSON null inside `with`) are left to SOP.md alone.
func encodeManifest(s Sop) ([]byte, error) {
	type meta struct {
		Name                string          `toml:"name"`
		Description         string          `toml:"description"`
		Version             string          `toml:"version"`
		Priority            Priority        `toml:"priority"`
		ExecutionMode       ExecutionMode   `toml:"execution_mode"`
		CooldownSecs        uint64          `toml:"cooldown_secs"`
		MaxConcurrent       uint32          `toml:"max_concurrent"`
		Deterministic       bool            `toml:"deterministic"`
		AdmissionPolicy     AdmissionPolicy `toml:"admission_policy"`
		MaxPendingApprovals uint32          `toml:"max_pending_approvals"`
		Agent               string          `toml:"agent,omitempty"`
	}
	type doc struct {
		Sop       meta             `toml:"sop"`
		Triggers  []map[string]any `toml:"triggers,omitempty"`
		Positions []positionTOML   `toml:"positions,omitempty"`
		Steps     []map[string]any `toml:"steps,omitempty"`
	}
	d := doc{Sop: meta{Name: s.Name, Description: s.Description, Version: s.Version, Priority: s.Priority,
		ExecutionMode: s.ExecutionMode, CooldownSecs: s.CooldownSecs, MaxConcurrent: s.MaxConcurrent,
		Deterministic: s.Deterministic, AdmissionPolicy: s.AdmissionPolicy,
		MaxPendingApprovals: s.MaxPendingApprovals, Agent: s.Agent}}
	for _, t := range s.Triggers {
		m := map[string]any{}
		for _, e := range t.fields() {
			if e.v != nil {
				m[e.k] = e.v
			}
		}
		d.Triggers = append(d.Triggers, m)
	}
	for _, st := range s.Steps {
		if st.Pos != nil {
			d.Positions = append(d.Positions, positionTOML{Step: st.Number, X: st.Pos.X, Y: st.Pos.Y})
		}
		b, err := json.Marshal(st)
		if err != nil {
			return nil, err
		}
		m, err := jsonToTOML(b)
		if err != nil {
			return nil, err
		}
		delete(m, "pos") // kept in [[positions]]
		d.Steps = append(d.Steps, m)
	}
	out, err := toml.Marshal(d)
	if err != nil {
		d.Steps = nil
		out, err = toml.Marshal(d)
	}
	return out, err
}

// jsonToTOML decodes a JSON object into TOML-encodable values: integers stay integers, nulls in objects are
// dropped (TOML has no null).
func jsonToTOML(b []byte) (map[string]any, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v map[string]any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	return fixNumbers(v).(map[string]any), nil
}

func fixNumbers(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			if e == nil {
				delete(x, k)
				continue
			}
			x[k] = fixNumbers(e)
		}
		return x
	case []any:
		for i, e := range x {
			x[i] = fixNumbers(e)
		}
		return x
	case json.Number:
		if n, err := x.Int64(); err == nil {
			return n
		}
		f, _ := x.Float64()
		return f
	}
	return v
}

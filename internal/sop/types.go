// Package sop holds standard operating procedure definitions: the types as upstream serializes them, the
// <sops_dir>/<name>/SOP.toml + SOP.md loader and renderer, validation, and the pure rules the engine applies
// (conditions, next-step routing, trigger matching). It runs nothing; internal/sop/engine runs SOPs.
package sop

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// Priority is a SOP's priority (lowercase on the wire).
type Priority string

// Priorities.
const (
	PriorityLow      Priority = "low"
	PriorityNormal   Priority = "normal"
	PriorityHigh     Priority = "high"
	PriorityCritical Priority = "critical"
)

// UnmarshalText refuses a value upstream's serde would refuse.
func (p *Priority) UnmarshalText(b []byte) error {
	switch v := Priority(b); v {
	case PriorityLow, PriorityNormal, PriorityHigh, PriorityCritical:
		*p = v
		return nil
	}
	return fmt.Errorf("unknown priority %q (want low, normal, high or critical)", b)
}

// ExecutionMode is how much autonomy a run has (snake_case on the wire).
type ExecutionMode string

// Execution modes.
const (
	ModeAuto          ExecutionMode = "auto"
	ModeSupervised    ExecutionMode = "supervised"
	ModeStepByStep    ExecutionMode = "step_by_step"
	ModePriorityBased ExecutionMode = "priority_based"
	ModeDeterministic ExecutionMode = "deterministic"
)

// UnmarshalText refuses an unknown mode (serde's enum decoding). SOP.md's `mode:` bullet and the config's
// default_execution_mode are lenient instead: see ParseExecutionMode.
func (m *ExecutionMode) UnmarshalText(b []byte) error {
	switch v := ExecutionMode(b); v {
	case ModeAuto, ModeSupervised, ModeStepByStep, ModePriorityBased, ModeDeterministic:
		*m = v
		return nil
	}
	return fmt.Errorf("unknown execution_mode %q (want auto, supervised, step_by_step, priority_based or deterministic)", b)
}

// ParseExecutionMode reads a mode leniently, as upstream's parse_execution_mode: trimmed, case-insensitive,
// anything unknown is supervised.
func ParseExecutionMode(s string) ExecutionMode {
	switch v := ExecutionMode(lowerTrim(s)); v {
	case ModeAuto, ModeStepByStep, ModePriorityBased, ModeDeterministic:
		return v
	}
	return ModeSupervised
}

// AdmissionPolicy decides what happens to a trigger that cannot be admitted at once.
type AdmissionPolicy string

// Admission policies.
const (
	AdmitParallel AdmissionPolicy = "parallel"
	AdmitHold     AdmissionPolicy = "hold"
	AdmitCoalesce AdmissionPolicy = "coalesce"
	AdmitDrop     AdmissionPolicy = "drop"
)

// UnmarshalText refuses an unknown policy.
func (a *AdmissionPolicy) UnmarshalText(b []byte) error {
	switch v := AdmissionPolicy(b); v {
	case AdmitParallel, AdmitHold, AdmitCoalesce, AdmitDrop:
		*a = v
		return nil
	}
	return fmt.Errorf("unknown admission_policy %q (want parallel, hold, coalesce or drop)", b)
}

// StepKind is execute (the default), checkpoint or capability.
type StepKind string

// Step kinds.
const (
	KindExecute    StepKind = "execute"
	KindCheckpoint StepKind = "checkpoint"
	KindCapability StepKind = "capability"
)

// UnmarshalText refuses an unknown kind (SOP.md's `kind:` bullet is lenient: see parseStepKind).
func (k *StepKind) UnmarshalText(b []byte) error {
	switch v := StepKind(b); v {
	case KindExecute, KindCheckpoint, KindCapability:
		*k = v
		return nil
	}
	return fmt.Errorf("unknown step kind %q (want execute, checkpoint or capability)", b)
}

// Sop is one procedure, as sops/list, sops/get and the gateway send it. Name, description, version,
// priority, execution_mode, triggers and steps are required when one is decoded from JSON.
type Sop struct {
	Name                string          `json:"name"`
	Description         string          `json:"description"`
	Version             string          `json:"version"`
	Priority            Priority        `json:"priority"`
	ExecutionMode       ExecutionMode   `json:"execution_mode"`
	Triggers            []Trigger       `json:"triggers"`
	Steps               []Step          `json:"steps"`
	CooldownSecs        uint64          `json:"cooldown_secs"`
	MaxConcurrent       uint32          `json:"max_concurrent"`
	Deterministic       bool            `json:"deterministic"`
	AdmissionPolicy     AdmissionPolicy `json:"admission_policy"`
	MaxPendingApprovals uint32          `json:"max_pending_approvals"`
	Agent               string          `json:"agent,omitempty"`
	// Location is the SOP's directory when it was loaded from disk (never on the wire).
	Location string `json:"-"`
}

type sopWire Sop

// MarshalJSON sends empty lists as [] (upstream's Vec), never null.
func (s Sop) MarshalJSON() ([]byte, error) {
	w := sopWire(s)
	if w.Triggers == nil {
		w.Triggers = []Trigger{}
	}
	if w.Steps == nil {
		w.Steps = []Step{}
	}
	return json.Marshal(w)
}

// UnmarshalJSON applies upstream's defaults (max_concurrent 1, admission_policy parallel) and refuses a value
// missing a required field, naming it.
func (s *Sop) UnmarshalJSON(b []byte) error {
	var present map[string]json.RawMessage
	if err := json.Unmarshal(b, &present); err != nil {
		return err
	}
	if present == nil {
		return fmt.Errorf("sop: expected an object, got null")
	}
	for _, k := range []string{"name", "description", "version", "priority", "execution_mode", "triggers", "steps"} {
		if v, ok := present[k]; !ok || bytes.Equal(v, []byte("null")) {
			return fmt.Errorf("missing field `%s`", k)
		}
	}
	w := sopWire{MaxConcurrent: 1, AdmissionPolicy: AdmitParallel}
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	*s = Sop(w)
	return nil
}

// Step is one step of a procedure (upstream's SopStep). Number is 1-based.
type Step struct {
	Number               uint32          `json:"number"`
	Title                string          `json:"title"`
	Body                 string          `json:"body"`
	SuggestedTools       []string        `json:"suggested_tools"`
	RequiresConfirmation bool            `json:"requires_confirmation"`
	Kind                 StepKind        `json:"kind"`
	Schema               *StepSchema     `json:"schema,omitempty"`
	Scope                *ToolScope      `json:"scope,omitempty"`
	Routing              Routing         `json:"routing"`
	OnFailure            Failure         `json:"on_failure"`
	Mode                 ExecutionMode   `json:"mode,omitempty"`
	Calls                []PlannedCall   `json:"calls,omitempty"`
	Pos                  *Pos            `json:"pos,omitempty"`
	Agent                string          `json:"agent,omitempty"`
	Capability           string          `json:"capability,omitempty"`
	With                 json.RawMessage `json:"with,omitempty"`
	Policy               string          `json:"policy,omitempty"`
	GatePrompt           string          `json:"gate_prompt,omitempty"`
	Edit                 string          `json:"edit,omitempty"`
}

// stepWire is Step with the fields upstream skips when they hold their default.
type stepWire struct {
	Number               uint32          `json:"number"`
	Title                string          `json:"title"`
	Body                 string          `json:"body"`
	SuggestedTools       []string        `json:"suggested_tools"`
	RequiresConfirmation bool            `json:"requires_confirmation"`
	Kind                 StepKind        `json:"kind"`
	Schema               *StepSchema     `json:"schema,omitempty"`
	Scope                *ToolScope      `json:"scope,omitempty"`
	Routing              *Routing        `json:"routing,omitempty"`
	OnFailure            *Failure        `json:"on_failure,omitempty"`
	Mode                 ExecutionMode   `json:"mode,omitempty"`
	Calls                []PlannedCall   `json:"calls,omitempty"`
	Pos                  *Pos            `json:"pos,omitempty"`
	Agent                string          `json:"agent,omitempty"`
	Capability           string          `json:"capability,omitempty"`
	With                 json.RawMessage `json:"with,omitempty"`
	Policy               string          `json:"policy,omitempty"`
	GatePrompt           string          `json:"gate_prompt,omitempty"`
	Edit                 string          `json:"edit,omitempty"`
}

// MarshalJSON writes the step as upstream's serde does: routing and on_failure only when not the default,
// suggested_tools always (an empty list as []).
func (s Step) MarshalJSON() ([]byte, error) {
	w := stepWire{Number: s.Number, Title: s.Title, Body: s.Body, SuggestedTools: s.SuggestedTools,
		RequiresConfirmation: s.RequiresConfirmation, Kind: s.Kind, Schema: s.Schema, Scope: s.Scope,
		Mode: s.Mode, Calls: s.Calls, Pos: s.Pos, Agent: s.Agent, Capability: s.Capability, With: s.With,
		Policy: s.Policy, GatePrompt: s.GatePrompt, Edit: s.Edit}
	if w.SuggestedTools == nil {
		w.SuggestedTools = []string{}
	}
	if w.Kind == "" {
		w.Kind = KindExecute
	}
	if !s.Routing.IsDefault() {
		r := s.Routing
		w.Routing = &r
	}
	if !s.OnFailure.IsFail() {
		f := s.OnFailure
		w.OnFailure = &f
	}
	return json.Marshal(w)
}

// UnmarshalJSON reads a step with serde's defaults (every field optional; kind execute).
func (s *Step) UnmarshalJSON(b []byte) error {
	var w stepWire
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	*s = Step{Number: w.Number, Title: w.Title, Body: w.Body, SuggestedTools: w.SuggestedTools,
		RequiresConfirmation: w.RequiresConfirmation, Kind: w.Kind, Schema: w.Schema, Scope: w.Scope,
		Mode: w.Mode, Calls: w.Calls, Pos: w.Pos, Agent: w.Agent, Capability: w.Capability, With: w.With,
		Policy: w.Policy, GatePrompt: w.GatePrompt, Edit: w.Edit}
	if isJSONNull(s.With) {
		s.With = nil
	}
	if s.Kind == "" {
		s.Kind = KindExecute
	}
	if w.Routing != nil {
		s.Routing = *w.Routing
	}
	if w.OnFailure != nil {
		s.OnFailure = *w.OnFailure
	}
	return nil
}

// EffectiveAgent is the agent that runs the step: its own override, else the SOP's agent (may be "").
func (s Step) EffectiveAgent(parent string) string {
	if s.Agent != "" {
		return s.Agent
	}
	return parent
}

// EffectiveScope is the step's tool scope with suggested_tools as the allow-list when allow is absent; nil
// when the step names neither.
func (s Step) EffectiveScope() *ToolScope {
	var sc *ToolScope
	if s.Scope != nil {
		c := *s.Scope
		sc = &c
	}
	if len(s.SuggestedTools) > 0 {
		if sc == nil {
			sc = &ToolScope{}
		}
		if sc.Allow == nil {
			sc.Allow = append([]string(nil), s.SuggestedTools...)
		}
	}
	return sc
}

// StepSchema is a step's input and output JSON-Schema fragments (a compact subset, see ValidateValue).
type StepSchema struct {
	Input  json.RawMessage `json:"input,omitempty"`
	Output json.RawMessage `json:"output,omitempty"`
}

// ToolScope limits the tools of a step: Allow nil means every tool; Deny always applies.
type ToolScope struct {
	Allow []string `json:"allow,omitempty"`
	Deny  []string `json:"deny,omitempty"`
}

// MarshalJSON keeps an explicitly empty allow-list (allow nothing) distinct from an absent one.
func (t ToolScope) MarshalJSON() ([]byte, error) {
	type w struct {
		Allow *[]string `json:"allow,omitempty"`
		Deny  []string  `json:"deny,omitempty"`
	}
	out := w{Deny: t.Deny}
	if t.Allow != nil {
		a := t.Allow
		out.Allow = &a
	}
	return json.Marshal(out)
}

// UnmarshalJSON keeps "allow": [] as an empty, non-nil list.
func (t *ToolScope) UnmarshalJSON(b []byte) error {
	var in struct {
		Allow *[]string `json:"allow"`
		Deny  []string  `json:"deny"`
	}
	if err := json.Unmarshal(b, &in); err != nil {
		return err
	}
	t.Deny = in.Deny
	t.Allow = nil
	if in.Allow != nil {
		t.Allow = *in.Allow
		if t.Allow == nil {
			t.Allow = []string{}
		}
	}
	return nil
}

// Routing is a step's conditional routing; the zero value is linear execution.
type Routing struct {
	When      string       `json:"when,omitempty"`
	Next      *uint32      `json:"next,omitempty"`
	Terminal  bool         `json:"terminal,omitempty"`
	DependsOn []uint32     `json:"depends_on,omitempty"`
	Switch    []SwitchRule `json:"switch,omitempty"`
}

// IsDefault reports whether r is linear routing (upstream skips it on the wire then).
func (r Routing) IsDefault() bool {
	return r.When == "" && r.Next == nil && !r.Terminal && len(r.DependsOn) == 0 && len(r.Switch) == 0
}

// SwitchRule is one port of a switch: the first whose When holds (empty = catch-all) is followed to Goto.
type SwitchRule struct {
	Name string  `json:"name"`
	When string  `json:"when,omitempty"`
	Goto *uint32 `json:"goto,omitempty"`
}

// FailureAction is what a failed step does.
type FailureAction string

// Failure actions.
const (
	FailRun   FailureAction = "fail"
	FailRetry FailureAction = "retry"
	FailGoto  FailureAction = "goto"
)

// Failure is a step's on_failure: "fail" | {"retry":{"max":N}} | {"goto":{"step":N}} on the wire.
type Failure struct {
	Action FailureAction
	Max    uint32 // retry
	Step   uint32 // goto
}

// IsFail reports whether f is the default (fail the run).
func (f Failure) IsFail() bool { return f.Action == "" || f.Action == FailRun }

// MarshalJSON writes serde's externally tagged form.
func (f Failure) MarshalJSON() ([]byte, error) {
	switch f.Action {
	case FailRetry:
		return json.Marshal(map[string]map[string]uint32{"retry": {"max": f.Max}})
	case FailGoto:
		return json.Marshal(map[string]map[string]uint32{"goto": {"step": f.Step}})
	}
	return []byte(`"fail"`), nil
}

// UnmarshalJSON reads serde's externally tagged form and refuses anything else.
func (f *Failure) UnmarshalJSON(b []byte) error {
	var s string
	if json.Unmarshal(b, &s) == nil {
		if s != "fail" {
			return fmt.Errorf("on_failure: unknown variant %q (want \"fail\", {\"retry\":{\"max\":N}} or {\"goto\":{\"step\":N}})", s)
		}
		*f = Failure{Action: FailRun}
		return nil
	}
	var m map[string]struct {
		Max  *uint32 `json:"max"`
		Step *uint32 `json:"step"`
	}
	if err := json.Unmarshal(b, &m); err != nil || len(m) != 1 {
		return fmt.Errorf("on_failure: want \"fail\", {\"retry\":{\"max\":N}} or {\"goto\":{\"step\":N}}")
	}
	if r, ok := m["retry"]; ok && r.Max != nil {
		*f = Failure{Action: FailRetry, Max: *r.Max}
		return nil
	}
	if g, ok := m["goto"]; ok && g.Step != nil {
		*f = Failure{Action: FailGoto, Step: *g.Step}
		return nil
	}
	return fmt.Errorf("on_failure: want \"fail\", {\"retry\":{\"max\":N}} or {\"goto\":{\"step\":N}}")
}

// PlannedCall is an authored tool call of a step; string leaves of Args may hold {{steps.N.x}} or
// {{calls.K.x}} bindings.
type PlannedCall struct {
	Tool   string          `json:"tool"`
	Args   json.RawMessage `json:"args"`
	Pinned json.RawMessage `json:"pinned,omitempty"`
}

// MarshalJSON sends absent args as null, as serde's default Value does.
func (c PlannedCall) MarshalJSON() ([]byte, error) {
	type w PlannedCall
	out := w(c)
	if len(out.Args) == 0 {
		out.Args = json.RawMessage("null")
	}
	if isJSONNull(out.Pinned) {
		out.Pinned = nil
	}
	return json.Marshal(out)
}

// Pos is a step node's canvas coordinate.
type Pos struct {
	X float64 `json:"x"`
	Y float64 `json:"y"`
}

// Event is one trigger event from outside (MQTT, a file change, a cron window, a webhook, the CLI). Key
// identifies the delivery: the engine admits at most one run per (Source, Key), so a redelivered message
// (MQTT QoS 1 with the same message id, a repeated webhook) starts nothing new. Empty Key: no dedup.
type Event struct {
	Source  Source `json:"source"`
	Topic   string `json:"topic,omitempty"`
	Payload string `json:"payload,omitempty"`
	Key     string `json:"key,omitempty"`
	// Fresh says the source knows this delivery is a new event even when its Key was seen before (an MQTT
	// message without DUP: its id is free for reuse once acknowledged): it is admitted, and its run takes
	// the key over, so a later redelivery of it folds into that run.
	Fresh bool `json:"-"`
}

func isJSONNull(b json.RawMessage) bool {
	return len(b) == 0 || bytes.Equal(bytes.TrimSpace(b), []byte("null"))
}

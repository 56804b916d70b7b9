package engine

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
)

// Def is the engine's view of one SOP: upstream's Sop wire JSON (the shape sops/get sends), decoded. The
// engine takes a definition as that JSON so it depends on the format, not on the loader's Go types; a run
// keeps the Def it started with (persisted with it), so a reload never changes a running run.
type Def struct {
	Name                string    `json:"name"`
	Description         string    `json:"description"`
	Version             string    `json:"version"`
	Priority            string    `json:"priority"`       // low | normal | high | critical
	ExecutionMode       string    `json:"execution_mode"` // auto | supervised | step_by_step | priority_based | deterministic
	Triggers            []Trigger `json:"triggers"`
	Steps               []Step    `json:"steps"`
	CooldownSecs        uint64    `json:"cooldown_secs,omitempty"`
	MaxConcurrent       *int      `json:"max_concurrent,omitempty"` // nil = 1
	Deterministic       bool      `json:"deterministic,omitempty"`
	AdmissionPolicy     string    `json:"admission_policy,omitempty"` // parallel | hold | coalesce | drop
	MaxPendingApprovals int       `json:"max_pending_approvals,omitempty"`
	Agent               string    `json:"agent,omitempty"`
}

// Trigger is one [[triggers]] entry, tagged by type.
type Trigger struct {
	Type       string   `json:"type"`
	Topic      string   `json:"topic,omitempty"`
	Path       string   `json:"path,omitempty"`
	Expression string   `json:"expression,omitempty"`
	Condition  string   `json:"condition,omitempty"`
	Events     []string `json:"events,omitempty"`
	RoutingKey string   `json:"routing_key,omitempty"`
	Channel    string   `json:"channel,omitempty"`
	Alias      string   `json:"alias,omitempty"`
}

// Step is one step (upstream's SopStep wire JSON; fields the engine does not act on are kept as raw JSON).
type Step struct {
	Number               int             `json:"number"`
	Title                string          `json:"title"`
	Body                 string          `json:"body"`
	SuggestedTools       []string        `json:"suggested_tools"`
	RequiresConfirmation bool            `json:"requires_confirmation"`
	Kind                 string          `json:"kind"` // execute | checkpoint | capability
	Scope                *Scope          `json:"scope,omitempty"`
	Routing              *Routing        `json:"routing,omitempty"`
	OnFailure            *OnFailure      `json:"on_failure,omitempty"`
	Mode                 string          `json:"mode,omitempty"`
	Agent                string          `json:"agent,omitempty"`
	Capability           string          `json:"capability,omitempty"`
	Policy               string          `json:"policy,omitempty"`
	GatePrompt           string          `json:"gate_prompt,omitempty"`
	Schema               json.RawMessage `json:"schema,omitempty"`
	Calls                json.RawMessage `json:"calls,omitempty"`
	With                 json.RawMessage `json:"with,omitempty"`
	Edit                 json.RawMessage `json:"edit,omitempty"`
	Pos                  json.RawMessage `json:"pos,omitempty"`
}

// Scope is a step's tool allow and deny lists.
type Scope struct {
	Allow []string `json:"allow,omitempty"`
	Deny  []string `json:"deny"`
}

// Routing is a step's guard and jumps (§1.6).
type Routing struct {
	When      string `json:"when,omitempty"`
	Next      *int   `json:"next,omitempty"`
	Terminal  bool   `json:"terminal,omitempty"`
	DependsOn []int  `json:"depends_on,omitempty"`
	Switch    []Port `json:"switch,omitempty"`
}

// Port is one switch branch.
type Port struct {
	Name string `json:"name"`
	When string `json:"when,omitempty"`
	Goto *int   `json:"goto,omitempty"`
}

// OnFailure is "fail" | {"retry":{"max":N}} | {"goto":{"step":N}}.
type OnFailure struct {
	Kind string // fail | retry | goto
	N    int
}

// MarshalJSON writes upstream's shape.
func (f OnFailure) MarshalJSON() ([]byte, error) {
	switch f.Kind {
	case "retry":
		return json.Marshal(map[string]any{"retry": map[string]int{"max": f.N}})
	case "goto":
		return json.Marshal(map[string]any{"goto": map[string]int{"step": f.N}})
	default:
		return []byte(`"fail"`), nil
	}
}

// UnmarshalJSON reads upstream's shape; anything else is fail (as upstream's parser does).
func (f *OnFailure) UnmarshalJSON(b []byte) error {
	var v struct {
		Retry *struct {
			Max int `json:"max"`
		} `json:"retry"`
		Goto *struct {
			Step int `json:"step"`
		} `json:"goto"`
	}
	*f = OnFailure{Kind: "fail"}
	if json.Unmarshal(b, &v) != nil {
		return nil
	}
	switch {
	case v.Retry != nil:
		*f = OnFailure{Kind: "retry", N: v.Retry.Max}
	case v.Goto != nil:
		*f = OnFailure{Kind: "goto", N: v.Goto.Step}
	}
	return nil
}

// DefFromJSON decodes a Sop wire object. It fails when the name is empty.
func DefFromJSON(b []byte) (Def, error) {
	var d Def
	if err := json.Unmarshal(b, &d); err != nil {
		return Def{}, fmt.Errorf("sop engine: definition: %w", err)
	}
	if d.Name == "" {
		return Def{}, fmt.Errorf("sop engine: definition without a name")
	}
	return d, nil
}

// Revision is a content hash of the definition: a run records the revision it started with.
func (d *Def) Revision() string {
	b, _ := json.Marshal(d)
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:8])
}

func (d *Def) maxConcurrent() int {
	if d.MaxConcurrent == nil {
		return 1
	}
	return *d.MaxConcurrent
}

func (d *Def) mode(defaultMode string) string {
	if d.Deterministic {
		return "deterministic"
	}
	if d.ExecutionMode == "" {
		return defaultMode
	}
	return d.ExecutionMode
}

func (d *Def) step(n int) *Step {
	for i := range d.Steps {
		if d.Steps[i].Number == n {
			return &d.Steps[i]
		}
	}
	return nil
}

func (d *Def) hasManual() bool {
	for _, t := range d.Triggers {
		if t.Type == "manual" {
			return true
		}
	}
	return false
}

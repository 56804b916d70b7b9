package sop

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
)

// TriggerNodeBase is the node id of a SOP's first trigger in its graph; trigger i is TriggerNodeBase+i.
const TriggerNodeBase = 1_000_000

// Graph is upstream's SopGraph: the Blueprint editor's projection of a SOP (sops/graph, graph-draft,
// wire-draft).
type Graph struct {
	Nodes       []GraphNode  `json:"nodes"`
	Wires       []GraphWire  `json:"wires"`
	Diagnostics []Diagnostic `json:"diagnostics"`
	Layout      GraphLayout  `json:"layout"`
}

// GraphNode is a step or a trigger node.
type GraphNode struct {
	Step         uint32     `json:"step"`
	Title        string     `json:"title"`
	Kind         string     `json:"kind"` // step | trigger
	Subtitle     string     `json:"subtitle,omitempty"`
	TriggerIndex *uint32    `json:"trigger_index,omitempty"`
	Inputs       []GraphPin `json:"inputs"`
	Outputs      []GraphPin `json:"outputs"`
}

// GraphPin is a flow or data pin.
type GraphPin struct {
	Class    string `json:"class"` // flow | data
	Name     string `json:"name"`
	DataType string `json:"data_type,omitempty"`
	Required bool   `json:"required"`
}

// GraphWire is an edge: flow (with its role) or data (from a binding).
type GraphWire struct {
	Class    string `json:"class"`
	FromStep uint32 `json:"from_step"`
	ToStep   uint32 `json:"to_step"`
	FlowRole string `json:"flow_role,omitempty"` // sequence | dependency | failure | switch | trigger
	FromPin  string `json:"from_pin,omitempty"`
	ToPin    string `json:"to_pin,omitempty"`
}

// GraphLayout places the nodes on a grid (col = longest flow path from an entry).
type GraphLayout struct {
	Positions []NodePosition `json:"positions"`
	Columns   uint32         `json:"columns"`
	Rows      uint32         `json:"rows"`
	Geometry  LayoutGeometry `json:"geometry"`
}

// NodePosition is one node's grid cell, and its authored canvas coordinate when it has one.
type NodePosition struct {
	Step uint32   `json:"step"`
	Col  uint32   `json:"col"`
	Row  uint32   `json:"row"`
	X    *float64 `json:"x,omitempty"`
	Y    *float64 `json:"y,omitempty"`
}

// LayoutGeometry is the canvas metrics clients draw the grid with.
type LayoutGeometry struct {
	NodeW  float64 `json:"node_w"`
	NodeH  float64 `json:"node_h"`
	ColGap float64 `json:"col_gap"`
	RowGap float64 `json:"row_gap"`
	Origin float64 `json:"origin"`
}

// CanonicalGeometry is upstream's layout geometry.
var CanonicalGeometry = LayoutGeometry{NodeW: 210, NodeH: 84, ColGap: 130, RowGap: 46, Origin: 24}

// ToolSpec is what a graph needs of a tool to type a planned call's pins: its parameters and output schemas.
type ToolSpec struct {
	Parameters json.RawMessage
	Output     json.RawMessage
}

// Legend is upstream's GraphLegend (GET /api/sops/graph-legend).
type Legend struct {
	FlowRoles  []LegendEntry `json:"flow_roles"`
	PinClasses []LegendEntry `json:"pin_classes"`
	RunStates  []LegendEntry `json:"run_states"`
}

// LegendEntry is one legend row.
type LegendEntry struct {
	Key         string `json:"key"`
	Label       string `json:"label"`
	Description string `json:"description"`
}

// CanonicalLegend is the legend every graph client shows.
func CanonicalLegend() Legend {
	return Legend{
		FlowRoles: []LegendEntry{
			{"sequence", "next step", "Implicit fallthrough or explicit routing.next."},
			{"dependency", "waits for", "routing.depends_on fan-in: source must complete before target runs."},
			{"failure", "on failure", "on_failure: goto recovery edge."},
			{"switch", "branch", "Named conditional port from routing.switch."},
			{"trigger", "trigger", "Derived from the SOP's triggers; read-only, never hand-wired."},
		},
		PinClasses: []LegendEntry{
			{"flow", "flow", "Execution-order edge: which step runs after which."},
			{"data", "data", "Typed data edge derived from a {{steps.N}} binding."},
		},
		RunStates: []LegendEntry{
			{"pending", "pending", "Not reached yet (or the run ended before reaching it)."},
			{"active", "running", "The run's current step while the run is live."},
			{"completed", "done", "The step finished successfully."},
			{"failed", "failed", "The step errored and did not complete."},
			{"skipped", "skipped", "The step was routed around and never ran."},
		},
	}
}

// BuildGraph projects s as upstream's SopGraph::from_sop_with_specs; specs (may be nil) type the pins of
// planned calls.
func BuildGraph(s Sop, specs map[string]ToolSpec) Graph {
	g := Graph{Nodes: []GraphNode{}, Wires: []GraphWire{}, Diagnostics: []Diagnostic{}}
	valid := map[uint32]bool{}
	for _, st := range s.Steps {
		g.Nodes = append(g.Nodes, stepNode(st, specs))
		valid[st.Number] = true
	}
	flow := func(from, to uint32, role, fromPin string) {
		g.Wires = append(g.Wires, GraphWire{Class: "flow", FromStep: from, ToStep: to, FlowRole: role, FromPin: fromPin})
	}
	for i, st := range s.Steps {
		hasSwitch := len(st.Routing.Switch) > 0
		switch {
		case hasSwitch:
		case st.Routing.Next != nil:
			if valid[*st.Routing.Next] {
				flow(st.Number, *st.Routing.Next, "sequence", "")
			}
		case !st.Routing.Terminal && i+1 < len(s.Steps):
			flow(st.Number, s.Steps[i+1].Number, "sequence", "")
		}
		for _, d := range st.Routing.DependsOn {
			if valid[d] {
				flow(d, st.Number, "dependency", "")
			}
		}
		if st.OnFailure.Action == FailGoto && valid[st.OnFailure.Step] {
			flow(st.Number, st.OnFailure.Step, "failure", "")
		}
		for _, r := range st.Routing.Switch {
			if r.Goto != nil && valid[*r.Goto] {
				flow(st.Number, *r.Goto, "switch", r.Name)
			}
		}
	}
	inbound := map[uint32]bool{}
	for _, w := range g.Wires {
		inbound[w.ToStep] = true
	}
	var entries []uint32
	for _, st := range s.Steps {
		if !inbound[st.Number] {
			entries = append(entries, st.Number)
		}
	}
	if len(entries) == 0 && len(s.Steps) > 0 {
		entries = []uint32{s.Steps[0].Number}
	}
	for i, t := range s.Triggers {
		idx := uint32(i)
		title := string(t.Type)
		if t.Type == SourceChannel {
			title = t.Channel
		}
		id := TriggerNodeBase + idx
		g.Nodes = append(g.Nodes, GraphNode{Step: id, Title: title, Kind: "trigger", Subtitle: t.Label(), TriggerIndex: &idx,
			Inputs: []GraphPin{}, Outputs: []GraphPin{{Class: "flow", Name: "event"}}})
		for _, e := range entries {
			flow(id, e, "trigger", "event")
		}
	}
	g.Diagnostics = append(g.Diagnostics, graphDiagnostics(s)...)
	g.dataWires(s)
	g.Layout = layout(g.Nodes, g.Wires)
	for _, st := range s.Steps {
		if st.Pos == nil {
			continue
		}
		for i := range g.Layout.Positions {
			if g.Layout.Positions[i].Step == st.Number {
				x, y := st.Pos.X, st.Pos.Y
				g.Layout.Positions[i].X, g.Layout.Positions[i].Y = &x, &y
			}
		}
	}
	return g
}

func stepNode(st Step, specs map[string]ToolSpec) GraphNode {
	n := GraphNode{Step: st.Number, Title: st.Title, Kind: "step", Inputs: []GraphPin{{Class: "flow", Name: "in"}}}
	if len(st.Routing.Switch) == 0 {
		n.Outputs = []GraphPin{{Class: "flow", Name: "out"}}
	} else {
		for _, r := range st.Routing.Switch {
			n.Outputs = append(n.Outputs, GraphPin{Class: "flow", Name: r.Name})
		}
	}
	for i, c := range st.Calls {
		spec, ok := specs[c.Tool]
		if !ok {
			continue
		}
		prefix := fmt.Sprintf("calls.%d", i)
		n.Inputs = append(n.Inputs, fieldPins(spec.Parameters, prefix)...)
		if !isJSONNull(spec.Output) {
			n.Outputs = append(n.Outputs, GraphPin{Class: "data", Name: prefix, DataType: schemaType(spec.Output)})
		}
	}
	if st.Schema != nil {
		if !isJSONNull(st.Schema.Input) {
			n.Inputs = append(n.Inputs, GraphPin{Class: "data", Name: "input", DataType: schemaType(st.Schema.Input), Required: schemaRequired(st.Schema.Input)})
		}
		if !isJSONNull(st.Schema.Output) {
			n.Outputs = append(n.Outputs, GraphPin{Class: "data", Name: "output", DataType: schemaType(st.Schema.Output), Required: schemaRequired(st.Schema.Output)})
		}
	}
	return n
}

func schemaType(frag json.RawMessage) string {
	var s string
	if json.Unmarshal(frag, &s) == nil {
		return s
	}
	var o struct {
		Type string `json:"type"`
	}
	_ = json.Unmarshal(frag, &o)
	return o.Type
}

// schemaRequired reads a boolean "required" of a fragment; absent (or a list) means required.
func schemaRequired(frag json.RawMessage) bool {
	var o map[string]json.RawMessage
	if json.Unmarshal(frag, &o) != nil {
		return true
	}
	var b bool
	if r, ok := o["required"]; ok && json.Unmarshal(r, &b) == nil {
		return b
	}
	return true
}

func fieldPins(schema json.RawMessage, prefix string) []GraphPin {
	var o struct {
		Properties map[string]json.RawMessage `json:"properties"`
		Required   []string                   `json:"required"`
	}
	if json.Unmarshal(schema, &o) != nil {
		return nil
	}
	if o.Properties == nil {
		return []GraphPin{{Class: "data", Name: prefix, DataType: schemaType(schema), Required: schemaRequired(schema)}}
	}
	req := map[string]bool{}
	for _, r := range o.Required {
		req[r] = true
	}
	names := make([]string, 0, len(o.Properties))
	for k := range o.Properties {
		names = append(names, k)
	}
	sort.Strings(names)
	var out []GraphPin
	for _, k := range names {
		out = append(out, GraphPin{Class: "data", Name: prefix + "." + k, DataType: schemaType(o.Properties[k]), Required: req[k]})
	}
	return out
}

// dataWires adds a data wire per {{steps.N...}} binding of a planned call, and the binding diagnostics.
func (g *Graph) dataWires(s Sop) {
	byStep := map[uint32]*GraphNode{}
	for i := range g.Nodes {
		byStep[g.Nodes[i].Step] = &g.Nodes[i]
	}
	for _, st := range s.Steps {
		for ci, c := range st.Calls {
			for _, b := range Bindings(c.Args) {
				if b.Reason != "" {
					g.Diagnostics = append(g.Diagnostics, Diagnostic{Severity: SeverityError, Step: st.Number,
						Message: fmt.Sprintf("malformed binding `%s`: %s", b.Raw, b.Reason)})
					continue
				}
				if b.Calls {
					continue
				}
				prod, ok := byStep[b.Index]
				if !ok {
					g.Diagnostics = append(g.Diagnostics, Diagnostic{Severity: SeverityError, Step: st.Number,
						Message: fmt.Sprintf("binding references step %d which does not exist", b.Index)})
					continue
				}
				fromPin := fmt.Sprintf("steps.%d", b.Index)
				var first *GraphPin
				for i := range prod.Outputs {
					p := &prod.Outputs[i]
					if p.Class != "data" {
						continue
					}
					if first == nil {
						first = p
					}
					if b.Path == p.Name || strings.HasPrefix(b.Path, p.Name+".") {
						first = p
						break
					}
				}
				if first != nil {
					fromPin = first.Name
				}
				toPin := fmt.Sprintf("calls.%d", ci)
				if b.ArgPath != "" {
					toPin += "." + b.ArgPath
				}
				g.Wires = append(g.Wires, GraphWire{Class: "data", FromStep: b.Index, ToStep: st.Number, FromPin: fromPin, ToPin: toPin})
			}
		}
	}
}

func layout(nodes []GraphNode, wires []GraphWire) GraphLayout {
	preds := map[uint32][]uint32{}
	for _, w := range wires {
		if w.Class == "flow" {
			preds[w.ToStep] = append(preds[w.ToStep], w.FromStep)
		}
	}
	col := map[uint32]uint32{}
	var resolve func(uint32, map[uint32]bool) uint32
	resolve = func(step uint32, seen map[uint32]bool) uint32 {
		if c, ok := col[step]; ok {
			return c
		}
		if seen[step] {
			return 0
		}
		seen[step] = true
		var c uint32
		for _, p := range preds[step] {
			if v := resolve(p, seen) + 1; v > c {
				c = v
			}
		}
		delete(seen, step)
		col[step] = c
		return c
	}
	ordered := make([]uint32, 0, len(nodes))
	for _, n := range nodes {
		ordered = append(ordered, n.Step)
	}
	sort.Slice(ordered, func(i, j int) bool { return ordered[i] < ordered[j] })
	for _, s := range ordered {
		resolve(s, map[uint32]bool{})
	}
	l := GraphLayout{Positions: []NodePosition{}, Geometry: CanonicalGeometry}
	rowBy := map[uint32]uint32{}
	for _, s := range ordered {
		c := col[s]
		r := rowBy[c]
		l.Positions = append(l.Positions, NodePosition{Step: s, Col: c, Row: r})
		l.Columns = max(l.Columns, c+1)
		l.Rows = max(l.Rows, r+1)
		rowBy[c] = r + 1
	}
	return l
}

// MaxSwitchPorts bounds the switch ports a wire edit may create.
const MaxSwitchPorts = 256

// WireEdit is a Blueprint editor gesture: connect or disconnect from → to in a flow role (port: a switch
// port index).
type WireEdit struct {
	Op   string `json:"op"`   // connect | disconnect
	From uint32 `json:"from"` //
	To   uint32 `json:"to"`
	Role string `json:"role"` // sequence | dependency | failure | switch | trigger
	Port *int   `json:"port,omitempty"`
}

// UnmarshalJSON refuses an unknown op or role, and a missing from, to or role, as serde does.
func (w *WireEdit) UnmarshalJSON(b []byte) error {
	var in struct {
		Op   *string `json:"op"`
		From *uint32 `json:"from"`
		To   *uint32 `json:"to"`
		Role *string `json:"role"`
		Port *int    `json:"port"`
	}
	if err := json.Unmarshal(b, &in); err != nil {
		return err
	}
	for _, f := range []struct {
		name string
		ok   bool
	}{{"op", in.Op != nil}, {"from", in.From != nil}, {"to", in.To != nil}, {"role", in.Role != nil}} {
		if !f.ok {
			return fmt.Errorf("missing field `%s`", f.name)
		}
	}
	switch *in.Op {
	case "connect", "disconnect":
	default:
		return fmt.Errorf("unknown variant `%s`, expected `connect` or `disconnect`", *in.Op)
	}
	switch *in.Role {
	case "sequence", "dependency", "failure", "switch", "trigger":
	default:
		return fmt.Errorf("unknown variant `%s`, expected one of `sequence`, `dependency`, `failure`, `switch`, `trigger`", *in.Role)
	}
	if in.Port != nil && *in.Port < 0 {
		return fmt.Errorf("invalid value: integer `%d`, expected usize", *in.Port)
	}
	*w = WireEdit{Op: *in.Op, From: *in.From, To: *in.To, Role: *in.Role, Port: in.Port}
	return nil
}

// ApplyWire writes a wire edit back into the draft's routing, as upstream's apply_wire.
func ApplyWire(s *Sop, e WireEdit) error {
	if e.Role == "trigger" {
		return errorf(ErrInvalid, "trigger edges are derived from the SOP's triggers and cannot be wired by hand")
	}
	from, to := s.stepByNumber(e.From), s.stepByNumber(e.To)
	if from == nil {
		return errorf(ErrInvalid, "step %d does not exist", e.From)
	}
	if to == nil {
		return errorf(ErrInvalid, "step %d does not exist", e.To)
	}
	if e.From == e.To {
		return errorf(ErrInvalid, "step %d cannot wire to itself", e.From)
	}
	connect := e.Op == "connect"
	switch e.Role {
	case "sequence":
		if connect {
			n := e.To
			from.Routing.Next, from.Routing.Terminal = &n, false
		} else {
			if from.Routing.Next != nil && *from.Routing.Next == e.To {
				from.Routing.Next = nil
			}
			from.Routing.Terminal = true
		}
	case "dependency":
		has := false
		var keep []uint32
		for _, d := range to.Routing.DependsOn {
			if d == e.From {
				has = true
				if !connect {
					continue
				}
			}
			keep = append(keep, d)
		}
		if connect && !has {
			keep = append(keep, e.From)
		}
		to.Routing.DependsOn = keep
	case "failure":
		if connect {
			from.OnFailure = Failure{Action: FailGoto, Step: e.To}
		} else if from.OnFailure.Action == FailGoto && from.OnFailure.Step == e.To {
			from.OnFailure = Failure{Action: FailRun}
		}
	case "switch":
		if e.Port == nil {
			return errorf(ErrInvalid, "switch edge requires a port index")
		}
		p := *e.Port
		if p >= MaxSwitchPorts {
			return errorf(ErrInvalid, "switch port %d out of range", p)
		}
		if connect {
			for len(from.Routing.Switch) <= p {
				from.Routing.Switch = append(from.Routing.Switch, SwitchRule{})
			}
			n := e.To
			from.Routing.Switch[p].Goto = &n
		} else {
			if p >= len(from.Routing.Switch) {
				return errorf(ErrInvalid, "switch port %d out of range", p)
			}
			if g := from.Routing.Switch[p].Goto; g != nil && *g == e.To {
				from.Routing.Switch[p].Goto = nil
			}
		}
	}
	return nil
}

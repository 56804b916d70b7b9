package sop

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestSopJSONShapeIsUpstreams(t *testing.T) {
	cond := "$.value > 85"
	s := Sop{Name: "hello", Description: "Say hello", Version: "0.1.0", Priority: PriorityNormal,
		ExecutionMode: ModeSupervised, MaxConcurrent: 1, AdmissionPolicy: AdmitParallel,
		Triggers: []Trigger{{Type: SourceManual}, {Type: SourceMQTT, Topic: "alerts/+/cpu", Condition: &cond},
			{Type: SourceFilesystem, Path: "/in"}, {Type: SourceCron, Expression: "0 * * * *"}},
		Steps: []Step{{Number: 1, Title: "Greet", Body: "Greet the operator.", Kind: KindExecute}}}
	got, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"name":"hello","description":"Say hello","version":"0.1.0","priority":"normal","execution_mode":"supervised",` +
		`"triggers":[{"type":"manual"},{"type":"mqtt","topic":"alerts/+/cpu","condition":"$.value \u003e 85"},` +
		`{"type":"filesystem","path":"/in","events":[],"condition":null},{"type":"cron","expression":"0 * * * *"}],` +
		`"steps":[{"number":1,"title":"Greet","body":"Greet the operator.","suggested_tools":[],"requires_confirmation":false,"kind":"execute"}],` +
		`"cooldown_secs":0,"max_concurrent":1,"deterministic":false,"admission_policy":"parallel","max_pending_approvals":0}`
	if string(got) != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
	var back Sop
	if err := json.Unmarshal(got, &back); err != nil {
		t.Fatal(err)
	}
	again, _ := json.Marshal(back)
	if string(again) != want {
		t.Fatalf("round trip changed it:\n%s", again)
	}
}

func TestSopJSONDecodeDefaultsAndRequiredFields(t *testing.T) {
	var s Sop
	in := `{"name":"a","description":"d","version":"1","priority":"high","execution_mode":"auto","triggers":[],"steps":[{"title":"x"}]}`
	if err := json.Unmarshal([]byte(in), &s); err != nil {
		t.Fatal(err)
	}
	if s.MaxConcurrent != 1 || s.AdmissionPolicy != AdmitParallel || s.Steps[0].Kind != KindExecute || !s.Steps[0].OnFailure.IsFail() {
		t.Fatalf("defaults not applied: %+v", s)
	}
	for _, c := range []struct{ in, want string }{
		{`{"description":"d","version":"1","priority":"high","execution_mode":"auto","triggers":[],"steps":[]}`, "missing field `name`"},
		{`{"name":"a","description":"d","version":"1","priority":"urgent","execution_mode":"auto","triggers":[],"steps":[]}`, `unknown priority "urgent"`},
		{`{"name":"a","description":"d","version":"1","priority":"low","execution_mode":"auto","triggers":[{"type":"mqtt"}],"steps":[]}`, "missing field `topic`"},
		{`{"name":"a","description":"d","version":"1","priority":"low","execution_mode":"auto","triggers":[{"type":"smoke"}],"steps":[]}`, `unknown trigger type "smoke"`},
		{`{"name":"a","description":"d","version":"1","priority":"low","execution_mode":"auto","triggers":[],"steps":[{"on_failure":"explode"}]}`, "on_failure"},
		{`null`, "expected an object"},
	} {
		var s Sop
		err := json.Unmarshal([]byte(c.in), &s)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err %v, want %q", c.in, err, c.want)
		}
	}
}

func TestStepJSONKeepsEveryField(t *testing.T) {
	next, g := uint32(3), uint32(2)
	st := Step{Number: 1, Title: "T", Body: "B", SuggestedTools: []string{"shell"}, RequiresConfirmation: true,
		Kind: KindCapability, Schema: &StepSchema{Output: json.RawMessage(`{"type":"object"}`)},
		Scope:     &ToolScope{Allow: []string{}, Deny: []string{"web"}},
		Routing:   Routing{When: "$.steps.1.ok == true", Next: &next, Terminal: true, DependsOn: []uint32{1}, Switch: []SwitchRule{{Name: "a", When: "x", Goto: &g}}},
		OnFailure: Failure{Action: FailRetry, Max: 2}, Mode: ModeAuto,
		Calls: []PlannedCall{{Tool: "shell", Args: json.RawMessage(`{"cmd":"{{steps.1.x}}"}`)}},
		Pos:   &Pos{X: 1.5, Y: 2}, Agent: "ops", Capability: "noop", With: json.RawMessage(`{"a":1}`),
		Policy: "prod", GatePrompt: "Approve {{path}}?", Edit: "body"}
	b, err := json.Marshal(st)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{`"on_failure":{"retry":{"max":2}}`, `"scope":{"allow":[],"deny":["web"]}`, `"with":{"a":1}`,
		`"gate_prompt":"Approve {{path}}?"`, `"routing":{"when":`, `"pos":{"x":1.5,"y":2}`, `"calls":[{"tool":"shell","args":{"cmd":"{{steps.1.x}}"}}]`} {
		if !strings.Contains(string(b), k) {
			t.Errorf("missing %s in %s", k, b)
		}
	}
	var back Step
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	b2, _ := json.Marshal(back)
	if string(b) != string(b2) {
		t.Fatalf("round trip:\n%s\n%s", b, b2)
	}
	g2, _ := json.Marshal(Failure{Action: FailGoto, Step: 4})
	if string(g2) != `{"goto":{"step":4}}` {
		t.Fatal(string(g2))
	}
}

func TestEffectiveScopeAndAgent(t *testing.T) {
	st := Step{SuggestedTools: []string{"shell"}}
	if sc := st.EffectiveScope(); sc == nil || len(sc.Allow) != 1 || sc.Allow[0] != "shell" {
		t.Fatalf("suggested tools are the allow-list: %+v", sc)
	}
	st.Scope = &ToolScope{Allow: []string{"read_file"}}
	if sc := st.EffectiveScope(); sc.Allow[0] != "read_file" {
		t.Fatalf("explicit allow wins: %+v", sc)
	}
	if (Step{}).EffectiveScope() != nil {
		t.Fatal("no scope without tools")
	}
	if (Step{Agent: "a"}).EffectiveAgent("p") != "a" || (Step{}).EffectiveAgent("p") != "p" {
		t.Fatal("effective agent")
	}
}

func TestGraphProjection(t *testing.T) {
	s := allFieldsSop()
	g := BuildGraph(s, map[string]ToolSpec{"shell": {Parameters: json.RawMessage(`{"type":"object","properties":{"cmd":{"type":"string"}},"required":["cmd"]}`)}})
	if len(g.Nodes) != 5 || g.Nodes[3].Kind != "trigger" || g.Nodes[3].Step != TriggerNodeBase || g.Nodes[4].Subtitle != "filesystem:/in/*.csv" {
		t.Fatalf("nodes: %+v", g.Nodes)
	}
	var roles []string
	var data *GraphWire
	for i, w := range g.Wires {
		roles = append(roles, w.FlowRole)
		if w.Class == "data" {
			data = &g.Wires[i]
		}
	}
	got := strings.Join(roles, ",")
	if got != "sequence,sequence,dependency,failure,switch,trigger,trigger," {
		t.Fatalf("wire roles: %s", got)
	}
	if data == nil || data.FromStep != 1 || data.ToStep != 2 || data.FromPin != "output" || data.ToPin != "calls.0.cmd" {
		t.Fatalf("data wire: %+v", data)
	}
	in := g.Nodes[1].Inputs
	if len(in) < 2 || in[1].Name != "calls.0.cmd" || in[1].DataType != "string" || !in[1].Required {
		t.Fatalf("typed pins: %+v", in)
	}
	if len(g.Diagnostics) != 1 || g.Diagnostics[0].Message != "switch port 'rest' has no target" || g.Layout.Columns == 0 || g.Layout.Positions[1].X == nil || *g.Layout.Positions[1].X != 3 {
		t.Fatalf("diagnostics %+v layout %+v", g.Diagnostics, g.Layout)
	}
	// Wire edits as upstream's apply_wire.
	d := allFieldsSop()
	if err := ApplyWire(&d, WireEdit{Op: "connect", From: 1, To: 3, Role: "sequence"}); err != nil || *d.Steps[0].Routing.Next != 3 {
		t.Fatalf("connect sequence: %v %+v", err, d.Steps[0].Routing)
	}
	if err := ApplyWire(&d, WireEdit{Op: "disconnect", From: 1, To: 2, Role: "dependency"}); err != nil || len(d.Steps[1].Routing.DependsOn) != 0 {
		t.Fatalf("disconnect dependency: %v %+v", err, d.Steps[1].Routing)
	}
	p := 4
	if err := ApplyWire(&d, WireEdit{Op: "connect", From: 3, To: 2, Role: "switch", Port: &p}); err != nil || len(d.Steps[2].Routing.Switch) != 5 || *d.Steps[2].Routing.Switch[4].Goto != 2 {
		t.Fatalf("connect switch port: %v %+v", err, d.Steps[2].Routing.Switch)
	}
	for _, bad := range []WireEdit{{Op: "connect", From: 1, To: 1, Role: "sequence"}, {Op: "connect", From: 1, To: 9, Role: "failure"},
		{Op: "connect", From: 1, To: 2, Role: "switch"}, {Op: "connect", From: 1, To: 2, Role: "trigger"}} {
		if err := ApplyWire(&d, bad); err == nil {
			t.Errorf("%+v accepted", bad)
		}
	}
}

package tools

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

// fakeExternal stands for an MCP tool set (the real one, internal/mcp, is tested against real servers).
type fakeExternal struct{ risk map[string]Risk }

func (f fakeExternal) Specs() []Spec {
	var out []Spec
	for _, n := range []string{"srv__read", "srv__write", "shell"} {
		if _, ok := f.risk[n]; ok {
			out = append(out, Spec{Name: n, Parameters: json.RawMessage(`{}`)})
		}
	}
	return out
}
func (f fakeExternal) Risk(name string) (Risk, bool) { r, ok := f.risk[name]; return r, ok }
func (f fakeExternal) Call(_ context.Context, c Call, _ int) Result {
	return Result{Output: "called " + c.Name}
}

// An external (MCP) tool is offered, decided by its configured risk under each level, admitted by a non-empty
// allowed_tools as upstream does for <server>__<tool> names, removed by excluded_tools, and run by Execute;
// a built-in name is never shadowed by one.
func TestExternalToolsPolicy(t *testing.T) {
	ext := fakeExternal{risk: map[string]Risk{"srv__read": RiskLow, "srv__write": RiskMedium, "shell": RiskLow}}
	env := Env{External: ext}
	names := func(p Policy) (out []string) {
		for _, s := range p.Offered(SpecsFor(env)) {
			out = append(out, s.Name)
		}
		return out
	}
	p := Policy{Level: LevelSupervised, External: ext}
	if got := names(p); !slices.Contains(got, "srv__read") || !slices.Contains(got, "srv__write") {
		t.Fatalf("offered %v", got)
	}
	if n := len(slices.DeleteFunc(names(p), func(n string) bool { return n != "shell" })); n != 1 {
		t.Fatalf("shell offered %d times: an external tool shadows a built-in", n)
	}
	call := func(name string) Call { return Call{Name: name, Arguments: json.RawMessage(`{}`)} }
	for _, c := range []struct {
		level Level
		name  string
		want  Verdict
	}{
		{LevelSupervised, "srv__read", Run}, {LevelSupervised, "srv__write", Ask},
		{LevelReadOnly, "srv__read", Run}, {LevelReadOnly, "srv__write", Refuse}, {LevelFull, "srv__write", Run},
		{LevelSupervised, "srv__nosuch", Refuse},
	} {
		p := Policy{Level: c.level, External: ext}
		if d := p.Decide(call(c.name), t.TempDir()); d.Verdict != c.want {
			t.Errorf("%s %s: %v (%s), want %v", c.level, c.name, d.Verdict, d.Reason, c.want)
		}
	}
	auto := Policy{Level: LevelSupervised, External: ext, AutoApprove: []string{"srv__write"}}
	if d := auto.Decide(call("srv__write"), ""); d.Verdict != Run {
		t.Errorf("auto_approve: %v", d.Verdict)
	}
	allowed := Policy{Level: LevelFull, External: ext, AllowedTools: []string{"time"}}
	if got := names(allowed); !slices.Equal(got, []string{"time", "srv__read", "srv__write"}) {
		t.Errorf("allowed_tools = [time]: offered %v (MCP names are admitted as upstream)", got)
	}
	excluded := Policy{Level: LevelFull, External: ext, ExcludedTools: []string{"srv__write"}}
	if d := excluded.Decide(call("srv__write"), ""); d.Verdict != Refuse || slices.Contains(names(excluded), "srv__write") {
		t.Errorf("excluded: %v", d)
	}
	if d := p.Decide(Call{Name: "srv__read", Arguments: json.RawMessage(`[1]`)}, ""); d.Verdict != Refuse || !strings.Contains(d.Reason, "JSON object") {
		t.Errorf("bad args: %+v", d)
	}
	env.Policy = Policy{Level: LevelFull, External: ext}
	if r := Execute(context.Background(), env, call("srv__read")); r.Output != "called srv__read" {
		t.Errorf("Execute: %+v", r)
	}
	if r := Execute(context.Background(), Env{Policy: Policy{Level: LevelFull}}, call("srv__read")); !r.IsError {
		t.Errorf("Execute without the set: %+v", r)
	}
}

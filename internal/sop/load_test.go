package sop

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

const fullTOML = `[sop]
name = "deploy-prod"
description = "Production deploy with approval"
version = "1.0.0"
priority = "high"
execution_mode = "step_by_step"
cooldown_secs = 600
max_concurrent = 1
admission_policy = "hold"
max_pending_approvals = 8
agent = "ops"
[[triggers]]
type = "mqtt"
topic = "alerts/+/cpu"
condition = "$.value > 85"
[[triggers]]
type = "manual"
[[positions]]
step = 2
x = 10.5
y = 20
`

const fullMD = `# Deploy

Intro text that is not a step.

## Steps
1. **Classify** — Inspect the payload.
   - output: {"type":"object","required":["severity"],"properties":{"severity":{"type":"string"}}}
   - switch: crit>$.steps.1.severity == "critical">3; rest>>2
7. **Summarize** — Build the plan.
   More detail on a second line.
   - on_failure: retry:2
   - terminal: true
   - a bullet that is no key
2. **Apply** — Run the fix.
   - tools: shell
   - deny-tools: web
   - requires_confirmation: true
   - policy: prod
   - on_failure: goto:4
4. **Notify** — Tell on-call.
   - kind: approval
   - prompt: Ship {{version}}?
   - edit: body
   - mode: bogus
   - call: {"tool":"http_request","args":{"url":"{{steps.1.url}}"}}
   - call: {not json}

## Notes
9. **Not a step** — outside the section.
`

func writeSOP(t *testing.T, dir, name, toml, md string) {
	t.Helper()
	d := filepath.Join(dir, name)
	if err := os.MkdirAll(d, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(d, ManifestFile), []byte(toml), 0o600); err != nil {
		t.Fatal(err)
	}
	if md != "" {
		if err := os.WriteFile(filepath.Join(d, StepsFile), []byte(md), 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

func TestLoadFullExample(t *testing.T) {
	dir := t.TempDir()
	writeSOP(t, dir, "deploy-prod", fullTOML, fullMD)
	c := LoadDir(dir, LoadOptions{})
	if len(c.Disabled) != 0 || len(c.Sops) != 1 {
		t.Fatalf("disabled %+v", c.Disabled)
	}
	s := c.Sops[0]
	if s.Name != "deploy-prod" || s.Priority != PriorityHigh || s.ExecutionMode != ModeStepByStep || s.CooldownSecs != 600 ||
		s.AdmissionPolicy != AdmitHold || s.MaxPendingApprovals != 8 || s.Agent != "ops" || len(s.Triggers) != 2 {
		t.Fatalf("meta: %+v", s)
	}
	if s.Triggers[0].Topic != "alerts/+/cpu" || s.Triggers[0].ConditionText() != "$.value > 85" || s.Triggers[1].Type != SourceManual {
		t.Fatalf("triggers: %+v", s.Triggers)
	}
	if len(s.Steps) != 4 {
		t.Fatalf("steps: %d", len(s.Steps))
	}
	for i, st := range s.Steps {
		if st.Number != uint32(i+1) {
			t.Fatalf("numbered by position: %+v", st)
		}
	}
	s1, s2, s3, s4 := s.Steps[0], s.Steps[1], s.Steps[2], s.Steps[3]
	if s1.Title != "Classify" || s1.Body != "Inspect the payload." || len(s1.Routing.Switch) != 2 ||
		s1.Routing.Switch[0].When != `$.steps.1.severity == "critical"` || *s1.Routing.Switch[0].Goto != 3 ||
		s1.Routing.Switch[1].When != "" || *s1.Routing.Switch[1].Goto != 2 || !strings.Contains(string(s1.Schema.Output), `"required":["severity"]`) {
		t.Fatalf("step 1: %+v", s1)
	}
	if s2.Body != "Build the plan.\nMore detail on a second line.\n- a bullet that is no key" || s2.OnFailure != (Failure{Action: FailRetry, Max: 2}) ||
		!s2.Routing.Terminal || s2.Pos == nil || s2.Pos.X != 10.5 {
		t.Fatalf("step 2: %+v body %q", s2, s2.Body)
	}
	if len(s3.SuggestedTools) != 1 || s3.Scope.Deny[0] != "web" || !s3.RequiresConfirmation || s3.Policy != "prod" || s3.OnFailure != (Failure{Action: FailGoto, Step: 4}) {
		t.Fatalf("step 3: %+v", s3)
	}
	if s4.Kind != KindCheckpoint || s4.GatePrompt != "Ship {{version}}?" || s4.Edit != "body" || s4.Mode != ModeSupervised || len(s4.Calls) != 1 || s4.Calls[0].Tool != "http_request" {
		t.Fatalf("step 4: %+v", s4)
	}
}

func TestLoadDefaultsAndTOMLSteps(t *testing.T) {
	dir := t.TempDir()
	writeSOP(t, dir, "hello", "[sop]\nname = \"hello\"\ndescription = \"Say hello\"\n[[triggers]]\ntype = \"manual\"\n"+
		"[[steps]]\nbody = \"first\"\n[[steps]]\nnumber = 5\nkind = \"capability\"\ncapability = \"noop\"\non_failure = { retry = { max = 3 } }\nwith = { input = 1 }\n"+
		"[[steps]]\ntitle = \"Gate\"\nkind = \"checkpoint\"\n", "")
	writeSOP(t, dir, "det", "[sop]\nname = \"det\"\ndescription = \"d\"\nexecution_mode = \"auto\"\ndeterministic = true\n", "")
	c := LoadDir(dir, LoadOptions{DefaultMode: ModeAuto})
	if len(c.Disabled) != 0 {
		t.Fatalf("%+v", c.Disabled)
	}
	det, _ := c.Get("det")
	if det.ExecutionMode != ModeDeterministic {
		t.Fatalf("deterministic forces the mode: %s", det.ExecutionMode)
	}
	h, ok := c.Get("hello")
	if !ok || h.Version != "0.1.0" || h.Priority != PriorityNormal || h.MaxConcurrent != 1 || h.ExecutionMode != ModeAuto || h.AdmissionPolicy != AdmitParallel {
		t.Fatalf("defaults: %+v", h)
	}
	if len(h.Steps) != 3 || h.Steps[0].Number != 1 || h.Steps[0].Title != "execute" || h.Steps[1].Number != 5 || h.Steps[1].Title != "noop" ||
		h.Steps[1].OnFailure != (Failure{Action: FailRetry, Max: 3}) || string(h.Steps[1].With) != `{"input":1}` || h.Steps[2].Kind != KindCheckpoint {
		t.Fatalf("toml steps: %+v", h.Steps)
	}
	if c.Sops[0].Name != "det" {
		t.Fatal("sorted by name")
	}
}

func TestLoadBrokenSOPIsDisabledWithItsReason(t *testing.T) {
	dir := t.TempDir()
	writeSOP(t, dir, "good", "[sop]\nname = \"good\"\ndescription = \"d\"\ncolour = \"blue\"\n[[triggers]]\ntype = \"manual\"\nextra = 1\n", "")
	writeSOP(t, dir, "syntax", "[sop\nname=", "")
	writeSOP(t, dir, "nodesc", "[sop]\nname = \"x\"\n", "")
	writeSOP(t, dir, "badprio", "[sop]\nname = \"x\"\ndescription = \"d\"\npriority = \"urgent\"\n", "")
	writeSOP(t, dir, "badtrig", "[sop]\nname = \"x\"\ndescription = \"d\"\n[[triggers]]\ntype = \"manual\"\n[[triggers]]\ntype = \"mqtt\"\n", "")
	writeSOP(t, dir, "badcap", "[sop]\nname = \"x\"\ndescription = \"d\"\n", "## Steps\n1. **A**\n   - kind: capability\n   - capability: rm.rf\n")
	if err := os.MkdirAll(filepath.Join(dir, "no-manifest"), 0o700); err != nil {
		t.Fatal(err)
	}
	c := LoadDir(dir, LoadOptions{})
	if len(c.Sops) != 1 || c.Sops[0].Name != "good" {
		t.Fatalf("sops %+v", c.Sops)
	}
	reasons := map[string]string{}
	for _, d := range c.Disabled {
		reasons[filepath.Base(d.Dir)] = d.Reason
	}
	for name, want := range map[string]string{
		"syntax":  "SOP.toml:1:",
		"nodesc":  "missing field `description`",
		"badprio": `SOP.toml:4: `,
		"badtrig": "SOP.toml:6: triggers[1]: trigger type \"mqtt\": missing field `topic`",
		"badcap":  "unknown capability 'rm.rf'",
	} {
		if !strings.Contains(reasons[name], want) {
			t.Errorf("%s: reason %q, want it to contain %q", name, reasons[name], want)
		}
	}
	if len(c.Disabled) != 5 {
		t.Errorf("disabled: %+v", c.Disabled)
	}
	var warned []string
	for _, w := range c.Warnings {
		warned = append(warned, w.String())
	}
	joined := strings.Join(warned, "\n")
	if !strings.Contains(joined, "SOP.toml:4: unknown field `sop.colour` ignored") || !strings.Contains(joined, "SOP.toml:7: unknown field `triggers.extra` ignored") {
		t.Fatalf("warnings: %s", joined)
	}
}

func TestLoadIsConfinedAndBounded(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("symlinks need privileges on windows")
	}
	dir, outside := t.TempDir(), t.TempDir()
	writeSOP(t, outside, "evil", "[sop]\nname = \"evil\"\ndescription = \"d\"\n", "")
	if err := os.Symlink(filepath.Join(outside, "evil"), filepath.Join(dir, "evil")); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "leak"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(outside, "evil", ManifestFile), filepath.Join(dir, "leak", ManifestFile)); err != nil {
		t.Fatal(err)
	}
	writeSOP(t, dir, "inner", "[sop]\nname = \"inner\"\ndescription = \"d\"\n", "")
	if err := os.Symlink("inner", filepath.Join(dir, "alias")); err != nil {
		t.Fatal(err)
	}
	writeSOP(t, dir, "huge", "[sop]\nname = \"huge\"\ndescription = \""+strings.Repeat("x", MaxFileBytes)+"\"\n", "")
	c := LoadDir(dir, LoadOptions{})
	for _, s := range c.Sops {
		if s.Name == "evil" {
			t.Fatal("a symlink out of the SOPs directory was followed")
		}
	}
	if len(c.Sops) != 2 { // inner, and alias (a link that stays inside)
		t.Fatalf("sops: %+v", c.Sops)
	}
	got := map[string]string{}
	for _, d := range c.Disabled {
		got[filepath.Base(d.Dir)] = d.Reason
	}
	if got["evil"] == "" || got["leak"] == "" || !strings.Contains(got["huge"], "larger than") {
		t.Fatalf("disabled: %+v", c.Disabled)
	}
	if _, _, err := LoadOne(dir, "../x", LoadOptions{}); !errors.Is(err, ErrInvalidName) {
		t.Fatalf("bad name: %v", err)
	}
	if _, _, err := LoadOne(dir, "absent", LoadOptions{}); !errors.Is(err, ErrNotFound) {
		t.Fatalf("absent: %v", err)
	}
	if _, _, err := LoadOne(dir, "inner", LoadOptions{}); err != nil {
		t.Fatal(err)
	}
	if c := LoadDir(filepath.Join(dir, "nope"), LoadOptions{}); len(c.Sops)+len(c.Disabled) != 0 {
		t.Fatal("a missing directory is an empty catalog")
	}
}

func TestCheckNameAndResolveDir(t *testing.T) {
	for _, bad := range []string{"", ".", "..", "a/b", `a\b`, "a\x00b", "/abs"} {
		if CheckName(bad) == nil {
			t.Errorf("%q accepted", bad)
		}
	}
	if err := CheckName("deploy-prod"); err != nil {
		t.Fatal(err)
	}
	root := filepath.FromSlash("/srv/install")
	for in, want := range map[string]string{
		"":            filepath.Join(root, "shared", "sops"),
		"   ":         filepath.Join(root, "shared", "sops"),
		"shared/sops": filepath.Join(root, "shared", "sops"),
		"custom":      filepath.Join(root, "custom"),
		"~/sops":      filepath.Join(filepath.FromSlash("/home/u"), "sops"),
	} {
		if got := ResolveDir(root, in, filepath.FromSlash("/home/u")); got != want {
			t.Errorf("ResolveDir(%q) = %s, want %s", in, got, want)
		}
	}
	if runtime.GOOS != "windows" {
		if got := ResolveDir(root, "/abs/sops", ""); got != "/abs/sops" {
			t.Fatal(got)
		}
	}
}

// allFieldsSop has a step with every field set, including the ones upstream's renderer drops.
func allFieldsSop() Sop {
	return Sop{Name: "rt", Description: "round trip", Version: "1.2.3", Priority: PriorityCritical,
		ExecutionMode: ModePriorityBased, CooldownSecs: 5, MaxConcurrent: 2, AdmissionPolicy: AdmitCoalesce,
		MaxPendingApprovals: 3, Agent: "ops", Triggers: []Trigger{{Type: SourceManual}, {Type: SourceFilesystem, Path: "/in/*.csv", Events: []FSEvent{FSCreated}}},
		Steps: []Step{
			{Number: 1, Title: "Fetch", Body: "Get it.\nSecond line.", Kind: KindExecute, SuggestedTools: []string{"http_request"},
				Schema: &StepSchema{Output: json.RawMessage(`{"type":"object","properties":{"url":{"type":"string"}}}`)},
				Calls:  []PlannedCall{{Tool: "http_request", Args: json.RawMessage(`{"url":"https://x"}`), Pinned: json.RawMessage(`{"status":200}`)}}},
			{Number: 2, Title: "Build", Kind: KindCapability, Capability: "json.validate", With: json.RawMessage(`{"schema":{"type":"object"}}`),
				Policy: "prod", GatePrompt: "Approve {{url}}?", Edit: "body", Agent: "builder", Mode: ModeAuto,
				Scope:     &ToolScope{Allow: []string{"read_file"}, Deny: []string{"shell"}},
				Routing:   Routing{When: "$.steps.1.url != x", Next: u(3), DependsOn: []uint32{1}},
				OnFailure: Failure{Action: FailGoto, Step: 3}, Pos: &Pos{X: 3, Y: 4}, RequiresConfirmation: true,
				Calls: []PlannedCall{{Tool: "shell", Args: json.RawMessage(`{"cmd":"echo {{steps.1.url}}"}`)}}},
			{Number: 3, Title: "Gate", Kind: KindCheckpoint, Routing: Routing{Terminal: true, Switch: []SwitchRule{{Name: "ok", When: "$.steps.2.ok == true", Goto: u(1)}, {Name: "rest"}}},
				OnFailure: Failure{Action: FailRetry, Max: 1}, Edit: "summary"},
		}}
}

// Regression for upstream's render_steps, which writes no kind: capability, capability, with, policy, prompt
// or edit bullets: saving through RPC or HTTP silently dropped a step's approval policy (the gate became
// unpoliced) and turned capability steps into execute. Here save → load keeps every field.
func TestSaveLoadRoundTripsEveryStepField(t *testing.T) {
	dir := t.TempDir()
	want := allFieldsSop()
	if _, err := Create(dir, want); err != nil {
		t.Fatal(err)
	}
	got, warns, err := LoadOne(dir, "rt", LoadOptions{})
	if err != nil || len(warns) != 0 {
		t.Fatalf("load: %v %v", err, warns)
	}
	a, _ := json.Marshal(want)
	b, _ := json.Marshal(got)
	if string(a) != string(b) {
		t.Fatalf("save → load changed the SOP:\nwant %s\n got %s", a, b)
	}
	// Without SOP.md the [[steps]] of SOP.toml carry the same steps.
	if err := os.Remove(filepath.Join(dir, "rt", StepsFile)); err != nil {
		t.Fatal(err)
	}
	got2, _, err := LoadOne(dir, "rt", LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if c, _ := json.Marshal(got2); !jsonEqual(c, a) {
		t.Fatalf("SOP.toml steps differ:\nwant %s\n got %s", a, c)
	}
}

func TestSaveRefusesAndWritesNothing(t *testing.T) {
	dir := t.TempDir()
	s := allFieldsSop()
	s.Steps[2].Number = 2 // duplicate numbers are not renumbered, so the dangling next stays
	s.Steps[1].Routing.Next = u(9)
	_, err := Save(dir, s)
	var rej *Rejected
	if !errors.As(err, &rej) || err.Error() != "SOP rejected: Duplicate step number 2; Step 2: next target step 9 does not exist; Step 2: on_failure goto target step 3 does not exist" {
		t.Fatalf("err %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "rt")); !errors.Is(err, os.ErrNotExist) {
		t.Fatal("a refused save wrote something")
	}
	for _, bad := range []func(*Sop){
		func(s *Sop) { s.Steps[0].Title = "a ** b" },
		func(s *Sop) { s.Steps[0].Body = "x\n- tools: shell" },
		func(s *Sop) { s.Steps[0].Body = "x\n2. **Injected**" },
		func(s *Sop) { s.Steps[0].Title = "" },
		func(s *Sop) { s.Steps[1].Calls[0].Args = json.RawMessage(`{"cmd":"{{steps.3.x}}"}`) },
		func(s *Sop) { s.Steps[1].Calls[0].Args = json.RawMessage(`{"cmd":"{{nope.1}}"}`) },
		func(s *Sop) { s.Name = "../escape" },
		func(s *Sop) { s.Steps[1].Capability = "made.up" },
	} {
		s := allFieldsSop()
		bad(&s)
		if _, err := Save(dir, s); err == nil {
			t.Errorf("saved %+v", s.Steps)
		}
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Fatalf("left behind: %v", entries)
	}
}

func TestCreateSaveDelete(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "sops")
	s := allFieldsSop()
	if _, err := Create(dir, s); err != nil {
		t.Fatal(err)
	}
	if _, err := Create(dir, s); !errors.Is(err, ErrAlreadyExists) {
		t.Fatalf("second create: %v", err)
	}
	s.Description = "changed"
	s.Steps = s.Steps[1:] // renumbered 1..2; the refs to the dropped step go
	s.Steps[0].Calls = nil
	if _, err := Save(dir, s); err != nil {
		t.Fatal(err)
	}
	got, _, err := LoadOne(dir, "rt", LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got.Description != "changed" || len(got.Steps) != 2 || got.Steps[0].Number != 1 || got.Steps[0].Routing.Next == nil || *got.Steps[0].Routing.Next != 2 ||
		len(got.Steps[0].Routing.DependsOn) != 0 || got.Steps[0].OnFailure.Step != 2 || got.Steps[1].Routing.Switch[0].Goto != nil {
		t.Fatalf("renumbered: %+v", got.Steps)
	}
	if err := Delete(dir, "rt"); err != nil {
		t.Fatal(err)
	}
	if err := Delete(dir, "rt"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("second delete: %v", err)
	}
	if err := Delete(dir, ".."); !errors.Is(err, ErrInvalidName) {
		t.Fatalf("bad name: %v", err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Fatalf("left behind: %v", entries)
	}
}

func jsonEqual(a, b []byte) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	ca, _ := json.Marshal(x)
	cb, _ := json.Marshal(y)
	return string(ca) == string(cb)
}

// A save cut short after its journal (the crash point between the two files) is the new SOP whole, to the
// loader at once and on disk after Recover; a create cut short before its rename is nothing.
func TestSaveJournalAndRecover(t *testing.T) {
	dir := t.TempDir()
	v1 := allFieldsSop()
	if _, err := Create(dir, v1); err != nil {
		t.Fatal(err)
	}
	v2 := allFieldsSop()
	v2.Description = "second"
	v2.Steps = v2.Steps[:1]
	v2.Steps[0].Calls = nil
	_, manifest, md, err := prepare(v2)
	if err != nil {
		t.Fatal(err)
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	j, _ := json.Marshal(journal{TOML: string(manifest), MD: string(md)})
	if err := os.WriteFile(filepath.Join(dir, "rt", JournalFile), j, 0o600); err != nil { // as commitSave leaves it
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dir, stagingPrefix+"dead"), 0o700); err != nil {
		t.Fatal(err)
	}
	writeSOP(t, dir, stagingPrefix+"dead", "[sop]\nname = \"ghost\"\ndescription = \"d\"\n", "")
	c := LoadDir(dir, LoadOptions{})
	if len(c.Sops) != 1 || c.Sops[0].Description != "second" || len(c.Sops[0].Steps) != 1 {
		t.Fatalf("the journal is not the SOP: %+v", c.Sops)
	}
	if err := Recover(dir); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "rt", JournalFile)); !os.IsNotExist(err) {
		t.Fatal("the journal was not rolled forward")
	}
	if _, err := os.Stat(filepath.Join(dir, stagingPrefix+"dead")); !os.IsNotExist(err) {
		t.Fatal("a dead create's staging directory was left")
	}
	got, _, err := LoadOne(dir, "rt", LoadOptions{})
	if err != nil || got.Description != "second" || len(got.Steps) != 1 {
		t.Fatalf("after recover: %+v %v", got, err)
	}
	raw, _ := os.ReadFile(filepath.Join(dir, "rt", StepsFile))
	if string(raw) != string(md) {
		t.Fatal("SOP.md is not the saved one")
	}
	// A normal save leaves no journal behind.
	if _, err := Save(dir, v1); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "rt", JournalFile)); !os.IsNotExist(err) {
		t.Fatal("a finished save left its journal")
	}
}

func TestLibraryCheckAndChanged(t *testing.T) {
	dir := t.TempDir()
	var changed []string
	lib := &Library{Dir: func() string { return dir }, Changed: func(n string) { changed = append(changed, n) }}
	writeSOP(t, dir, "warn", "[sop]\nname = \"warn\"\ndescription = \"\"\n", "## Steps\n1. **A** — a\n")
	checks := lib.Check("warn")
	var got []string
	for _, c := range checks {
		got = append(got, c.String())
	}
	joined := strings.Join(got, "\n")
	if !strings.Contains(joined, filepath.Join(dir, "warn", ManifestFile)+":1: warning: SOP description is empty") ||
		!strings.Contains(joined, "warning: SOP has no triggers defined") {
		t.Fatalf("checks: %s", joined)
	}
	if lib.Check("../x") != nil {
		t.Fatal("a bad name was checked")
	}
	s := allFieldsSop()
	if _, err := lib.Create(s); err != nil {
		t.Fatal(err)
	}
	if _, err := lib.Save(s, "other"); err == nil || !strings.Contains(err.Error(), "rename not supported") {
		t.Fatalf("rename: %v", err)
	}
	if _, err := lib.Save(s, "rt"); err != nil {
		t.Fatal(err)
	}
	if err := lib.Delete("rt"); err != nil {
		t.Fatal(err)
	}
	if strings.Join(changed, ",") != "rt,rt,rt" {
		t.Fatalf("Changed calls: %v", changed)
	}
	if _, err := lib.Get("rt"); !errors.Is(err, ErrInvalid) || !errors.Is(err, ErrNotFound) || err.Error() != "SOP 'rt': not found" {
		t.Fatalf("get of a deleted SOP: %v", err)
	}
}

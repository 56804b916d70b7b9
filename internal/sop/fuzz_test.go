package sop

import (
	"encoding/json"
	"path/filepath"
	"testing"
)

// FuzzParseSteps: the SOP.md parser never panics, and a step set it read that Validate finds renderable
// comes back the same through RenderSteps → ParseSteps (the round trip a save relies on).
func FuzzParseSteps(f *testing.F) {
	for _, seed := range []string{fullMD, "## Steps\n1. **A** — a\n", "## steps\n1. x\n- with: {\"a\":[1,2]}\n- call: {\"tool\":\"t\",\"args\":null}\n",
		"## Steps\n1. **A**\n   - switch: a>$.x == 1>2; b>>\n   - on_failure: retry 3\n   - allow-tools:\n2. **B** - - body\n",
		"## Steps\n1. **A** ** b\n   - - tools: x\n12. ** **\n## Other\n3. **C**\n"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, md string) {
		steps := ParseSteps(md)
		for _, st := range steps {
			if roundTripProblem(st) != "" {
				return
			}
		}
		again := ParseSteps(RenderSteps(steps))
		a, _ := json.Marshal(steps)
		b, _ := json.Marshal(again)
		if !jsonEqual(a, b) {
			t.Fatalf("render → parse changed the steps:\n%s\n%s", a, b)
		}
		_ = Validate(Sop{Name: "f", Steps: steps})
		_ = BuildGraph(Sop{Name: "f", Steps: steps}, nil)
	})
}

// FuzzLoadManifest: any SOP.toml (with any SOP.md) loads or is refused with a reason, never a panic; what
// loads survives its wire JSON unchanged.
func FuzzLoadManifest(f *testing.F) {
	f.Add(fullTOML, fullMD)
	f.Add("[sop]\nname = \"a\"\ndescription = \"d\"\n[[steps]]\non_failure = { goto = { step = 1 } }\nwith = [1, {a = 2}]\n", "")
	f.Add("[sop]\nname = \"a\"\ndescription = \"d\"\n[[triggers]]\ntype = \"filesystem\"\npath = \"/x\"\nevents = [\"created\", \"nope\"]\n", "")
	f.Add("[sop]\nname = 1\n", "## Steps\n")
	f.Fuzz(func(t *testing.T, manifest, md string) {
		if len(manifest) > MaxFileBytes || len(md) > MaxFileBytes {
			return
		}
		dir := t.TempDir()
		writeSOP(t, dir, "s", manifest, md)
		s, _, err := LoadOne(dir, "s", LoadOptions{})
		if err != nil {
			return
		}
		b, err := json.Marshal(s)
		if err != nil {
			t.Fatalf("a loaded SOP does not marshal: %v", err)
		}
		var back Sop
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatalf("its wire JSON does not decode: %v\n%s", err, b)
		}
		b2, _ := json.Marshal(back)
		if string(b) != string(b2) {
			t.Fatalf("wire round trip:\n%s\n%s", b, b2)
		}
		_ = Validate(s)
		_, _, _ = CheckPath(filepath.Join(dir, "s"), LoadOptions{})
	})
}

// FuzzEvalCondition: conditions never panic on any expression and payload.
func FuzzEvalCondition(f *testing.F) {
	f.Add("$.value > 85", `{"value":90}`)
	f.Add("> 0", "3")
	f.Add(`$.a.0.b == "x"`, `{"a":[{"b":"x"}]}`)
	f.Fuzz(func(t *testing.T, cond, payload string) {
		_ = EvalCondition(cond, &payload)
		_ = FSPathMatches(cond, payload)
		_ = MQTTTopicMatches(cond, payload)
		_ = AMQPKeyMatches(cond, payload)
	})
}

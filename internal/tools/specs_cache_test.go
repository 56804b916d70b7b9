package tools

import (
	"testing"
)

// The built-in specs are built once and shared; every caller still owns the slice it is given, so reordering or
// overwriting one result leaves the next call's answer as it was.
func TestSpecsForCallerOwnsTheSlice(t *testing.T) {
	first := SpecsFor(Env{})
	want := first[0].Name
	first[0] = Spec{Name: "overwritten"}
	if got := SpecsFor(Env{})[0].Name; got != want {
		t.Fatalf("a caller's write to its result changed the next call: first spec %q, want %q", got, want)
	}
	sorted := baseSpecs()
	sorted[0], sorted[1] = sorted[1], sorted[0]
	if got := baseSpecs()[0].Name; got != want {
		t.Fatalf("reordering baseSpecs' result changed the shared list: first spec %q, want %q", got, want)
	}
}

// SpecsFor runs at every model request of every turn: it makes the one slice it returns and nothing else.
func TestSpecsForAllocatesOnlyItsResult(t *testing.T) {
	SpecsFor(Env{}) // build the fixed lists
	if n := testing.AllocsPerRun(100, func() { _ = SpecsFor(Env{}) }); n > 1 {
		t.Fatalf("SpecsFor made %.0f allocations per call, want 1 (the returned slice)", n)
	}
}

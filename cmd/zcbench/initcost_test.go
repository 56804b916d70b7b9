package main

import (
	"testing"
)

// Package initialisation of the built binary stays within issue 29's budget of 2,000 allocations (a
// package-level regexp with a {1,128} repetition alone cost 1,700: compile such things on first use).
func TestInitAllocations(t *testing.T) {
	const target = 2000
	c, err := measureInit(testBinary)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("package init: %d allocations, %d bytes over %d packages (target ≤ %d allocations)", c.allocs, c.bytes, len(c.pkgs), target)
	for _, p := range c.pkgs[:min(8, len(c.pkgs))] {
		t.Logf("  %6d allocs %8d bytes  %s", p.allocs, p.bytes, p.pkg)
	}
	if c.allocs > target {
		t.Errorf("package init makes %d allocations, over the target of %d (costliest listed above)", c.allocs, target)
	}
}

func TestParseInitTrace(t *testing.T) {
	trace := "init internal/bytealg @0.002 ms, 0 ms clock, 0 bytes, 0 allocs\n" +
		"init example.com/a @1.0 ms, 0.20 ms clock, 119344 bytes, 1707 allocs\n" +
		"zeroclaw 1.2.3\n" +
		"init example.com/b @1.3 ms, 0.01 ms clock, 100 bytes, 3 allocs\n"
	c, err := parseInitTrace([]byte(trace))
	if err != nil {
		t.Fatal(err)
	}
	if c.allocs != 1710 || c.bytes != 119444 || len(c.pkgs) != 3 || c.pkgs[0].pkg != "example.com/a" {
		t.Errorf("parsed %+v", c)
	}
	if _, err := parseInitTrace([]byte("no trace here\n")); err == nil {
		t.Error("a run without inittrace lines was accepted")
	}
}

package main

import (
	"debug/elf"
	"os"
	"runtime"
	"slices"
	"strings"
	"testing"
)

// The README's build command is the one zcbench builds with, so the measured binary is the one a user builds.
func TestReadmeBuildCommandIsZcbenchs(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, after, ok := strings.Cut(string(readme), "To build the binary:\n\n```sh\n")
	if !ok {
		t.Fatal("README.md: no \"To build the binary:\" followed by a sh block")
	}
	line, _, _ := strings.Cut(after, "\n")
	words := shellWords(t, line)
	want := append([]string{buildEnv, "go"}, buildArgs("zeroclaw")...)
	if !slices.Equal(words, want) {
		t.Errorf("README builds with\n  %q\nzcbench with\n  %q", words, want)
	}
	if got := shellWords(t, buildCommand("zeroclaw")); !slices.Equal(got, want) {
		t.Errorf("buildCommand is %q, its words %q, want %q", buildCommand("zeroclaw"), got, want)
	}
}

// The build command makes a static binary: no program interpreter (ld.so), no shared libraries.
func TestBuiltBinaryIsStatic(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Fatalf("needs Linux to read the ELF binary; this is %s", runtime.GOOS)
	}
	f, err := elf.Open(testBinary)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			t.Error("the binary has a PT_INTERP program header: it is dynamically linked")
		}
	}
	if libs, err := f.ImportedLibraries(); err != nil || len(libs) > 0 {
		t.Errorf("imported libraries %v (%v), want none", libs, err)
	}
	if syms, err := f.Symbols(); err == nil || len(syms) > 0 {
		t.Errorf("the binary keeps its symbol table (%d symbols): built without -ldflags=-s", len(syms))
	}
}

// shellWords splits a shell line into words, honouring single quotes (all the README's command uses).
func shellWords(t *testing.T, line string) []string {
	t.Helper()
	var words []string
	var cur strings.Builder
	in, quoted := false, false
	for _, r := range line {
		switch {
		case r == '\'':
			quoted, in = !quoted, true
		case r == ' ' && !quoted:
			if in {
				words = append(words, cur.String())
				cur.Reset()
				in = false
			}
		default:
			cur.WriteRune(r)
			in = true
		}
	}
	if quoted {
		t.Fatalf("unbalanced quote in %q", line)
	}
	if in {
		words = append(words, cur.String())
	}
	return words
}

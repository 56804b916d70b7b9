package tools

import (
	"go/parser"
	"go/token"
	"os"
	"strconv"
	"strings"
	"testing"
)

// TestLeafPackage keeps tools a leaf: the agent layer maps config to Policy, so no sibling import is needed.
// The one exception is internal/visible, itself a leaf of pure text functions, which escapes approval summaries.
func TestLeafPackage(t *testing.T) {
	entries, err := os.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".go") || strings.HasSuffix(e.Name(), "_test.go") {
			continue
		}
		f, err := parser.ParseFile(token.NewFileSet(), e.Name(), nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		checked++
		for _, imp := range f.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			if strings.HasPrefix(path, "github.com/zeroclaw-go/zeroclaw/") && path != "github.com/zeroclaw-go/zeroclaw/internal/visible" {
				t.Errorf("%s imports %s: tools must stay a leaf package", e.Name(), path)
			}
		}
	}
	if checked == 0 {
		t.Fatal("no source files checked")
	}
}

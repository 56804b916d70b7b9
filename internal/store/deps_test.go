package store

import (
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestLeafPackage keeps store a leaf: it imports no other package of this module.
func TestLeafPackage(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	checked := 0
	for _, f := range files {
		af, err := parser.ParseFile(fset, f, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range af.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			if strings.HasPrefix(p, "github.com/zeroclaw-go/zeroclaw/") {
				t.Errorf("%s imports %s: store must not import sibling packages", f, p)
			}
			checked++
		}
	}
	if checked == 0 {
		t.Fatal("no imports parsed; is the test running in the package directory?")
	}
}

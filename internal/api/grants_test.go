package api

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// The grant names are spelled in grants.go only: no other non-test file of the module has a string literal
// equal to one, so a grant is always named through its constant.
func TestGrantsSpelledOnce(t *testing.T) {
	fset := token.NewFileSet()
	decl, err := parser.ParseFile(fset, "grants.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	grants := map[string]string{} // value → constant
	ast.Inspect(decl, func(n ast.Node) bool {
		if vs, ok := n.(*ast.ValueSpec); ok {
			for i, v := range vs.Values {
				if lit, ok := v.(*ast.BasicLit); ok && lit.Kind == token.STRING {
					s, _ := strconv.Unquote(lit.Value)
					grants[s] = vs.Names[i].Name
				}
			}
		}
		return true
	})
	if len(grants) < 20 {
		t.Fatalf("found only %d grants in grants.go", len(grants))
	}
	self, _ := filepath.Abs("grants.go")
	for _, root := range []string{"..", filepath.Join("..", "..", "cmd")} {
		err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
				return err
			}
			if abs, _ := filepath.Abs(path); abs == self {
				return nil
			}
			f, err := parser.ParseFile(fset, path, nil, 0)
			if err != nil {
				return err
			}
			ast.Inspect(f, func(n ast.Node) bool {
				if lit, ok := n.(*ast.BasicLit); ok && lit.Kind == token.STRING {
					if s, _ := strconv.Unquote(lit.Value); grants[s] != "" {
						t.Errorf("%s: the grant %q is spelled again: use api.%s", fset.Position(lit.Pos()), s, grants[s])
					}
				}
				return true
			})
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
}

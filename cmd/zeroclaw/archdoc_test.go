package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// archDoc is the page that describes the tree's shape; the next issues point at it, so it must not rot.
const archDoc = "../../docs/architecture.md"

var (
	// docPath is a package path of the tree as the page spells it, or a file in one (a name with an extension).
	docPath = regexp.MustCompile(`(?:internal|cmd)/[a-z0-9_]+(?:/[a-z0-9_]+)*(?:\.[a-z]+)?`)
	// docCode is one backquoted span.
	docCode = regexp.MustCompile("`[^`]+`")
	// docSymbol is pkg.Name or pkg.Type.Member inside a span.
	docSymbol = regexp.MustCompile(`\b([a-z][a-z0-9]*)\.([A-Z][A-Za-z0-9_]*)(?:\.([A-Z][A-Za-z0-9_]*))?`)
)

// TestArchitectureDocNames checks docs/architecture.md against the tree: every package path it mentions is a
// package of the module (or a file in one), and every backquoted pkg.Name (pkg.Type.Member) names a package of
// the layering table by its last element and something that package declares in its non-test files.
func TestArchitectureDocNames(t *testing.T) {
	doc, err := os.ReadFile(archDoc)
	if err != nil {
		t.Fatal(err)
	}
	text := string(doc)
	for _, p := range docPath.FindAllString(text, -1) {
		if _, err := os.Stat(filepath.Join("../..", filepath.FromSlash(p))); err != nil {
			t.Errorf("%s names %s, which is not in the tree", archDoc, p)
		}
	}
	byName := map[string]string{} // last element → package path
	for pkg := range imports {
		byName[path.Base(pkg)] = pkg
	}
	decls := map[string]map[string]bool{}
	checked := 0
	for _, span := range docCode.FindAllString(text, -1) {
		for _, m := range docSymbol.FindAllStringSubmatch(span, -1) {
			pkg, ok := byName[m[1]]
			if !ok {
				continue // not a package of the tree (a file name such as config.toml is lower case anyway)
			}
			if decls[pkg] == nil {
				decls[pkg] = declared(t, filepath.Join("../..", filepath.FromSlash(pkg)))
			}
			name := m[2]
			if m[3] != "" {
				name += "." + m[3]
			}
			if !decls[pkg][name] {
				t.Errorf("%s names %s, which %s does not declare", archDoc, m[0], pkg)
			}
			checked++
		}
	}
	if checked < 20 {
		t.Fatalf("only %d symbols checked in %s: the check is not reading the page", checked, archDoc)
	}
}

// declared returns the names the non-test files of the package in dir declare at top level, plus Type.Member
// for the methods, struct fields and interface methods of its types.
func declared(t *testing.T, dir string) map[string]bool {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	fset := token.NewFileSet()
	for _, e := range entries {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".go") || strings.HasSuffix(e.Name(), "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, filepath.Join(dir, e.Name()), nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				if d.Recv == nil {
					names[d.Name.Name] = true
				} else if recv := recvName(d.Recv.List[0].Type); recv != "" {
					names[recv+"."+d.Name.Name] = true
				}
			case *ast.GenDecl:
				for _, s := range d.Specs {
					switch s := s.(type) {
					case *ast.TypeSpec:
						names[s.Name.Name] = true
						for _, member := range members(s.Type) {
							names[s.Name.Name+"."+member] = true
						}
					case *ast.ValueSpec:
						for _, n := range s.Names {
							names[n.Name] = true
						}
					}
				}
			}
		}
	}
	return names
}

// recvName is the type name of a method's receiver (T, *T, T[P], *T[P]).
func recvName(e ast.Expr) string {
	for {
		switch x := e.(type) {
		case *ast.StarExpr:
			e = x.X
		case *ast.IndexExpr:
			e = x.X
		case *ast.IndexListExpr:
			e = x.X
		case *ast.Ident:
			return x.Name
		default:
			return ""
		}
	}
}

// members are the named fields of a struct type and the methods of an interface type, embedded ones by their
// type name.
func members(e ast.Expr) []string {
	var list *ast.FieldList
	switch x := e.(type) {
	case *ast.StructType:
		list = x.Fields
	case *ast.InterfaceType:
		list = x.Methods
	default:
		return nil
	}
	var out []string
	for _, f := range list.List {
		for _, n := range f.Names {
			out = append(out, n.Name)
		}
		if len(f.Names) == 0 {
			if n := recvName(f.Type); n != "" {
				out = append(out, n)
			} else if sel, ok := f.Type.(*ast.SelectorExpr); ok {
				out = append(out, sel.Sel.Name)
			}
		}
	}
	return out
}

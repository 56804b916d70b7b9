package main

import (
	"encoding/json"
	"os/exec"
	"strings"
	"testing"
)

const module = "github.com/zeroclaw-go/zeroclaw/"

// allowedImports lists, for each package of the module, the module packages it may import directly. The tree's
// dependency direction is cmd → cli → daemon → domains → {api, jsonrpc, store, config}; leaves import no
// siblings. A package missing from this table fails the test so that every new package states its edges.
var allowedImports = map[string][]string{
	"cmd/zeroclaw":      {"internal/cli"},
	"internal/cli":      {"internal/daemon", "internal/api", "internal/jsonrpc", "internal/install", "internal/config", "internal/secrets"},
	"internal/daemon":   {"internal/api", "internal/jsonrpc", "internal/rpc", "internal/auth", "internal/install", "internal/config", "internal/secrets", "internal/session", "internal/agent", "internal/store", "internal/provider", "internal/tools"},
	"internal/rpc":      {"internal/api", "internal/auth", "internal/jsonrpc", "internal/config", "internal/session", "internal/secrets"},
	"internal/session":  {"internal/api", "internal/agent", "internal/store", "internal/config"},
	"internal/agent":    {"internal/api", "internal/provider", "internal/tools", "internal/store", "internal/config"},
	"internal/config":   {"internal/secrets"},
	"internal/api":      {},
	"internal/auth":     {"internal/config"},
	"internal/jsonrpc":  {},
	"internal/install":  {},
	"internal/secrets":  {},
	"internal/store":    {},
	"internal/provider": {},
	"internal/tools":    {},
	"internal/rpctest":  {"internal/daemon", "internal/api", "internal/jsonrpc", "internal/install", "internal/config"},
	"internal/e2e":      {},
	"scripts/startup":   {},
}

func TestDependencyDirection(t *testing.T) {
	out, err := exec.Command("go", "list", "-json=ImportPath,Imports,Standard", "../../...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	dec := json.NewDecoder(strings.NewReader(string(out)))
	seen := 0
	for dec.More() {
		var p struct {
			ImportPath string
			Imports    []string
		}
		if err := dec.Decode(&p); err != nil {
			t.Fatal(err)
		}
		rel := strings.TrimPrefix(p.ImportPath, module)
		allowed, ok := allowedImports[rel]
		if !ok {
			t.Errorf("package %s is not in allowedImports: add it with the edges it may have", rel)
			continue
		}
		seen++
		for _, imp := range p.Imports {
			if !strings.HasPrefix(imp, module) {
				continue
			}
			target := strings.TrimPrefix(imp, module)
			if !contains(allowed, target) {
				t.Errorf("forbidden import edge: %s imports %s", rel, target)
			}
		}
	}
	if seen < 5 {
		t.Fatalf("go list saw only %d module packages; the check is not looking at the tree", seen)
	}
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

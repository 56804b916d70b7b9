package dashboard

import (
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"testing"
)

func TestDisplay(t *testing.T) {
	for _, c := range []struct {
		in   any
		want string
	}{{nil, UnsetDisplay}, {"x", "x"}, {true, "true"}, {float64(43817), "43817"}, {[]any{"a", "b"}, `["a", "b"]`}} {
		if got := Display(c.in); got != c.want {
			t.Errorf("Display(%v) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestDottedAndCoerce(t *testing.T) {
	if got := Dotted("/a~1b/c~0d"); got != "a/b.c~d" {
		t.Errorf("Dotted = %q", got)
	}
	if got := Dotted("gateway.port"); got != "gateway.port" {
		t.Errorf("Dotted of a dotted path = %q", got)
	}
	intLeaf := map[string]any{"kind": "integer"}
	if got := string(Coerce(json.RawMessage(`" 43817 "`), intLeaf)); got != "43817" {
		t.Errorf("Coerce integer = %s", got)
	}
	list := map[string]any{"kind": "string_array"}
	if got := string(Coerce(json.RawMessage(`"a, b,,c"`), list)); got != `["a","b","c"]` {
		t.Errorf("Coerce list = %s", got)
	}
	if got := string(Coerce(json.RawMessage(`"x"`), nil)); got != `"x"` {
		t.Errorf("Coerce without an entry = %s", got)
	}
}

func TestPlanPatch(t *testing.T) {
	entries := map[string]map[string]any{
		"gateway.port": {"path": "gateway.port", "kind": "integer", "value": float64(1)},
		"x.key":        {"path": "x.key", "kind": "string", "is_secret": true},
	}
	entry := func(p string) (map[string]any, error) { return entries[p], nil }
	why := "why"
	plan, err := PlanPatch([]PatchOp{{Op: "test", Path: "/gateway/port", Value: json.RawMessage(`1`)},
		{Op: "replace", Path: "/gateway/port", Value: json.RawMessage(`"2"`), Comment: &why},
		{Op: "add", Path: "x.key", Value: json.RawMessage(`"s"`)}, {Op: "remove", Path: "y"},
		{Op: "comment", Path: "/gateway/port", Comment: &why}}, entry)
	// One config/patch op per op, in order (the test is checked there, under the write lock).
	if err != nil || len(plan.Ops) != 5 || plan.Ops[0].Op != "test" || plan.Ops[1].Op != "set" || string(plan.Ops[1].Value) != "2" ||
		*plan.Ops[1].Comment != "why" || plan.Ops[3].Op != "delete" || plan.Ops[3].Prop != "y" || plan.Ops[4].Op != "comment" ||
		plan.Results[2]["populated"] != true || plan.Results[1]["comment"] != "why" || plan.Results[3]["value"] != nil {
		t.Fatalf("plan = %+v, %v", plan, err)
	}
	for _, c := range []struct {
		op     PatchOp
		status int
	}{{PatchOp{Op: "test", Path: "x.key", Value: json.RawMessage(`"s"`)}, http.StatusBadRequest},
		{PatchOp{Op: "move", Path: "gateway.port"}, http.StatusBadRequest}, {PatchOp{Op: "add"}, http.StatusBadRequest},
		{PatchOp{Op: "comment", Path: "gateway.port"}, http.StatusBadRequest},
		{PatchOp{Op: "remove", Path: "gateway.port", Comment: &why}, http.StatusBadRequest}} {
		var pe *PatchError
		// Each refusal is upstream's ConfigApiError envelope: a string code and message the dashboard reads.
		if _, err := PlanPatch([]PatchOp{c.op}, entry); !errors.As(err, &pe) || pe.Status != c.status ||
			pe.Body["code"] == nil || pe.Body["message"] != pe.Body["error"] || pe.Body["op_index"] != 0 {
			t.Errorf("%+v: err %v, want status %d", c.op, err, c.status)
		}
	}
}

func TestWebDist(t *testing.T) {
	for p, ok := range map[string]bool{"a/b.js": true, "": false, "../x": false, "/x": false, `a\b`: false, "c:x": false, "a//b": false} {
		if ValidRelPath(p) != ok {
			t.Errorf("ValidRelPath(%q) != %v", p, ok)
		}
	}
	if ContentType("x.JS") != "text/javascript; charset=utf-8" || CacheControl("assets/a.js") == "no-cache" || CacheControl("index.html") != "no-cache" {
		t.Error("content type or cache control")
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "index.html"), []byte(`<head><script src="/_app/a.js">`), 0o600); err != nil {
		t.Fatal(err)
	}
	html, ok := Index(dir, "/zc")
	if want := `<head><script>window.__ZEROCLAW_BASE__="/zc";</script><script src="/zc/_app/a.js">`; !ok || html != want {
		t.Errorf("Index = %q, %v", html, ok)
	}
	if _, _, err := OpenDist(dir, "missing"); !errors.Is(err, ErrNoFile) {
		t.Errorf("OpenDist missing: %v", err)
	}
}

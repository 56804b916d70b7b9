package gateway_test

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zeroclaw-go/zeroclaw/internal/rpctest"
)

// The authoring routes end to end on a real daemon: a watcher (sops:read) reads but may not write; the owner
// creates, reads back every field, saves, and deletes; hostile bodies and names are refused with the status
// upstream answers, and nothing is written outside the SOPs directory.
func TestSopAuthorRoutes(t *testing.T) {
	d, g, owner := startSopGateway(t)
	watcher := rpctest.PairWithProfile(t, d, g, "watcher")
	js := "Content-Type: application/json"
	sops := filepath.Join(d.ConfigDir, "shared", "sops")

	list := g.Do("GET", "/api/sops", nil, watcher).Want(t, 200)
	if arr, _ := list.Body["sops"].([]any); len(arr) != 1 || arr[0].(map[string]any)["name"] != "deploy" {
		t.Fatalf("list: %s", list.Raw)
	}
	draft := map[string]any{"name": "notify", "description": "Tell on-call", "version": "1.0.0", "priority": "high",
		"execution_mode": "auto", "triggers": []any{map[string]any{"type": "manual"}},
		"steps": []any{
			map[string]any{"title": "Gate", "kind": "checkpoint", "policy": "oncall", "gate_prompt": "Page {{who}}?", "edit": "body"},
			map[string]any{"title": "Page", "kind": "capability", "capability": "notify.channel", "with": map[string]any{"channel": "ops"}},
		}}
	g.Do("POST", "/api/sops", draft, watcher, js).Want(t, 403)
	g.Do("POST", "/api/sops", draft, owner, js).Want(t, 200)
	g.Do("POST", "/api/sops", draft, owner, js).Want(t, 409)
	full := g.Do("GET", "/api/sops/notify/full", nil, watcher).Want(t, 200)
	steps := full.Body["steps"].([]any)
	s1, s2 := steps[0].(map[string]any), steps[1].(map[string]any)
	if s1["policy"] != "oncall" || s1["gate_prompt"] != "Page {{who}}?" || s1["edit"] != "body" || s1["kind"] != "checkpoint" ||
		s2["kind"] != "capability" || s2["capability"] != "notify.channel" || s2["with"].(map[string]any)["channel"] != "ops" {
		t.Fatalf("a saved step lost a field: %s", full.Raw)
	}
	graph := g.Do("GET", "/api/sops/notify/graph", nil, watcher).Want(t, 200)
	if nodes, _ := graph.Body["nodes"].([]any); len(nodes) != 3 { // two steps and the manual trigger
		t.Fatalf("graph: %s", graph.Raw)
	}

	draft["description"] = "changed"
	g.Do("PUT", "/api/sops/notify", draft, watcher, js).Want(t, 403)
	g.Do("PUT", "/api/sops/notify", draft, owner, js).Want(t, 200)
	if r := g.Do("PUT", "/api/sops/other", draft, owner, js).Want(t, 400); !strings.Contains(string(r.Raw), "does not match URL name") {
		t.Fatalf("rename through PUT: %s", r.Raw)
	}
	bad := map[string]any{}
	for k, v := range draft {
		bad[k] = v
	}
	bad["steps"] = []any{map[string]any{"title": " "}}
	if r := g.Do("PUT", "/api/sops/notify", bad, owner, js).Want(t, 400); !strings.Contains(string(r.Raw), "SOP rejected: Step 1 has an empty title") {
		t.Fatalf("invalid save: %s", r.Raw)
	}
	if r := g.Do("GET", "/api/sops/notify/full", nil, owner).Want(t, 200); r.Body["description"] != "changed" {
		t.Fatalf("a refused save changed the SOP: %s", r.Raw)
	}
	// Names that leave the directory never reach the disk.
	for _, name := range []string{"..", "%2e%2e", "a%2Fb", "a%5Cb", "%00"} {
		if r := g.Do("DELETE", "/api/sops/"+name, nil, owner); r.Code != 400 && r.Code != 404 && r.Code != 307 { // 307: the mux's cleaned path
			t.Errorf("DELETE %s: %d %s", name, r.Code, r.Raw)
		}
	}
	evil := map[string]any{}
	for k, v := range draft {
		evil[k] = v
	}
	evil["name"] = "../../escape"
	g.Do("POST", "/api/sops", evil, owner, js).Want(t, 400)
	if _, err := os.Stat(filepath.Join(d.ConfigDir, "escape")); err == nil {
		t.Fatal("a SOP was written outside the SOPs directory")
	}
	g.Do("POST", "/api/sops", "not json", owner, js).Want(t, 400)
	// No panic, no file. The body is past the 64 KiB limit: the gateway may answer and close before the client has
	// written it all (a reset on the client's side), so the outcome is read from the disk, not the response.
	deep, _ := http.NewRequest("POST", g.Base+"/api/sops", strings.NewReader(strings.Repeat("[", 1<<20)))
	deep.Header.Set("Authorization", strings.TrimPrefix(owner, "Authorization: "))
	deep.Header.Set("Content-Type", "application/json")
	if res, err := g.Client.Do(deep); err == nil {
		res.Body.Close()
	}
	// A body past the gateway's limit is cut off (the connection may be closed before the answer).
	big := `{"name":"big","description":"` + strings.Repeat("x", 8<<20) + `"}`
	req, _ := http.NewRequest("POST", g.Base+"/api/sops", strings.NewReader(big))
	req.Header.Set("Authorization", strings.TrimPrefix(owner, "Authorization: "))
	req.Header.Set("Content-Type", "application/json")
	if res, err := g.Client.Do(req); err == nil {
		res.Body.Close()
		if res.StatusCode == 200 {
			t.Fatal("an 8 MiB SOP was accepted")
		}
	}
	if _, err := os.Stat(filepath.Join(sops, "big")); err == nil {
		t.Fatal("the oversized SOP was written")
	}

	g.Do("DELETE", "/api/sops/notify", nil, watcher).Want(t, 403)
	g.Do("DELETE", "/api/sops/notify", nil, owner).Want(t, 200)
	g.Do("DELETE", "/api/sops/notify", nil, owner).Want(t, 404)
	g.Do("GET", "/api/sops/notify/full", nil, owner).Want(t, 404)
	entries, err := os.ReadDir(sops)
	if err != nil || len(entries) != 1 || entries[0].Name() != "deploy" {
		t.Fatalf("left in the SOPs directory: %v %v", entries, err)
	}

	draft["steps"] = []any{map[string]any{"number": 1, "title": "A"}, map[string]any{"number": 2, "title": "B"}}
	wire := map[string]any{"sop": draft, "edit": map[string]any{"op": "connect", "from": 1, "to": 2, "role": "failure"}}
	r := g.Do("POST", "/api/sops/wire-draft", wire, watcher, js).Want(t, 200)
	if f := r.Body["sop"].(map[string]any)["steps"].([]any)[0].(map[string]any)["on_failure"]; f == nil {
		t.Fatalf("wire-draft did not wire: %s", r.Raw)
	}
	wire["edit"] = map[string]any{"op": "explode", "from": 1, "to": 2, "role": "failure"}
	g.Do("POST", "/api/sops/wire-draft", wire, watcher, js).Want(t, 400)
	g.Do("GET", "/api/sops/trigger-sources", nil, watcher).Want(t, 200)
	if r := g.Do("GET", "/api/sops/graph-legend", nil, watcher).Want(t, 200); len(r.Body["flow_roles"].([]any)) != 5 {
		t.Fatalf("legend: %s", r.Raw)
	}
}

package gateway_test

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/zeroclaw-go/zeroclaw/internal/gateway"
	"github.com/zeroclaw-go/zeroclaw/internal/rpctest"
)

// The security matrix (issue 20, "How to keep it so"; README "Security model"): every route the gateway
// registers × who asks. The rows must match gateway.Routes() exactly, so a new route fails this test until it
// has its row.
//
// Columns, each one request to a real daemon:
//
//	none    no token
//	viewer  a device paired with `pair code --profile viewer` (grants: status:read)
//	owner   a device paired with the daemon's first code (no profile: the owner's equal)
//	host    the owner's token, Host: evil.example:<port> (DNS rebinding)
//	origin  the owner's token, Origin: http://evil.example (a cross-site page on loopback)
//	simple  the owner's token, the body as Content-Type: text/plain (a form or fetch without preflight)
//
// Placeholders in a path are "nope"; a state-changing request sends the body {} as application/json (simple:
// text/plain). 0 is a cell that does not apply (pairing routes take no token: viewer and owner would only be
// more wrong codes). The other local uid is TestGatewayTakeoverAsAnotherUID (internal/e2e): to the gateway it is
// the none column, from loopback.
var securityMatrix = []struct {
	route                                    string
	none, viewer, owner, host, origin, simpl int
}{
	// route                                              none viewer owner host origin simple
	{"GET /health", 200, 200, 200, 403, 200, 200},
	{"GET /metrics", 200, 200, 200, 403, 200, 200},
	{"POST /pair", 403, 0, 0, 403, 403, 415},
	{"GET /pair/code", 401, 403, 200, 403, 200, 200},
	{"POST /api/pair", 400, 0, 0, 403, 403, 415},
	{"POST /api/pairing/initiate", 401, 403, 200, 403, 403, 415},
	{"GET /api/devices", 401, 403, 200, 403, 200, 200},
	{"DELETE /api/devices/{id}", 401, 403, 404, 403, 403, 415},
	{"POST /api/devices/{id}/token/rotate", 401, 403, 404, 403, 403, 415},
	{"POST /api/devices/me/capabilities", 401, 200, 200, 403, 403, 415},
	{"POST /admin/shutdown", 401, 403, 200, 403, 403, 415},
	{"POST /admin/reload", 401, 403, 200, 403, 403, 415},
	{"GET /admin/paircode", 401, 403, 200, 403, 200, 200},
	{"POST /admin/paircode/new", 401, 403, 200, 403, 403, 415},
	{"GET /api/status", 401, 200, 200, 403, 200, 200},
	{"GET /api/health", 401, 403, 200, 403, 200, 200},
	{"GET /api/tuis", 401, 403, 200, 403, 200, 200},
	{"GET /api/sessions", 401, 403, 200, 403, 200, 200},
	{"GET /api/sessions/{id}/messages", 401, 403, 200, 403, 200, 200},
	{"GET /api/sessions/{id}/state", 401, 403, 404, 403, 404, 404},
	{"DELETE /api/sessions/{id}", 401, 403, 200, 403, 403, 415},
	{"POST /api/sessions/{id}/abort", 401, 403, 404, 403, 403, 415},
	{"GET /api/config", 401, 403, 200, 403, 200, 200},
	{"PATCH /api/config", 401, 403, 400, 403, 403, 415},
	{"OPTIONS /api/config", 401, 403, 200, 403, 200, 200},
	{"GET /api/config/list", 401, 403, 200, 403, 200, 200},
	{"GET /api/config/prop", 401, 403, 200, 403, 200, 200},
	{"PUT /api/config/prop", 401, 403, 400, 403, 403, 415},
	{"DELETE /api/config/prop", 401, 403, 200, 403, 403, 415},
	{"GET /api/cron", 401, 403, 200, 403, 200, 200},
	{"POST /api/cron", 401, 403, 400, 403, 403, 415},
	{"GET /api/cron/settings", 401, 403, 200, 403, 200, 200},
	{"PATCH /api/cron/{id}", 401, 403, 404, 403, 403, 415},
	{"DELETE /api/cron/{id}", 401, 403, 404, 403, 403, 415},
	{"GET /api/cron/{id}/runs", 401, 403, 404, 403, 404, 404}, // an unknown job is 404 (cron resolves ids and names)
	{"POST /api/cron/{id}/run", 401, 403, 404, 403, 403, 415},
	{"GET /api/memory", 401, 403, 200, 403, 200, 200},
	{"POST /api/memory", 401, 403, 400, 403, 403, 415},
	{"DELETE /api/memory/{key}", 401, 403, 404, 403, 403, 415}, // a missing key is not found
	{"GET /api/cost", 401, 403, 200, 403, 200, 200},
	{"GET /api/logs", 401, 403, 200, 403, 200, 200},
	{"GET /ws/chat", 401, 403, 101, 403, 403, 101},
	{"GET /acp", 401, 101, 101, 403, 403, 101},
	// /mcp: any paired device may open an MCP session (its tools check the device's grants); without the
	// streamable transport's Accept header or a session, the SDK answers 400 once the gateway let it through.
	{"POST /mcp", 401, 400, 400, 403, 403, 415},
	{"GET /mcp", 401, 400, 400, 403, 400, 400},
	{"DELETE /mcp", 401, 400, 400, 403, 403, 415},
	{"GET /api/sessions/running", 401, 403, 200, 403, 200, 200},
	// The cross-session approvals: sessions:read or sops:read to list, sessions:execute or sops:approve to answer
	// (a forged id is 400); the viewer has none of them.
	{"GET /api/approvals", 401, 403, 200, 403, 200, 200},
	{"POST /api/approvals/{id}", 401, 403, 400, 403, 403, 415},
	{"GET /api/approvals/events", 401, 403, 200, 403, 200, 200}, // approvals/list's grants; counts against /api/events' 32
	{"GET /api/doctor", 401, 403, 200, 403, 200, 200},
	{"POST /api/doctor", 401, 403, 200, 403, 403, 415},
	{"GET /api/personality", 401, 403, 200, 403, 200, 200},
	{"GET /api/personality/templates", 401, 403, 200, 403, 200, 200},
	{"GET /api/personality/{filename}", 401, 403, 400, 403, 400, 400},
	{"PUT /api/personality/{filename}", 401, 403, 400, 403, 403, 415},
	{"GET /api/skills/bundles", 401, 403, 200, 403, 200, 200},
	{"GET /api/skills/bundles/{alias}/skills", 401, 403, 400, 403, 400, 400},
	{"POST /api/skills/bundles/{alias}/skills", 401, 403, 400, 403, 403, 415},
	{"GET /api/skills/bundles/{alias}/skills/{name}", 401, 403, 400, 403, 400, 400},
	{"PUT /api/skills/bundles/{alias}/skills/{name}", 401, 403, 400, 403, 403, 415},
	{"DELETE /api/skills/bundles/{alias}/skills/{name}", 401, 403, 400, 403, 403, 415},
	{"GET /api/config/templates", 401, 403, 200, 403, 200, 200},
	{"GET /api/config/sections", 401, 403, 200, 403, 200, 200},
	{"GET /api/config/sections/{section}", 401, 403, 404, 403, 404, 404},
	{"POST /api/config/sections/{section}/items/{key}", 401, 403, 400, 403, 403, 415},
	{"GET /api/config/status", 401, 403, 200, 403, 200, 200},
	{"GET /api/quickstart/state", 401, 403, 200, 403, 200, 200},
	{"POST /api/quickstart/fields", 401, 403, 400, 403, 403, 415},
	{"POST /api/quickstart/validate", 401, 403, 200, 403, 403, 415},
	{"POST /api/quickstart/apply", 401, 403, 200, 403, 403, 415},
	{"POST /api/quickstart/dismiss", 401, 403, 400, 403, 403, 415},
	{"GET /api/config/catalog", 401, 403, 200, 403, 200, 200},
	{"GET /api/config/catalog/models", 401, 403, 400, 403, 400, 400},
	{"GET /api/config/map-keys", 401, 403, 400, 403, 400, 400},
	{"GET /api/config/resolve-alias-source", 401, 403, 400, 403, 400, 400},
	{"POST /api/config/map-key", 401, 403, 400, 403, 403, 415},
	{"DELETE /api/config/map-key", 401, 403, 400, 403, 403, 415},
	{"POST /api/config/rename-map-key", 401, 403, 400, 403, 403, 415},
	{"POST /webhook", 401, 403, 400, 403, 403, 415},
	// A SOP webhook trigger: the webhook's checks plus sops:execute (the viewer lacks it); no engine here: 503.
	{"POST /sop/webhook/{path...}", 401, 403, 503, 403, 403, 415},
	{"GET /api/version/check", 401, 200, 200, 403, 200, 200},
	{"GET /api/canvas", 401, 200, 200, 403, 200, 200},
	{"GET /api/config/drift", 401, 403, 200, 403, 200, 200},
	{"GET /api/config/reload-status", 401, 403, 200, 403, 200, 200},
	{"GET /api/config/delete-plan", 401, 403, 400, 403, 400, 400},
	{"POST /api/config/init", 401, 403, 200, 403, 403, 415},
	{"POST /api/config/migrate", 401, 403, 200, 403, 403, 415},
	{"GET /api/config/agent-options", 401, 403, 200, 403, 200, 200},
	{"GET /api/tools", 401, 403, 200, 403, 200, 200},
	{"GET /api/channels", 401, 200, 200, 403, 200, 200},
	{"GET /api/cli-tools", 401, 403, 200, 403, 200, 200},
	{"GET /api/integrations", 401, 403, 200, 403, 200, 200},
	{"GET /api/skills/slash-option-kinds", 401, 403, 200, 403, 200, 200},
	{"GET /api/agents/{alias}/skills", 401, 403, 404, 403, 404, 404},
	{"GET /api/agents/{alias}/workspace/list", 401, 403, 404, 403, 404, 404},
	{"GET /api/agents/{alias}/workspace/read", 401, 403, 404, 403, 404, 404},
	{"DELETE /api/agents/{alias}/workspace/path", 401, 403, 404, 403, 403, 415}, // the owner's, as the admin routes
	{"POST /api/agents/{alias}/workspace/move", 401, 403, 404, 403, 403, 415},
	{"POST /api/agents/{alias}/workspace/mkdir", 401, 403, 404, 403, 403, 415},
	{"GET /api/browse", 401, 403, 200, 403, 200, 200},
	{"POST /api/browse/mkdir", 401, 403, 400, 403, 403, 415}, // the owner's; {} has no path
	{"DELETE /api/browse/rmdir", 401, 403, 400, 403, 403, 415},
	{"GET /api/events", 401, 403, 200, 403, 200, 200},
	// The SOP run routes: the /admin/sop ones are the owner's (as every /admin route); the others need sops:read,
	// sops:execute or sops:approve, which the viewer lacks. This daemon runs no SOP engine: 503, as upstream.
	{"GET /admin/sop/pending", 401, 403, 503, 403, 503, 503},
	{"POST /admin/sop/approve", 401, 403, 503, 403, 403, 415},
	{"POST /admin/sop/deny", 401, 403, 503, 403, 403, 415},
	{"POST /api/sops/{name}/run", 401, 403, 503, 403, 403, 415},
	{"GET /api/sops/runs", 401, 403, 503, 403, 503, 503},
	{"GET /api/sops/{name}/runs/{run_id}/overlay", 401, 403, 503, 403, 503, 503},
	{"POST /api/sops/{name}/runs/{run_id}/decide", 401, 403, 400, 403, 403, 415},
	{"GET /ws/sops/runs", 401, 403, 101, 403, 403, 101},
	// The SOP authoring routes: sops:read to read, sops:write to write, which the viewer lacks. A draft or a SOP
	// body of {} is refused (400: a required field or 'sop' is missing); "nope" is not a SOP (404).
	{"GET /api/sops", 401, 403, 200, 403, 200, 200},
	{"POST /api/sops", 401, 403, 400, 403, 403, 415},
	{"PUT /api/sops/{name}", 401, 403, 400, 403, 403, 415},
	{"DELETE /api/sops/{name}", 401, 403, 404, 403, 403, 415},
	{"GET /api/sops/{name}/graph", 401, 403, 404, 403, 404, 404},
	{"GET /api/sops/{name}/full", 401, 403, 404, 403, 404, 404},
	{"POST /api/sops/wire-draft", 401, 403, 400, 403, 403, 415},
	{"POST /api/sops/graph-draft", 401, 403, 400, 403, 403, 415},
	{"GET /api/sops/trigger-sources", 401, 403, 200, 403, 200, 200},
	{"GET /api/sops/graph-legend", 401, 403, 200, 403, 200, 200},
	{"GET /api/events/history", 401, 403, 200, 403, 200, 200}, // logs:read; at most 500 events and 1 MiB
	{"GET /_app/{path...}", 404, 404, 404, 403, 404, 404},     // the dashboard's files: public, none without web_dist_dir
	// The built-in dashboard (package webui): public pages and files without data; "nope" is no page or file.
	{"GET /{$}", 200, 200, 200, 403, 200, 200},
	{"GET /ui/{page}", 404, 404, 404, 403, 404, 404},
	{"GET /ui/assets/{file}", 404, 404, 404, 403, 404, 404},
	// The [wss] listener (every path): no Host rule (its clients use the certificate's name), the Origin rule.
	{"GET wss:/", 401, 101, 101, 101, 403, 101},
}

// matrixQuery is the query a route needs to be more than a 400 for the owner.
var matrixQuery = map[string]string{"/ws/chat": "?agent=default", "/api/config/prop": "?path=gateway.pair_rate_limit_per_minute"}

func TestGatewaySecurityMatrix(t *testing.T) {
	t.Parallel()
	var rows []string
	for _, r := range securityMatrix {
		rows = append(rows, r.route)
	}
	routes := gateway.New(gateway.Options{}).Routes()
	for _, r := range routes {
		if !slices.Contains(rows, r) {
			t.Errorf("route %q has no row in securityMatrix: add one (README \"Security model\")", r)
		}
	}
	for _, r := range rows {
		if !slices.Contains(routes, r) {
			t.Errorf("securityMatrix row %q names no route", r)
		}
	}
	if t.Failed() {
		t.FailNow()
	}

	pki := rpctest.NewPKI(t)
	d, g, code := rpctest.StartGateway(t, rpctest.WSSConfig(pki)+"\n[permission_profiles.viewer]\ngrants = [\"status:read\"]\n")
	owner := rpctest.PairOnce(t, g, code)
	viewer := rpctest.PairWithProfile(t, d, g, "viewer")
	self := hostOf(g)
	evilHost := "Host: evil.example:" + self[strings.LastIndex(self, ":")+1:]
	evilOrigin := "Origin: http://evil.example"

	var last func() // the owner's shutdown, which ends the daemon, runs after every other cell
	for _, row := range securityMatrix {
		method, pattern, _ := strings.Cut(row.route, " ")
		cells := []struct {
			col  string
			want int
			hdr  []string
		}{
			{"none", row.none, nil}, {"viewer", row.viewer, []string{viewer}}, {"owner", row.owner, []string{owner}},
			{"host", row.host, []string{owner, evilHost}}, {"origin", row.origin, []string{owner, evilOrigin}},
			{"simple", row.simpl, []string{owner, "Content-Type: text/plain"}},
		}
		if pattern == "wss:/" {
			for _, c := range cells {
				hdr := http.Header{}
				for _, h := range c.hdr {
					k, v, _ := strings.Cut(h, ": ")
					hdr.Set(k, v)
				}
				_, got, _ := rpctest.DialWSS(t, d.WSSAddr(t), pki, hdr)
				if got != c.want {
					t.Errorf("%s × %s: %d, want %d", row.route, c.col, got, c.want)
				}
			}
			continue
		}
		path := pattern
		for _, p := range []string{"{id}", "{key}", "{filename}", "{alias}", "{name}", "{section}", "{path...}", "{run_id}", "{page}", "{file}"} {
			path = strings.ReplaceAll(path, p, "nope")
		}
		path = strings.ReplaceAll(path, "{$}", "")
		path += matrixQuery[pattern]
		got := make([]int, len(cells))
		for i, c := range cells {
			if c.want == 0 {
				continue
			}
			var body any
			hdr := slices.Clone(c.hdr)
			if method != "GET" && method != "DELETE" {
				body = "{}"
				if c.col != "simple" {
					hdr = append(hdr, "Content-Type: application/json")
				}
			}
			if method == "GET" && (pattern == "/ws/chat" || pattern == "/acp" || pattern == "/ws/sops/runs") {
				hdr = append(hdr, wsUpgradeHeaders...)
			}
			if row.route == "POST /admin/shutdown" && c.col == "owner" {
				last = func() {
					if r := g.Do(method, path, body, hdr...); r.Code != c.want {
						t.Errorf("%s × owner: %d, want %d (%s)", row.route, r.Code, c.want, r.Raw)
					}
				}
				got[i] = c.want
				continue
			}
			r := g.Do(method, path, body, hdr...)
			got[i] = r.Code
			if r.Code != c.want {
				t.Errorf("%s × %s: %d, want %d (%s)", row.route, c.col, r.Code, c.want, r.Raw)
			}
		}
		if t.Failed() {
			t.Logf("actual: {%q, %s},", row.route, strings.Trim(strings.Join(strings.Fields(fmt.Sprint(got)), ", "), "[]"))
		}
	}
	if t.Failed() {
		return
	}
	last()
}

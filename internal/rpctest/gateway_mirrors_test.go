package rpctest

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/zeroclaw-go/zeroclaw/internal/api"
)

const gwMirrorsConfig = gwBaseConfig + `
[skill_bundles.team]
`

// mirrorRoute is one request of the doctor, personality, skills and config mirrors.
type mirrorRoute struct {
	method, path string
	body         any
}

var mirrorRoutes = []mirrorRoute{
	{"GET", "/api/sessions/running", nil},
	{"GET", "/api/doctor?offline=true", nil},
	{"POST", "/api/doctor", map[string]any{"offline": true}},
	{"GET", "/api/personality?agent=default", nil},
	{"GET", "/api/personality/templates", nil},
	{"GET", "/api/personality/SOUL.md?agent=default", nil},
	{"PUT", "/api/personality/SOUL.md?agent=default", map[string]any{"content": "x"}},
	{"GET", "/api/skills/bundles", nil},
	{"GET", "/api/skills/bundles/team/skills", nil},
	{"POST", "/api/skills/bundles/team/skills", map[string]any{"name": "x", "frontmatter": map[string]any{"description": "d"}}},
	{"GET", "/api/skills/bundles/team/skills/x", nil},
	{"PUT", "/api/skills/bundles/team/skills/x", map[string]any{"frontmatter": map[string]any{"description": "d"}}},
	{"DELETE", "/api/skills/bundles/team/skills/x", nil},
	{"GET", "/api/config/templates", nil},
	{"GET", "/api/config/sections", nil},
	{"GET", "/api/config/sections/agents", nil},
	{"GET", "/api/config/status", nil},
	{"GET", "/api/config/catalog", nil},
	{"GET", "/api/config/catalog/models?model_provider=openai", nil},
	{"GET", "/api/config/map-keys?path=agents", nil},
	{"GET", "/api/config/resolve-alias-source?source=agents", nil},
	{"POST", "/api/config/map-key", map[string]any{"path": "agents", "key": "other"}},
	{"DELETE", "/api/config/map-key?path=agents&key=other", nil},
	{"POST", "/api/config/rename-map-key", map[string]any{"path": "agents", "from": "a", "to": "b"}},
}

// The doctor, personality, skills and config mirrors are the same methods as the socket's, with upstream's
// paths: a paired admin device reaches them, no token is 401 on every one, and a device whose profile lacks the
// method's grant is 403 naming the grant.
func TestGatewayMirrorRoutes(t *testing.T) {
	d, g, code := startGateway(t, gwMirrorsConfig)
	auth := pairOnce(t, g, code)

	doc := g.do("GET", "/api/doctor?offline=true", nil, auth).want(t, 200)
	if _, ok := doc.body["summary"].(map[string]any); !ok || doc.body["results"] == nil {
		t.Fatalf("GET /api/doctor %s", doc.raw)
	}
	if _, ok := g.do("POST", "/api/doctor", "", auth).want(t, 200).body["summary"]; !ok {
		t.Fatal("POST /api/doctor without a body has no summary")
	}

	list := g.do("GET", "/api/personality?agent=default", nil, auth).want(t, 200)
	if list.body["max_chars"] != float64(20000) || !strings.Contains(string(list.raw), `"SOUL.md"`) {
		t.Fatalf("personality list %s", list.raw)
	}
	g.do("PUT", "/api/personality/SOUL.md?agent=default", map[string]any{"content": "Be brief."}, auth).want(t, 200)
	soul, err := os.ReadFile(filepath.Join(d.ConfigDir, "agents", "default", "workspace", "SOUL.md"))
	if err != nil || string(soul) != "Be brief." {
		t.Fatalf("SOUL.md on disk %q, %v", soul, err)
	}
	if got := g.do("GET", "/api/personality/SOUL.md?agent=default", nil, auth).want(t, 200); got.body["content"] != "Be brief." {
		t.Fatalf("personality get %s", got.raw)
	}
	g.do("GET", "/api/personality/passwd?agent=default", nil, auth).want(t, 400)
	if tpl := g.do("GET", "/api/personality/templates", nil, auth).want(t, 200); tpl.body["preset"] != "default" {
		t.Fatalf("personality templates %s", tpl.raw)
	}

	if b := g.do("GET", "/api/skills/bundles", nil, auth).want(t, 200); !strings.Contains(string(b.raw), `"alias":"team"`) {
		t.Fatalf("skills bundles %s", b.raw)
	}
	g.do("POST", "/api/skills/bundles/team/skills", map[string]any{"name": "triage",
		"frontmatter": map[string]any{"description": "Sorts new issues."}, "body": "Label them."}, auth).want(t, 200)
	if l := g.do("GET", "/api/skills/bundles/team/skills", nil, auth).want(t, 200); !strings.Contains(string(l.raw), `"name":"triage"`) {
		t.Fatalf("skills list %s", l.raw)
	}
	// The path names the skill: a body naming another one does not retarget the write.
	g.do("PUT", "/api/skills/bundles/team/skills/triage", map[string]any{"name": "other",
		"frontmatter": map[string]any{"description": "Sorts new issues."}, "body": "Label them within a day."}, auth).want(t, 200)
	if r := g.do("GET", "/api/skills/bundles/team/skills/triage", nil, auth).want(t, 200); r.body["body"] != "Label them within a day.\n" {
		t.Fatalf("skills read %s", r.raw)
	}
	if r := g.do("DELETE", "/api/skills/bundles/team/skills/triage", nil, auth).want(t, 200); r.body["deleted"] != true {
		t.Fatalf("skills delete %s", r.raw)
	}
	if l := g.do("GET", "/api/skills/bundles/team/skills", nil, auth).want(t, 200); strings.Contains(string(l.raw), "triage") {
		t.Fatalf("skills list after delete %s", l.raw)
	}

	if r := g.do("GET", "/api/config/templates", nil, auth).want(t, 200); r.body["templates"] == nil {
		t.Fatalf("config templates %s", r.raw)
	}
	if r := g.do("GET", "/api/config/sections", nil, auth).want(t, 200); r.body["sections"] == nil {
		t.Fatalf("config sections %s", r.raw)
	}
	if r := g.do("GET", "/api/config/sections/agents", nil, auth).want(t, 200); r.body["key"] != "agents" || r.body["label"] == nil {
		t.Fatalf("config section %s", r.raw)
	}
	g.do("GET", "/api/config/sections/nope", nil, auth).want(t, 404)
	if r := g.do("GET", "/api/config/status", nil, auth).want(t, 200); r.body["needs_quickstart"] == nil {
		t.Fatalf("config status %s", r.raw)
	}
	g.do("POST", "/api/config/map-key", map[string]any{"path": "skill_bundles", "key": "ops"}, auth).want(t, 200)
	if r := g.do("GET", "/api/config/map-keys?path=skill_bundles", nil, auth).want(t, 200); !strings.Contains(string(r.raw), `"ops"`) {
		t.Fatalf("map keys after create %s", r.raw)
	}
	g.do("DELETE", "/api/config/map-key?path=skill_bundles&key=ops", nil, auth).want(t, 200)
	if r := g.do("GET", "/api/config/map-keys?path=skill_bundles", nil, auth).want(t, 200); strings.Contains(string(r.raw), `"ops"`) {
		t.Fatalf("map keys after delete %s", r.raw)
	}
	g.do("POST", "/api/config/map-key", "not json", auth).want(t, 400)

	for _, rt := range mirrorRoutes {
		if r := g.do(rt.method, rt.path, rt.body); r.code != 401 {
			t.Errorf("%s %s without a token: %d %s", rt.method, rt.path, r.code, r.raw)
		}
	}
}

// A device whose profile grants only status:read is refused every mirror with 403 naming the missing grant.
func TestGatewayMirrorRoutesNeedGrants(t *testing.T) {
	cfg := gwMirrorsConfig + `
[permission_profiles.viewer]
grants = ["status:read"]

[gateway]
device_permission_profiles = ["viewer"]
`
	_, g, code := startGateway(t, cfg)
	auth := pairOnce(t, g, code)
	g.do("GET", "/api/status", nil, auth).want(t, 200)
	for _, rt := range mirrorRoutes {
		r := g.do(rt.method, rt.path, rt.body, auth)
		msg, _ := r.body["error"].(string)
		if r.code != 403 || !strings.Contains(msg, ":") {
			t.Errorf("%s %s as a viewer: %d %s", rt.method, rt.path, r.code, r.raw)
		}
	}
}

// An id or name that names nothing is 404 on every /api family, as upstream's REST routes answer, even where the
// socket method answers with upstream's -32602 (cron, skills); malformed input stays 400. (Listing the runs or
// messages of an unknown id is an empty list and deleting an unknown session succeeds, as the methods answer.)
func TestGatewayNotFoundIs404(t *testing.T) {
	_, g, code := startGateway(t, gwMirrorsConfig)
	auth := pairOnce(t, g, code)
	for _, rt := range []mirrorRoute{
		{"PATCH", "/api/cron/nope", map[string]any{"name": "x"}},
		{"DELETE", "/api/cron/nope", nil},
		{"POST", "/api/cron/nope/run", nil},
		{"GET", "/api/skills/bundles/team/skills/nope", nil},
		{"DELETE", "/api/skills/bundles/team/skills/nope", nil},
		{"GET", "/api/sessions/nope/state", nil},
		{"DELETE", "/api/devices/nope", nil},
		{"POST", "/api/devices/nope/token/rotate", nil},
	} {
		r := g.do(rt.method, rt.path, rt.body, auth)
		if r.code != 404 || !strings.Contains(strings.ToLower(r.body["error"].(string)), "no") {
			t.Errorf("%s %s: %d %s", rt.method, rt.path, r.code, r.raw)
		}
	}
	g.do("GET", "/api/skills/bundles/undefined/skills/x", nil, auth).want(t, 400)
	g.do("PATCH", "/api/cron/nope", "not json", auth).want(t, 400)
	g.do("GET", "/api/cron/nope/runs?limit=-1", nil, auth).want(t, 400)
}

// /api/sessions/running lists a session while its turn runs (the backend holds the turn open) and not after.
func TestGatewaySessionsRunning(t *testing.T) {
	entered, release := make(chan struct{}), make(chan struct{})
	held := func(w http.ResponseWriter, r *http.Request) {
		close(entered)
		select {
		case <-release:
		case <-r.Context().Done():
			return
		}
		stream(ctSSE, openAIText(3, 1, "done"))(w, r)
	}
	model := newLLM(t, held)
	d, g, code := startGateway(t, agentConfig(fakeProviderTOML("openai", model.URL), "openai.fake", "full", ""))
	auth := pairOnce(t, g, code)
	c := dialRC(t, d, "")
	sid := c.newSession(api.SessionNewParams{AgentAlias: "a"}).SessionID
	if r := g.do("GET", "/api/sessions/running", nil, auth).want(t, 200); strings.TrimSpace(string(r.raw)) != `{"sessions":[]}` {
		t.Fatalf("running before the turn: %s", r.raw)
	}
	id := c.send(api.MethodSessionPrompt, api.SessionPromptParams{SessionID: sid, Prompt: "hold"})
	<-entered
	// The turn's start (the session marked running, the prompt stored) commits beside the provider request, so
	// the request can arrive a moment before the commit: the listing must show the session running while the
	// provider holds the turn, not necessarily at the instant the request arrived.
	for deadline := time.Now().Add(10 * time.Second); ; {
		r := g.do("GET", "/api/sessions/running", nil, auth).want(t, 200)
		if strings.Contains(string(r.raw), `"session_id":"`+sid+`"`) && strings.Contains(string(r.raw), `"state":"running"`) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("running during the turn: %s", r.raw)
		}
		time.Sleep(5 * time.Millisecond)
	}
	if all := g.do("GET", "/api/sessions", nil, auth).want(t, 200); !strings.Contains(string(all.raw), sid) {
		t.Fatalf("sessions %s", all.raw)
	}
	close(release)
	if tr := c.await(id, hooks{}); tr.result.Outcome != api.OutcomeCompleted {
		t.Fatalf("turn: %+v", tr.result)
	}
	if r := g.do("GET", "/api/sessions/running", nil, auth).want(t, 200); strings.TrimSpace(string(r.raw)) != `{"sessions":[]}` {
		t.Fatalf("running after the turn: %s", r.raw)
	}
}

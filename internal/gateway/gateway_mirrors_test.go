package gateway_test

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/zeroclaw-go/zeroclaw/internal/api"
	"github.com/zeroclaw-go/zeroclaw/internal/rpctest"
)

const gwMirrorsConfig = rpctest.GatewayConfig + `
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
	t.Parallel()
	d, g, code := rpctest.StartGateway(t, gwMirrorsConfig)
	auth := rpctest.PairOnce(t, g, code)

	doc := g.Do("GET", "/api/doctor?offline=true", nil, auth).Want(t, 200)
	if _, ok := doc.Body["summary"].(map[string]any); !ok || doc.Body["results"] == nil {
		t.Fatalf("GET /api/doctor %s", doc.Raw)
	}
	if _, ok := g.Do("POST", "/api/doctor", "", auth).Want(t, 200).Body["summary"]; !ok {
		t.Fatal("POST /api/doctor without a body has no summary")
	}

	list := g.Do("GET", "/api/personality?agent=default", nil, auth).Want(t, 200)
	if list.Body["max_chars"] != float64(20000) || !strings.Contains(string(list.Raw), `"SOUL.md"`) {
		t.Fatalf("personality list %s", list.Raw)
	}
	g.Do("PUT", "/api/personality/SOUL.md?agent=default", map[string]any{"content": "Be brief."}, auth).Want(t, 200)
	soul, err := os.ReadFile(filepath.Join(d.ConfigDir, "agents", "default", "workspace", "SOUL.md"))
	if err != nil || string(soul) != "Be brief." {
		t.Fatalf("SOUL.md on disk %q, %v", soul, err)
	}
	if got := g.Do("GET", "/api/personality/SOUL.md?agent=default", nil, auth).Want(t, 200); got.Body["content"] != "Be brief." {
		t.Fatalf("personality get %s", got.Raw)
	}
	g.Do("GET", "/api/personality/passwd?agent=default", nil, auth).Want(t, 400)
	if tpl := g.Do("GET", "/api/personality/templates", nil, auth).Want(t, 200); tpl.Body["preset"] != "default" {
		t.Fatalf("personality templates %s", tpl.Raw)
	}

	if b := g.Do("GET", "/api/skills/bundles", nil, auth).Want(t, 200); !strings.Contains(string(b.Raw), `"alias":"team"`) {
		t.Fatalf("skills bundles %s", b.Raw)
	}
	g.Do("POST", "/api/skills/bundles/team/skills", map[string]any{"name": "triage",
		"frontmatter": map[string]any{"description": "Sorts new issues."}, "body": "Label them."}, auth).Want(t, 200)
	if l := g.Do("GET", "/api/skills/bundles/team/skills", nil, auth).Want(t, 200); !strings.Contains(string(l.Raw), `"name":"triage"`) {
		t.Fatalf("skills list %s", l.Raw)
	}
	// The path names the skill: a body naming another one does not retarget the write.
	g.Do("PUT", "/api/skills/bundles/team/skills/triage", map[string]any{"name": "other",
		"frontmatter": map[string]any{"description": "Sorts new issues."}, "body": "Label them within a day."}, auth).Want(t, 200)
	if r := g.Do("GET", "/api/skills/bundles/team/skills/triage", nil, auth).Want(t, 200); r.Body["body"] != "Label them within a day.\n" {
		t.Fatalf("skills read %s", r.Raw)
	}
	if r := g.Do("DELETE", "/api/skills/bundles/team/skills/triage", nil, auth).Want(t, 200); r.Body["deleted"] != true {
		t.Fatalf("skills delete %s", r.Raw)
	}
	if l := g.Do("GET", "/api/skills/bundles/team/skills", nil, auth).Want(t, 200); strings.Contains(string(l.Raw), "triage") {
		t.Fatalf("skills list after delete %s", l.Raw)
	}

	if r := g.Do("GET", "/api/config/templates", nil, auth).Want(t, 200); r.Body["templates"] == nil {
		t.Fatalf("config templates %s", r.Raw)
	}
	if r := g.Do("GET", "/api/config/sections", nil, auth).Want(t, 200); r.Body["sections"] == nil {
		t.Fatalf("config sections %s", r.Raw)
	}
	if r := g.Do("GET", "/api/config/sections/agents", nil, auth).Want(t, 200); r.Body["key"] != "agents" || r.Body["label"] == nil {
		t.Fatalf("config section %s", r.Raw)
	}
	g.Do("GET", "/api/config/sections/nope", nil, auth).Want(t, 404)
	if r := g.Do("GET", "/api/config/status", nil, auth).Want(t, 200); r.Body["needs_quickstart"] == nil {
		t.Fatalf("config status %s", r.Raw)
	}
	g.Do("POST", "/api/config/map-key", map[string]any{"path": "skill_bundles", "key": "ops"}, auth).Want(t, 200)
	if r := g.Do("GET", "/api/config/map-keys?path=skill_bundles", nil, auth).Want(t, 200); !strings.Contains(string(r.Raw), `"ops"`) {
		t.Fatalf("map keys after create %s", r.Raw)
	}
	g.Do("DELETE", "/api/config/map-key?path=skill_bundles&key=ops", nil, auth).Want(t, 200)
	if r := g.Do("GET", "/api/config/map-keys?path=skill_bundles", nil, auth).Want(t, 200); strings.Contains(string(r.Raw), `"ops"`) {
		t.Fatalf("map keys after delete %s", r.Raw)
	}
	g.Do("POST", "/api/config/map-key", "not json", auth).Want(t, 400)

	for _, rt := range mirrorRoutes {
		if r := g.Do(rt.method, rt.path, rt.body); r.Code != 401 {
			t.Errorf("%s %s without a token: %d %s", rt.method, rt.path, r.Code, r.Raw)
		}
	}
}

// A device whose profile grants only status:read is refused every mirror with 403 naming the missing grant.
func TestGatewayMirrorRoutesNeedGrants(t *testing.T) {
	t.Parallel()
	cfg := gwMirrorsConfig + `
[permission_profiles.viewer]
grants = ["status:read"]

[gateway]
device_permission_profiles = ["viewer"]
`
	_, g, code := rpctest.StartGateway(t, cfg)
	auth := rpctest.PairOnce(t, g, code)
	g.Do("GET", "/api/status", nil, auth).Want(t, 200)
	for _, rt := range mirrorRoutes {
		r := g.Do(rt.method, rt.path, rt.body, auth)
		msg, _ := r.Body["error"].(string)
		if r.Code != 403 || !strings.Contains(msg, ":") {
			t.Errorf("%s %s as a viewer: %d %s", rt.method, rt.path, r.Code, r.Raw)
		}
	}
}

// An id or name that names nothing is 404 on every /api family, as upstream's REST routes answer, even where the
// socket method answers with upstream's -32602 (cron, skills); malformed input stays 400. (Listing the runs or
// messages of an unknown id is an empty list and deleting an unknown session succeeds, as the methods answer.)
func TestGatewayNotFoundIs404(t *testing.T) {
	t.Parallel()
	_, g, code := rpctest.StartGateway(t, gwMirrorsConfig)
	auth := rpctest.PairOnce(t, g, code)
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
		r := g.Do(rt.method, rt.path, rt.body, auth)
		if r.Code != 404 || !strings.Contains(strings.ToLower(r.Body["error"].(string)), "no") {
			t.Errorf("%s %s: %d %s", rt.method, rt.path, r.Code, r.Raw)
		}
	}
	g.Do("GET", "/api/skills/bundles/undefined/skills/x", nil, auth).Want(t, 400)
	g.Do("PATCH", "/api/cron/nope", "not json", auth).Want(t, 400)
	g.Do("GET", "/api/cron/nope/runs?limit=-1", nil, auth).Want(t, 400)
}

// /api/sessions/running lists a session while its turn runs (the backend holds the turn open) and not after.
func TestGatewaySessionsRunning(t *testing.T) {
	t.Parallel()
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
	d, g, code := rpctest.StartGateway(t, agentConfig(fakeProviderTOML("openai", model.URL), "openai.fake", "full", ""))
	auth := rpctest.PairOnce(t, g, code)
	c := dialRC(t, d, "")
	sid := c.newSession(api.SessionNewParams{AgentAlias: "a"}).SessionID
	if r := g.Do("GET", "/api/sessions/running", nil, auth).Want(t, 200); strings.TrimSpace(string(r.Raw)) != `{"sessions":[]}` {
		t.Fatalf("running before the turn: %s", r.Raw)
	}
	id := c.send(api.MethodSessionPrompt, api.SessionPromptParams{SessionID: sid, Prompt: "hold"})
	<-entered
	// The turn's start (the session marked running, the prompt stored) commits beside the provider request, so
	// the request can arrive a moment before the commit: the listing must show the session running while the
	// provider holds the turn, not necessarily at the instant the request arrived.
	for deadline := time.Now().Add(10 * time.Second); ; {
		r := g.Do("GET", "/api/sessions/running", nil, auth).Want(t, 200)
		if strings.Contains(string(r.Raw), `"session_id":"`+sid+`"`) && strings.Contains(string(r.Raw), `"state":"running"`) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("running during the turn: %s", r.Raw)
		}
		time.Sleep(5 * time.Millisecond)
	}
	if all := g.Do("GET", "/api/sessions", nil, auth).Want(t, 200); !strings.Contains(string(all.Raw), sid) {
		t.Fatalf("sessions %s", all.Raw)
	}
	close(release)
	if tr := c.await(id, hooks{}); tr.result.Outcome != api.OutcomeCompleted {
		t.Fatalf("turn: %+v", tr.result)
	}
	if r := g.Do("GET", "/api/sessions/running", nil, auth).Want(t, 200); strings.TrimSpace(string(r.Raw)) != `{"sessions":[]}` {
		t.Fatalf("running after the turn: %s", r.Raw)
	}
}

package gateway_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/zeroclaw-go/zeroclaw/internal/api"
	"github.com/zeroclaw-go/zeroclaw/internal/mcpserver"
	"github.com/zeroclaw-go/zeroclaw/internal/rpctest"
)

// mcpConfig adds a device profile that may read memories, sessions and jobs but write nothing.
const mcpConfig = rpctest.GatewayProfilesConfig + `
[permission_profiles.reader]
grants = ["memory:read", "sessions:read", "cron:read"]
`

// bearer adds a paired token to every request of an MCP client ("Authorization: Bearer ..." as PairOnce
// returns it).
type bearer struct {
	header string
	rt     http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	k, v, _ := strings.Cut(b.header, ": ")
	r.Header.Set(k, v)
	return b.rt.RoundTrip(r)
}

// bearerClient is an HTTP client that sends auth with every request.
func bearerClient(t testing.TB, auth string) *http.Client {
	tr := &http.Transport{Proxy: nil}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: bearer{header: auth, rt: tr}}
}

// mcpConnect opens an MCP session on the gateway's /mcp with the official SDK's client.
func mcpConnect(t *testing.T, g *rpctest.Gateway, auth string) (*mcp.ClientSession, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	c := mcp.NewClient(&mcp.Implementation{Name: "zeroclaw-test", Version: "1"}, nil)
	cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: g.Base + "/mcp", MaxRetries: -1,
		HTTPClient: bearerClient(t, auth)}, nil)
	if err == nil {
		t.Cleanup(func() { _ = cs.Close() })
	}
	return cs, err
}

func mustMCP(t *testing.T, g *rpctest.Gateway, auth string) *mcp.ClientSession {
	t.Helper()
	cs, err := mcpConnect(t, g, auth)
	if err != nil {
		t.Fatalf("MCP connect: %v", err)
	}
	return cs
}

// callTool calls name and returns the result, failing on a protocol error (a refusal is a tool result).
func callTool(t *testing.T, cs *mcp.ClientSession, name string, args any) *mcp.CallToolResult {
	t.Helper()
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("tools/call %s: %v", name, err)
	}
	return res
}

// ok returns a successful result's structured content as JSON.
func ok(t *testing.T, res *mcp.CallToolResult) string {
	t.Helper()
	if res.IsError {
		t.Fatalf("tool error: %s", text(res))
	}
	raw, _ := json.Marshal(res.StructuredContent)
	var fromText, structured any
	if err := json.Unmarshal([]byte(text(res)), &fromText); err != nil {
		t.Fatalf("text is not JSON: %s", text(res))
	}
	_ = json.Unmarshal(raw, &structured)
	if !reflect.DeepEqual(fromText, structured) {
		t.Fatalf("text %s and structuredContent %s differ", text(res), raw)
	}
	return text(res)
}

// refused checks res is a tool error with code, and returns its message.
func refused(t *testing.T, res *mcp.CallToolResult, code int) string {
	t.Helper()
	if !res.IsError {
		t.Fatalf("want a tool error %d, got %s", code, text(res))
	}
	raw, _ := json.Marshal(res.StructuredContent)
	var body struct {
		Error struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.Unmarshal(raw, &body); err != nil || body.Error.Code != code {
		t.Fatalf("want error code %d, got %s", code, raw)
	}
	if text(res) != body.Error.Message {
		t.Fatalf("text %q, message %q", text(res), body.Error.Message)
	}
	return body.Error.Message
}

func text(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

// The owner's device lists every tool, each with an object schema, and calls each one: what memory_store
// stores memory_search finds (and the native route sees), cron_add's job is in cron_list, session_search and
// session_messages read the chat store, and arguments outside a tool's schema are refused before the daemon
// is asked.
func TestMCPGatewayOwnerCallsEveryTool(t *testing.T) {
	t.Parallel()
	d, g, code := rpctest.StartGateway(t, mcpConfig)
	owner := rpctest.PairOnce(t, g, code)
	cs := mustMCP(t, g, owner)
	rc := dialRC(t, d, "")
	chat := rc.newSession(api.SessionNewParams{AgentAlias: "default"})
	if tr := rc.prompt(chat.SessionID, "remember the teal kettle", hooks{}); tr.err != nil {
		t.Fatalf("prompt: %v", tr.err)
	}

	if init := cs.InitializeResult(); init.ServerInfo.Name != "zeroclaw" || init.Capabilities.Tools == nil {
		t.Fatalf("initialize: %+v", init)
	}
	list, err := cs.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range list.Tools {
		names = append(names, tl.Name)
		schema, _ := json.Marshal(tl.InputSchema)
		if !strings.Contains(string(schema), `"type":"object"`) || !strings.Contains(tl.Description, "Needs the grant ") {
			t.Errorf("tool %s: schema %s, description %q", tl.Name, schema, tl.Description)
		}
	}
	slices.Sort(names)
	want := []string{mcpserver.ToolCronAdd, mcpserver.ToolCronList, mcpserver.ToolMemorySearch, mcpserver.ToolMemoryStore,
		mcpserver.ToolSessionMessages, mcpserver.ToolSessionSearch, mcpserver.ToolSopList, mcpserver.ToolSopRun, mcpserver.ToolSopRuns}
	if !slices.Equal(names, want) {
		t.Fatalf("tools %v, want %v", names, want)
	}

	stored := ok(t, callTool(t, cs, mcpserver.ToolMemoryStore, map[string]any{"key": "color", "content": "the user likes teal", "agent": "default"}))
	if !strings.Contains(stored, `"stored":true`) {
		t.Fatalf("memory_store: %s", stored)
	}
	if found := ok(t, callTool(t, cs, mcpserver.ToolMemorySearch, map[string]any{"query": "teal", "agent": "default"})); !strings.Contains(found, `"key":"color"`) {
		t.Fatalf("memory_search: %s", found)
	}
	if l := g.Do("GET", "/api/memory?agent=default", nil, owner).Want(t, 200); !strings.Contains(string(l.Raw), "teal") {
		t.Fatalf("the native route does not see the MCP memory: %s", l.Raw)
	}

	job := ok(t, callTool(t, cs, mcpserver.ToolCronAdd, map[string]any{"agent": "default", "schedule": "0 9 * * 1-5", "prompt": "summarise the news", "name": "news"}))
	if !strings.Contains(job, `"name":"news"`) {
		t.Fatalf("cron_add: %s", job)
	}
	if jobs := ok(t, callTool(t, cs, mcpserver.ToolCronList, nil)); !strings.Contains(jobs, `"name":"news"`) {
		t.Fatalf("cron_list: %s", jobs)
	}
	// A bad schedule is the native method's refusal, passed on as it is.
	refused(t, callTool(t, cs, mcpserver.ToolCronAdd, map[string]any{"agent": "default", "schedule": "every blue moon", "prompt": "x"}), -32602)

	if none := ok(t, callTool(t, cs, mcpserver.ToolSessionSearch, map[string]any{"query": "nothing like this", "limit": 5})); !strings.Contains(none, `"sessions":[]`) {
		t.Fatalf("session_search of nothing: %s", none)
	}
	if found := ok(t, callTool(t, cs, mcpserver.ToolSessionSearch, map[string]any{"query": "teal kettle"})); !strings.Contains(found, chat.SessionID) {
		t.Fatalf("session_search: %s", found)
	}
	msgs := ok(t, callTool(t, cs, mcpserver.ToolSessionMessages, map[string]any{"session_id": chat.SessionID, "limit": 10}))
	if !strings.Contains(msgs, "remember the teal kettle") || !strings.Contains(msgs, `"role":"user"`) {
		t.Fatalf("session_messages: %s", msgs)
	}

	// The schema is enforced: a missing required argument, a wrong type, an argument the tool does not have.
	for _, args := range []map[string]any{
		{},
		{"query": 7},
		{"query": "teal", "limit": 0},
		{"query": "teal", "drop_table": true},
	} {
		msg := refused(t, callTool(t, cs, mcpserver.ToolMemorySearch, args), -32602)
		if !strings.Contains(msg, "invalid arguments for memory_search") {
			t.Errorf("args %v: %q", args, msg)
		}
	}
	// An unknown tool is a protocol error.
	if _, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "shell", Arguments: map[string]any{}}); err == nil || !strings.Contains(err.Error(), "unknown tool") {
		t.Fatalf("unknown tool: %v", err)
	}
}

// A device acts with its grants: the reader reads but may not store or schedule, and what it was refused did
// not happen; the viewer (status:read) may open a session but call no tool.
func TestMCPGatewayGrantsRefuse(t *testing.T) {
	t.Parallel()
	d, g, code := rpctest.StartGateway(t, mcpConfig)
	owner := rpctest.PairOnce(t, g, code)
	reader := mustMCP(t, g, rpctest.PairWithProfile(t, d, g, "reader"))
	viewer := mustMCP(t, g, rpctest.PairWithProfile(t, d, g, "viewer"))

	msg := refused(t, callTool(t, reader, mcpserver.ToolMemoryStore, map[string]any{"key": "k", "content": "planted", "agent": "default"}), -32012)
	if msg != "Forbidden: missing grant memory:write" {
		t.Fatalf("refusal %q", msg)
	}
	refused(t, callTool(t, reader, mcpserver.ToolCronAdd, map[string]any{"agent": "default", "schedule": "* * * * *", "command": "touch /tmp/pwned"}), -32012)
	// The grant is checked before the arguments: a refused caller learns nothing about them.
	refused(t, callTool(t, reader, mcpserver.ToolMemoryStore, map[string]any{}), -32012)

	ok(t, callTool(t, reader, mcpserver.ToolMemorySearch, map[string]any{"query": "planted", "agent": "default"}))
	ok(t, callTool(t, reader, mcpserver.ToolCronList, nil))
	ok(t, callTool(t, reader, mcpserver.ToolSessionSearch, nil))

	for _, name := range []string{mcpserver.ToolMemorySearch, mcpserver.ToolSessionSearch, mcpserver.ToolCronList} {
		refused(t, callTool(t, viewer, name, map[string]any{"query": "x"}), -32012)
	}

	if l := g.Do("GET", "/api/memory?agent=default", nil, owner).Want(t, 200); strings.Contains(string(l.Raw), "planted") {
		t.Fatalf("a refused memory_store stored: %s", l.Raw)
	}
	if l := g.Do("GET", "/api/cron", nil, owner).Want(t, 200); strings.Contains(string(l.Raw), "pwned") {
		t.Fatalf("a refused cron_add scheduled: %s", l.Raw)
	}

	// The grants are the config's now, not the session's first: given memory:write, the open session stores.
	rc := dialRC(t, d, "")
	rc.mustCall(api.MethodConfigSet, api.ConfigSetParams{Prop: "permission_profiles.reader.grants",
		Value: json.RawMessage(`["memory:read","sessions:read","cron:read","memory:write"]`)}, nil)
	ok(t, callTool(t, reader, mcpserver.ToolMemoryStore, map[string]any{"key": "k", "content": "granted now", "agent": "default"}))
	if l := g.Do("GET", "/api/memory?agent=default", nil, owner).Want(t, 200); !strings.Contains(string(l.Raw), "granted now") {
		t.Fatalf("the store after the grant: %s", l.Raw)
	}
	rc.mustCall(api.MethodConfigSet, api.ConfigSetParams{Prop: "permission_profiles.reader.grants",
		Value: json.RawMessage(`["memory:read"]`)}, nil)
	refused(t, callTool(t, reader, mcpserver.ToolMemoryStore, map[string]any{"key": "k", "content": "revoked", "agent": "default"}), -32012)
	refused(t, callTool(t, reader, mcpserver.ToolCronList, nil), -32012)
}

// mcpInit is an initialize request as a streamable HTTP client sends it.
const mcpInit = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`

var mcpHeaders = []string{"Content-Type: application/json", "Accept: application/json, text/event-stream"}

// Who may open a session: no token, a wrong one, a token in the URL instead of the header, a foreign Origin, a
// rebinding Host and a form's content type are refused before any MCP is spoken; a body over the limit is 413
// and the session stays usable; a session id is worth nothing to another device.
func TestMCPGatewayAdversarial(t *testing.T) {
	t.Parallel()
	d, g, code := rpctest.StartGateway(t, mcpConfig)
	owner := rpctest.PairOnce(t, g, code)
	reader := rpctest.PairWithProfile(t, d, g, "reader")
	tok := strings.TrimPrefix(owner, "Authorization: Bearer ")

	g.Do("POST", "/mcp", mcpInit, mcpHeaders...).Want(t, 401)
	g.Do("POST", "/mcp", mcpInit, append([]string{"Authorization: Bearer not-a-token"}, mcpHeaders...)...).Want(t, 401)
	g.Do("POST", "/mcp?token="+tok, mcpInit, mcpHeaders...).Want(t, 401)
	g.Do("POST", "/mcp?access_token="+tok, mcpInit, mcpHeaders...).Want(t, 401)
	g.Do("POST", "/mcp", mcpInit, append([]string{owner, "Origin: http://evil.example"}, mcpHeaders...)...).Want(t, 403)
	self := strings.TrimPrefix(g.Base, "http://")
	g.Do("POST", "/mcp", mcpInit, append([]string{owner, "Host: evil.example:" + self[strings.LastIndex(self, ":")+1:]}, mcpHeaders...)...).Want(t, 403)
	g.Do("POST", "/mcp", mcpInit, owner, "Content-Type: text/plain", "Accept: application/json, text/event-stream").Want(t, 415)

	cs := mustMCP(t, g, owner)
	sid := cs.ID()
	if sid == "" {
		t.Fatal("no session id")
	}
	huge := fmt.Sprintf(`{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"memory_store","arguments":{"key":"k","content":%q}}}`,
		strings.Repeat("x", 70<<10))
	g.Do("POST", "/mcp", huge, append([]string{owner, "Mcp-Session-Id: " + sid}, mcpHeaders...)...).Want(t, 413)
	ok(t, callTool(t, cs, mcpserver.ToolCronList, nil)) // the session survived the refused frame

	// Another device presenting the owner's session id: refused, and the owner's session is unharmed.
	stolen := `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"memory_store","arguments":{"key":"k","content":"hijack","agent":"default"}}}`
	r := g.Do("POST", "/mcp", stolen, append([]string{reader, "Mcp-Session-Id: " + sid}, mcpHeaders...)...).Want(t, 403)
	if !strings.Contains(string(r.Raw), "another client") {
		t.Fatalf("hijack refusal: %s", r.Raw)
	}
	g.Do("DELETE", "/mcp", nil, reader, "Mcp-Session-Id: "+sid).Want(t, 403)
	ok(t, callTool(t, cs, mcpserver.ToolCronList, nil))
	if l := g.Do("GET", "/api/memory?agent=default", nil, owner).Want(t, 200); strings.Contains(string(l.Raw), "hijack") {
		t.Fatalf("a hijacked session stored: %s", l.Raw)
	}
	// An unknown session is the transport's 404 (the client initializes again).
	g.Do("POST", "/mcp", stolen, append([]string{owner, "Mcp-Session-Id: 0123"}, mcpHeaders...)...).Want(t, 404)
}

// Sessions are capped, per device and in all: a device with DefaultMaxSessionsPerOwner open gets 503 (with
// Retry-After) for one more while another device still opens its own, until DefaultMaxSessions are open in all;
// then every device is refused, while the open sessions are still served. Ending one (DELETE) frees its place.
// Requests that open nothing (no initialize, a bad body) take no place.
func TestMCPGatewaySessionCap(t *testing.T) {
	t.Parallel()
	d, g, code := rpctest.StartGateway(t, mcpConfig)
	owner := rpctest.PairOnce(t, g, code)
	open := func(auth string) rpctest.Response {
		return g.Do("POST", "/mcp", mcpInit, append([]string{auth}, mcpHeaders...)...)
	}
	for range 5 {
		g.Do("POST", "/mcp", `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, append([]string{owner}, mcpHeaders...)...)
		g.Do("POST", "/mcp", `not json`, append([]string{owner}, mcpHeaders...)...)
	}
	devices := []string{owner}
	for len(devices)*mcpserver.DefaultMaxSessionsPerOwner < mcpserver.DefaultMaxSessions {
		devices = append(devices, rpctest.PairWithProfile(t, d, g, "reader"))
	}
	last := rpctest.PairWithProfile(t, d, g, "reader") // opens nothing until the end
	ids := map[string][]string{}
	seen := map[string]bool{}
	for _, dev := range devices {
		for i := range mcpserver.DefaultMaxSessionsPerOwner {
			id := open(dev).Want(t, 200).Header.Get("Mcp-Session-Id")
			if id == "" || seen[id] {
				t.Fatalf("session %d: id %q", i, id)
			}
			seen[id] = true
			ids[dev] = append(ids[dev], id)
		}
		r := open(dev).Want(t, 503)
		if r.Header.Get("Retry-After") == "" || !strings.Contains(string(r.Raw), "too many MCP sessions open for this client (16)") {
			t.Fatalf("over the device's cap: %v %s", r.Header, r.Raw)
		}
	}
	r := open(last).Want(t, 503)
	if !strings.Contains(string(r.Raw), "too many MCP sessions open (64)") {
		t.Fatalf("over the cap: %s", r.Raw)
	}
	// A session already open is still served while new ones are refused.
	sid := ids[owner][0]
	hdr := append([]string{owner, "Mcp-Session-Id: " + sid}, mcpHeaders...)
	g.Do("POST", "/mcp", `{"jsonrpc":"2.0","method":"notifications/initialized"}`, hdr...).Want(t, 202)
	if l := firstEvent(t, g, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`, hdr...); !strings.Contains(l, "memory_search") {
		t.Fatalf("tools/list on an open session: %s", l)
	}

	g.Do("DELETE", "/mcp", nil, owner, "Mcp-Session-Id: "+ids[owner][1]).Want(t, 204)
	deadline := time.Now().Add(10 * time.Second) // the freed place comes back once the session's end is seen
	for {
		r := open(last)
		if r.Code == 200 {
			break
		}
		if r.Code != 503 || time.Now().After(deadline) {
			t.Fatalf("after DELETE: %d %s", r.Code, r.Raw)
		}
		time.Sleep(20 * time.Millisecond)
	}
	open(owner).Want(t, 503)
}

// The daemon's shutdown ends the open MCP sessions (their event streams are requests the gateway's shutdown
// would wait for): with a drain deadline longer than rpctest's 15 s stop limit, a stream left open would fail
// Stop. Every client sees its session end, and no goroutine of the daemon is left.
func TestMCPGatewayShutdownEndsSessions(t *testing.T) {
	t.Parallel()
	d, g, code := rpctest.StartGateway(t, mcpConfig, rpctest.WithDrainTimeout(time.Minute))
	owner := rpctest.PairOnce(t, g, code)
	var sessions []*mcp.ClientSession
	for range 3 {
		cs := mustMCP(t, g, owner)
		ok(t, callTool(t, cs, mcpserver.ToolCronList, nil))
		sessions = append(sessions, cs)
	}
	d.CheckNoGoroutines(t)
	for i, cs := range sessions {
		ended := make(chan struct{})
		go func() { _ = cs.Wait(); close(ended) }()
		select {
		case <-ended:
		case <-time.After(30 * time.Second):
			t.Fatalf("session %d outlived the daemon", i)
		}
	}
}

// firstEvent POSTs body to /mcp with headers and returns the data of the first event of the answer's stream.
func firstEvent(t testing.TB, g *rpctest.Gateway, body string, headers ...string) string {
	t.Helper()
	req, _ := http.NewRequest("POST", g.Base+"/mcp", strings.NewReader(body))
	for _, h := range headers {
		k, v, _ := strings.Cut(h, ": ")
		req.Header.Set(k, v)
	}
	res, err := g.Client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	sc := bufio.NewScanner(res.Body)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		if data, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
			return data
		}
	}
	t.Fatalf("no event in the answer (status %d)", res.StatusCode)
	return ""
}

// The SOP tools: sop_list shows the SOP on disk, sop_run starts a run that the engine drives to completed
// (sop_runs shows it), and a device with sops:read only may list and watch but not run (-32012, no run made).
func TestMCPGatewaySopTools(t *testing.T) {
	t.Parallel()
	cfg := mcpConfig + "\n[sop]\nsops_dir = \"shared/sops\"\n\n[permission_profiles.sopwatch]\ngrants = [\"sops:read\"]\n"
	d, g, code := rpctest.StartGateway(t, cfg)
	owner := rpctest.PairOnce(t, g, code)
	watcher := rpctest.PairWithProfile(t, d, g, "sopwatch")
	dir := filepath.Join(d.ConfigDir, "shared", "sops", "hello")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	for name, body := range map[string]string{
		"SOP.toml": "[sop]\nname = \"hello\"\ndescription = \"say hello\"\nexecution_mode = \"auto\"\nagent = \"default\"\n\n[[triggers]]\ntype = \"manual\"\n",
		"SOP.md":   "## Steps\n1. **Greet** — Say hello.\n",
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := d.Stop(); err != nil { // SOPs load when the daemon starts
		t.Fatal(err)
	}
	d = rpctest.StartOn(t, d.ConfigDir)
	g = rpctest.NewGateway(t, d.GatewayURL(t))

	cs := mustMCP(t, g, owner)
	if list := ok(t, callTool(t, cs, mcpserver.ToolSopList, nil)); !strings.Contains(list, `"name":"hello"`) || !strings.HasPrefix(list, `{"sops":[`) {
		t.Fatalf("sop_list: %s", list)
	}
	var started struct {
		RunID string `json:"run_id"`
	}
	_ = json.Unmarshal([]byte(ok(t, callTool(t, cs, mcpserver.ToolSopRun, map[string]any{"name": "hello", "payload": `{"who":"mcp"}`}))), &started)
	if started.RunID == "" {
		t.Fatal("sop_run gave no run_id")
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		runs := ok(t, callTool(t, cs, mcpserver.ToolSopRuns, map[string]any{"sop": "hello"}))
		if strings.Contains(runs, started.RunID) && strings.Contains(runs, `"status":"completed"`) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the run never completed: %s", runs)
		}
		time.Sleep(20 * time.Millisecond)
	}
	refused(t, callTool(t, cs, mcpserver.ToolSopRun, map[string]any{"name": "no-such-sop"}), -32602) // the native answer, as it is

	w := mustMCP(t, g, watcher)
	ok(t, callTool(t, w, mcpserver.ToolSopList, nil))
	before := ok(t, callTool(t, w, mcpserver.ToolSopRuns, nil))
	if msg := refused(t, callTool(t, w, mcpserver.ToolSopRun, map[string]any{"name": "hello"}), -32012); msg != "Forbidden: missing grant sops:execute" {
		t.Fatalf("watcher's sop_run: %q", msg)
	}
	if after := ok(t, callTool(t, w, mcpserver.ToolSopRuns, nil)); strings.Count(after, `"run_id"`) != strings.Count(before, `"run_id"`) {
		t.Fatalf("a refused sop_run made a run: %s", after)
	}
}

package acp_test

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/zeroclaw-go/zeroclaw/internal/api"
	"github.com/zeroclaw-go/zeroclaw/internal/rpctest"
	"github.com/zeroclaw-go/zeroclaw/internal/rpctest/ndjson"
	"github.com/zeroclaw-go/zeroclaw/internal/store"
)

func TestACPSocketIsPrivate(t *testing.T) {
	d := rpctest.Start(t, rpctest.WithConfig(config("http://127.0.0.1:1")))
	fi, err := os.Stat(acpSock(d))
	if err != nil {
		t.Fatalf("acp.sock: %v", err)
	}
	if fi.Mode().Type() != os.ModeSocket || fi.Mode().Perm() != 0o600 {
		t.Errorf("acp.sock mode = %v, want a 0600 socket", fi.Mode())
	}
	if err := d.Stop(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(acpSock(d)); !os.IsNotExist(err) {
		t.Errorf("acp.sock left behind after shutdown: %v", err)
	}
}

func TestInitializeWithIDZero(t *testing.T) {
	d := rpctest.Start(t, rpctest.WithConfig(config("http://127.0.0.1:1")))
	c := dial(t, d)
	c.Send(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{"fs":{"readTextFile":false}}}}`)
	f := c.Frame()
	if string(f.ID) != "0" || f.Error != nil {
		t.Fatalf("initialize with id 0: %s", f.Raw)
	}
	want := `{"protocolVersion":1,"agentCapabilities":{"loadSession":true,"promptCapabilities":{"image":false,"audio":false,"embeddedContext":true},"mcpCapabilities":{"http":true,"sse":true},"sessionCapabilities":{"resume":{},"close":{}}},"agentInfo":{"name":"zeroclaw-acp","title":"ZeroClaw","version":"` + api.ServerVersion + `"},"authMethods":[]}`
	if string(f.Result) != want {
		t.Errorf("initialize result:\n got  %s\n want %s", f.Result, want)
	}
}

func TestEnvelopeAndUnknownMethod(t *testing.T) {
	d := rpctest.Start(t, rpctest.WithConfig(config("http://127.0.0.1:1")))
	c := dial(t, d)
	wantCode(t, c.call("session/set_mode", map[string]any{"sessionId": "x"}, nil), -32601, "session/set_mode")
	c.Send(`{"jsonrpc":"1.0","id":7,"method":"initialize"}`)
	if f := c.Frame(); f.Error == nil || f.Error.Code != -32600 || string(f.ID) != "7" {
		t.Errorf("bad envelope: %s", f.Raw)
	}
	c.Send(`{not json`)
	if f := c.Frame(); f.Error == nil || f.Error.Code != -32700 {
		t.Errorf("parse error: %s", f.Raw)
	}
	wantCode(t, c.call("session/prompt", map[string]any{"prompt": "hi"}, nil), -32602, "sessionId is required")
	wantCode(t, c.call("session/new", map[string]any{"cwd": 42}, nil), -32602, "cwd must be a string")
}

func TestSessionNewAliasAndCwd(t *testing.T) {
	projects := rpctest.ShortTempDir(t)
	d := rpctest.Start(t, rpctest.WithConfig(config("http://127.0.0.1:1")+fmt.Sprintf("\n[acp]\nallowed_roots = [%q]\n", projects)))
	c := dial(t, d)
	id, ws := c.newSession(map[string]any{})
	wantWS := filepath.Join(d.ConfigDir, "agents", "a", "workspace")
	if ws != wantWS || id == "" {
		t.Errorf("session/new without cwd: %s in %s, want the agent workspace %s", id, ws, wantWS)
	}
	// agentAlias and its aliases; an unknown agent is -32602.
	for _, key := range []string{"agentAlias", "agent_alias", "agent"} {
		if _, ws := c.newSession(map[string]any{key: "a"}); ws != wantWS {
			t.Errorf("%s: workspace %s", key, ws)
		}
		wantCode(t, c.call("session/new", map[string]any{key: "ghost"}, nil), -32602, "ghost")
	}
	// An absolute cwd below [acp] allowed_roots is canonicalized (symlinks resolved) and becomes the workspace.
	proj := filepath.Join(projects, "proj")
	if err := os.MkdirAll(filepath.Join(proj, "sub"), 0o700); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(filepath.Dir(proj), "link")
	if err := os.Symlink(proj, link); err != nil {
		t.Fatal(err)
	}
	real, _ := filepath.EvalSymlinks(proj)
	if _, ws := c.newSession(map[string]any{"cwd": link + "/sub/.."}); ws != real {
		t.Errorf("cwd through a symlink and ..: workspace %s, want %s", ws, real)
	}
	// A relative cwd stays inside the agent workspace; .. cannot leave it; a missing directory is refused.
	if err := os.MkdirAll(filepath.Join(wantWS, "inner"), 0o700); err != nil {
		t.Fatal(err)
	}
	if _, ws := c.newSession(map[string]any{"cwd": "inner"}); ws != filepath.Join(wantWS, "inner") {
		t.Errorf("relative cwd: %s", ws)
	}
	wantCode(t, c.call("session/new", map[string]any{"cwd": "../../.."}, nil), -32602, "leaves the agent's workspace")
	wantCode(t, c.call("session/new", map[string]any{"cwd": "/no/such/dir"}, nil), -32602, "not a usable directory")
	// The install root itself is a placeholder some clients send: the agent workspace is used.
	if _, ws := c.newSession(map[string]any{"cwd": d.ConfigDir}); ws != wantWS {
		t.Errorf("cwd = install root: %s, want %s", ws, wantWS)
	}
}

func TestPromptStreamsAndStoresTheTurn(t *testing.T) {
	f := newLLM(t, answer("Hel", "lo"), answer("again"))
	d := rpctest.Start(t, rpctest.WithConfig(config(f.URL)))
	c := dial(t, d)
	sid, _ := c.newSession(nil)

	ex := c.call("session/prompt", map[string]any{"sessionId": sid, "prompt": "say hello"}, nil)
	if got := stopReason(t, ex); got != "end_turn" {
		t.Fatalf("stopReason = %s", got)
	}
	wantKinds(t, ex.updates, "agent_message_chunk:Hel", "agent_message_chunk:lo")
	if !strings.Contains(string(ex.result), `"content":"Hello"`) {
		t.Errorf("prompt result %s lacks the answer", ex.result)
	}

	// The turn is in acp-sessions.db (read beside the running daemon: WAL).
	st, err := store.OpenACP(t.Context(), filepath.Join(d.ConfigDir, "data", "sessions", "acp-sessions.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	msgs, err := st.Messages(t.Context(), sid)
	if err != nil {
		t.Fatal(err)
	}
	if len(msgs) != 2 || msgs[0].Role != "user" || msgs[0].Content != "say hello" || msgs[1].Content != "Hello" {
		t.Fatalf("stored turn: %+v", msgs)
	}
	row, err := st.Session(t.Context(), sid)
	if err != nil || row.AgentAlias != "a" || row.Surface != "acp" {
		t.Fatalf("stored session: %+v, %v", row, err)
	}

	// The next turn's model context holds the first one.
	ex = c.call("session/prompt", map[string]any{"sessionId": sid, "prompt": []map[string]any{{"type": "text", "text": "more"}}}, nil)
	if stopReason(t, ex) != "end_turn" {
		t.Fatal("second turn did not end")
	}
	reqs := f.requests()
	if !strings.Contains(reqs[1], `"say hello"`) || !strings.Contains(reqs[1], `"Hello"`) || !strings.Contains(reqs[1], `"more"`) {
		t.Errorf("second request lacks the history: %s", reqs[1])
	}
}

func TestPromptContentBlocksAndUploads(t *testing.T) {
	f := newLLM(t, answer("ok"))
	// Frames up to 16 MiB, so that a blob over 10 MB decoded can arrive at all.
	d := rpctest.Start(t, rpctest.WithConfig(config(f.URL)+"\n[rpc]\nmax_frame_bytes = 16777216\n"))
	c := dial(t, d)
	sid, ws := c.newSession(nil)
	blob := []byte("\x89PNG binary \x00 bytes")
	blocks := []map[string]any{
		{"type": "text", "text": "look at these"},
		{"type": "resource", "resource": map[string]any{"uri": "file:///p/notes.md", "text": "NOTES BODY"}},
		{"type": "resource", "resource": map[string]any{"uri": "file:///p/../img.png", "mimeType": "image/png", "blob": base64.StdEncoding.EncodeToString(blob)}},
		{"type": "resource_link", "uri": "file:///p/other.go", "name": "other.go"},
	}
	if stopReason(t, c.call("session/prompt", map[string]any{"sessionId": sid, "prompt": blocks}, nil)) != "end_turn" {
		t.Fatal("turn did not end")
	}
	files, err := filepath.Glob(filepath.Join(ws, "uploads", "*-img.png"))
	if err != nil || len(files) != 1 {
		t.Fatalf("uploads: %v, %v", files, err)
	}
	got, err := os.ReadFile(files[0])
	if err != nil || string(got) != string(blob) {
		t.Fatalf("uploaded bytes = %q, %v", got, err)
	}
	if fi, _ := os.Stat(files[0]); fi.Mode().Perm() != 0o600 {
		t.Errorf("upload mode %v", fi.Mode().Perm())
	}
	req := f.requests()[0]
	for _, part := range []string{"look at these", "NOTES BODY", "[attachment: " + files[0] + " (image/png)]", "[resource: other.go (file:///p/other.go)]"} {
		q, _ := json.Marshal(part)
		if !strings.Contains(req, strings.Trim(string(q), `"`)) {
			t.Errorf("provider request lacks %q: %s", part, req)
		}
	}

	// Invalid base64 is -32602 and writes nothing, not even the valid blob before it.
	bad := []map[string]any{
		{"type": "resource", "resource": map[string]any{"uri": "a.bin", "blob": base64.StdEncoding.EncodeToString([]byte("fine"))}},
		{"type": "resource", "resource": map[string]any{"uri": "b.bin", "blob": "not*base64!"}},
	}
	wantCode(t, c.call("session/prompt", map[string]any{"sessionId": sid, "prompt": bad}, nil), -32602, "prompt[1].resource.blob: invalid base64")
	if files, _ := filepath.Glob(filepath.Join(ws, "uploads", "*.bin")); len(files) != 0 {
		t.Errorf("a refused prompt left uploads: %v", files)
	}
	// Over 10 MB decoded is refused before decoding.
	big := strings.Repeat("A", (10<<20)/3*4+8)
	wantCode(t, c.call("session/prompt", map[string]any{"sessionId": sid, "prompt": []map[string]any{{"type": "resource", "resource": map[string]any{"uri": "big", "blob": big}}}}, nil), -32602, "larger than")
	wantCode(t, c.call("session/prompt", map[string]any{"sessionId": sid, "prompt": []map[string]any{{"type": "image", "data": "x", "mimeType": "image/png"}}}, nil), -32602, "image content is not supported")
	wantCode(t, c.call("session/prompt", map[string]any{"sessionId": sid, "prompt": 5}, nil), -32602, "string or an array")
	wantCode(t, c.call("session/prompt", map[string]any{"sessionId": sid}, nil), -32602, "prompt is required")
	wantCode(t, c.call("session/prompt", map[string]any{"sessionId": sid, "prompt": "  "}, nil), -32602, "blank")
	wantCode(t, c.call("session/prompt", map[string]any{"sessionId": "nope", "prompt": "hi"}, nil), -32000, "not found")
	if n := len(f.requests()); n != 1 {
		t.Errorf("refused prompts reached the provider: %d requests", n)
	}
}

// permissionAnswer answers a session/request_permission with outcome (a JSON object) after checking its shape.
func permissionAnswer(t testing.TB, c *client, sid, outcome string) func(ndjson.Frame) {
	return func(f ndjson.Frame) {
		t.Helper()
		if f.Method != "session/request_permission" || string(f.ID) != `"zc-out-0"` {
			t.Fatalf("unexpected request: %s", f.Raw)
		}
		var p struct {
			SessionID string `json:"sessionId"`
			Options   []struct {
				OptionID, Name, Kind string
			} `json:"options"`
			ToolCall map[string]any `json:"toolCall"`
		}
		if err := json.Unmarshal(f.Params, &p); err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, o := range p.Options {
			ids = append(ids, o.OptionID+"/"+o.Kind)
		}
		if p.SessionID != sid || strings.Join(ids, ",") != "allow-once/allow_once,allow-always/allow_always,reject-once/reject_once" {
			t.Errorf("permission params: %s", f.Params)
		}
		if p.ToolCall["toolCallId"] != "call_1" || p.ToolCall["kind"] != "execute" || p.ToolCall["status"] != "pending" ||
			p.ToolCall["title"] != "shell: echo hi > out.txt" ||
			!strings.Contains(mustJSON(t, p.ToolCall["rawInput"]), "echo hi > out.txt") {
			t.Errorf("permission toolCall: %s", mustJSON(t, p.ToolCall))
		}
		c.Send(`{"jsonrpc":"2.0","id":"zc-out-0","result":{"outcome":` + outcome + `}}`)
	}
}

func TestPermissionRequest(t *testing.T) {
	cases := []struct {
		name, outcome, status string
		ran                   bool
	}{
		{"allow once", `{"outcome":"selected","optionId":"allow-once"}`, "completed", true},
		{"reject", `{"outcome":"selected","optionId":"reject-once"}`, "failed", false},
		{"cancelled", `{"outcome":"cancelled"}`, "failed", false},
		{"unknown option", `{"outcome":"selected","optionId":"maybe"}`, "failed", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newLLM(t, toolCall("call_1", "shell", `{"command":"echo hi > out.txt"}`), answer("done"))
			d := rpctest.Start(t, rpctest.WithConfig(config(f.URL)))
			c := dial(t, d)
			sid, ws := c.newSession(nil)
			ex := c.call("session/prompt", map[string]any{"sessionId": sid, "prompt": "write it"}, permissionAnswer(t, c, sid, tc.outcome))
			if stopReason(t, ex) != "end_turn" {
				t.Fatalf("turn: %s", ex.result)
			}
			wantKinds(t, ex.updates, "tool_call:call_1/pending", "tool_call_update:call_1/"+tc.status, "agent_message_chunk:done")
			if _, err := os.Stat(filepath.Join(ws, "out.txt")); (err == nil) != tc.ran {
				t.Errorf("command ran = %v, want %v", err == nil, tc.ran)
			}
			tc0 := ex.updates[0]
			if tc0["title"] != "shell" || tc0["kind"] != "execute" {
				t.Errorf("tool_call update: %s", mustJSON(t, tc0))
			}
			if !tc.ran && !strings.Contains(mustJSON(t, ex.updates[1]["rawOutput"]), "rejected") {
				t.Errorf("denied call output: %s", mustJSON(t, ex.updates[1]))
			}
		})
	}
}

// A client that answers the permission request with an error denies the call too.
func TestPermissionErrorAnswerDenies(t *testing.T) {
	f := newLLM(t, toolCall("call_1", "shell", `{"command":"echo hi > out.txt"}`), answer("done"))
	d := rpctest.Start(t, rpctest.WithConfig(config(f.URL)))
	c := dial(t, d)
	sid, ws := c.newSession(nil)
	ex := c.call("session/prompt", map[string]any{"sessionId": sid, "prompt": "write it"}, func(fr ndjson.Frame) {
		c.Send(`{"jsonrpc":"2.0","id":` + string(fr.ID) + `,"error":{"code":-32603,"message":"no UI"}}`)
	})
	if stopReason(t, ex) != "end_turn" {
		t.Fatal("turn did not end")
	}
	wantKinds(t, ex.updates, "tool_call:call_1/pending", "tool_call_update:call_1/failed", "agent_message_chunk:done")
	if _, err := os.Stat(filepath.Join(ws, "out.txt")); err == nil {
		t.Error("the command ran without permission")
	}
}

func TestCancel(t *testing.T) {
	f := newLLM(t, hang("partial "))
	d := rpctest.Start(t, rpctest.WithConfig(config(f.URL)))
	c := dial(t, d)
	sid, _ := c.newSession(nil)
	// Cancel when idle is a no-op; an unknown session is -32000.
	c.mustCall("session/cancel", map[string]any{"sessionId": sid}, nil)
	wantCode(t, c.call("session/cancel", map[string]any{"sessionId": "nope"}, nil), -32000, "not found")

	id := c.send("session/prompt", map[string]any{"sessionId": sid, "prompt": "go on forever"})
	select {
	case <-f.arrived:
	case <-time.After(15 * time.Second):
		t.Fatal("the prompt never reached the provider")
	}
	// Once the turn streams, cancel it with the notification form, as editors send it: it is not queued behind
	// the running prompt.
	first := c.Frame()
	if first.Method != "session/update" || !strings.Contains(string(first.Params), `"partial "`) {
		t.Fatalf("first frame of the turn: %s", first.Raw)
	}
	c.Send(`{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"` + sid + `"}}`)
	ex := c.await(id, nil)
	if got := stopReason(t, ex); got != "cancelled" {
		t.Fatalf("stopReason = %s", got)
	}
	wantKinds(t, ex.updates)

	// The cancelled turn is stored: its prompt and what was streamed.
	var replayed []update
	c2 := dial(t, d)
	ex = c2.mustCall("session/load", map[string]any{"sessionId": sid, "cwd": "/", "mcpServers": []any{}}, nil)
	replayed = ex.updates
	wantKinds(t, replayed, "user_message_chunk:go on forever", "agent_message_chunk:partial ")
}

func TestLoadReplaysAfterRestartAndRestoresContext(t *testing.T) {
	f := newLLM(t, toolCall("call_1", "shell", `{"command":"echo hi > out.txt"}`), answer("wrote ", "it"), answer("remembered"))
	d := rpctest.Start(t, rpctest.WithConfig(config(f.URL)))
	c := dial(t, d)
	sid, ws := c.newSession(nil)
	live := c.call("session/prompt", map[string]any{"sessionId": sid, "prompt": "write it"}, permissionAnswer(t, c, sid, `{"outcome":"selected","optionId":"allow-once"}`))
	if stopReason(t, live) != "end_turn" {
		t.Fatal("turn did not end")
	}
	if err := d.Stop(); err != nil {
		t.Fatal(err)
	}

	d2 := rpctest.StartOn(t, d.ConfigDir)
	c2 := dial(t, d2)
	c2.mustCall("initialize", map[string]any{"protocolVersion": 1}, nil)
	ex := c2.mustCall("session/load", map[string]any{"sessionId": sid, "cwd": ws, "mcpServers": []any{}}, nil)
	if string(ex.result) != "{}" {
		t.Errorf("session/load result %s, want {}", ex.result)
	}
	wantKinds(t, ex.updates, "user_message_chunk:write it", "tool_call:call_1/pending", "tool_call_update:call_1/completed",
		"agent_message_chunk:wrote it")
	// The replay carries what the client saw live for the tool call.
	if ex.updates[1]["title"] != live.updates[0]["title"] || mustJSON(t, ex.updates[1]["rawInput"]) != mustJSON(t, live.updates[0]["rawInput"]) ||
		mustJSON(t, ex.updates[2]["content"]) != mustJSON(t, live.updates[1]["content"]) {
		t.Errorf("replayed tool call %v / %v differs from the live one %v / %v", ex.updates[1], ex.updates[2], live.updates[0], live.updates[1])
	}
	// The model context is restored: the next request carries the whole first turn, tool call included.
	if stopReason(t, c2.call("session/prompt", map[string]any{"sessionId": sid, "prompt": "what did you do?"}, nil)) != "end_turn" {
		t.Fatal("turn after load did not end")
	}
	req := f.requests()[2]
	for _, part := range []string{`"write it"`, `"call_1"`, `echo hi`, `"wrote it"`, `"what did you do?"`} {
		if !strings.Contains(req, part) {
			t.Errorf("request after load lacks %s: %s", part, req)
		}
	}
}

func TestResumeCloseAndKilled(t *testing.T) {
	f := newLLM(t, answer("one"), answer("two"))
	d := rpctest.Start(t, rpctest.WithConfig(config(f.URL)))
	c := dial(t, d)
	sid, _ := c.newSession(nil)
	if stopReason(t, c.call("session/prompt", map[string]any{"sessionId": sid, "prompt": "first"}, nil)) != "end_turn" {
		t.Fatal("turn did not end")
	}
	if ex := c.mustCall("session/close", map[string]any{"sessionId": sid}, nil); string(ex.result) != "{}" {
		t.Errorf("close result %s", ex.result)
	}
	wantCode(t, c.call("session/prompt", map[string]any{"sessionId": sid, "prompt": "after close"}, nil), -32000, "not found")
	wantCode(t, c.call("session/close", map[string]any{"sessionId": sid}, nil), -32000, "not found")
	// resume restores without replay.
	ex := c.mustCall("session/resume", map[string]any{"sessionId": sid, "cwd": "/"}, nil)
	if len(ex.updates) != 0 || string(ex.result) != "{}" {
		t.Errorf("resume: %d updates, result %s", len(ex.updates), ex.result)
	}
	if stopReason(t, c.call("session/prompt", map[string]any{"sessionId": sid, "prompt": "second"}, nil)) != "end_turn" {
		t.Fatal("turn after resume did not end")
	}
	if req := f.requests()[1]; !strings.Contains(req, `"first"`) || !strings.Contains(req, `"one"`) {
		t.Errorf("context after resume lacks the first turn: %s", req)
	}
	wantCode(t, c.call("session/resume", map[string]any{"sessionId": "nope"}, nil), -32000, "not found")
	wantCode(t, c.call("session/load", map[string]any{"sessionId": "nope", "cwd": "/"}, nil), -32000, "not found")
	wantCode(t, c.call("session/load", map[string]any{"cwd": "/"}, nil), -32602, "sessionId is required")

	// A killed row is never made live again (the tombstone is written beside the running daemon).
	c.mustCall("session/close", map[string]any{"sessionId": sid}, nil)
	st, err := store.OpenACP(t.Context(), filepath.Join(d.ConfigDir, "data", "sessions", "acp-sessions.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if ok, err := st.Kill(t.Context(), sid, time.Now()); !ok || err != nil {
		t.Fatalf("kill: %v %v", ok, err)
	}
	wantCode(t, c.call("session/load", map[string]any{"sessionId": sid, "cwd": "/"}, nil), -32000, "killed")
	wantCode(t, c.call("session/resume", map[string]any{"sessionId": sid, "cwd": "/"}, nil), -32000, "killed")
}

// liveIDs asks the native socket which sessions are live (status.session_ids).
func liveIDs(t testing.TB, d *rpctest.Daemon) []string {
	t.Helper()
	n := d.Dial(t)
	n.Send(ndjson.InitializeRequest)
	n.Frame()
	n.Request("status", map[string]any{}, "s")
	var st struct {
		SessionIDs []string `json:"session_ids"`
	}
	if err := json.Unmarshal(n.Frame().Result, &st); err != nil {
		t.Fatal(err)
	}
	return st.SessionIDs
}

func waitGone(t testing.TB, d *rpctest.Daemon, id string) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second) // bounds a hung test; asserts nothing about speed
	for slices.Contains(liveIDs(t, d), id) {
		if time.Now().After(deadline) {
			t.Fatalf("session %s still live", id)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// A session whose connection went away is released (it stays loadable), and a connection that took a session
// over keeps it when the first one leaves (an editor restart).
func TestDisconnectReleasesTheSession(t *testing.T) {
	f := newLLM(t, answer("hi"))
	d := rpctest.Start(t, rpctest.WithConfig(config(f.URL)))
	c := dial(t, d)
	sid, _ := c.newSession(nil)
	other, _ := c.newSession(nil)
	if stopReason(t, c.call("session/prompt", map[string]any{"sessionId": sid, "prompt": "hello"}, nil)) != "end_turn" {
		t.Fatal("turn did not end")
	}
	if ids := liveIDs(t, d); !slices.Contains(ids, sid) || !slices.Contains(ids, other) {
		t.Fatalf("live sessions %v", ids)
	}
	c2 := dial(t, d)
	ex := c2.mustCall("session/load", map[string]any{"sessionId": sid, "cwd": "/"}, nil)
	wantKinds(t, ex.updates, "user_message_chunk:hello", "agent_message_chunk:hi")
	c.Conn().Close()
	waitGone(t, d, other) // the first connection's departure was handled
	if ids := liveIDs(t, d); !slices.Contains(ids, sid) {
		t.Fatalf("the session taken over was released with the first connection: live %v", ids)
	}
	if stopReason(t, c2.call("session/prompt", map[string]any{"sessionId": sid, "prompt": "still there?"}, nil)) != "end_turn" {
		t.Fatal("turn on the taken-over session did not end")
	}
	c3 := dial(t, d)
	c3.mustCall("session/load", map[string]any{"sessionId": other, "cwd": "/"}, nil)
}

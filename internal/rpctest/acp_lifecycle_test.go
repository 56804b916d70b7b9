package rpctest

import (
	"database/sql"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/zeroclaw-go/zeroclaw/internal/api"
	"github.com/zeroclaw-go/zeroclaw/internal/store"
)

// acpDBPath is the install's acp-sessions.db.
func acpDBPath(d *Daemon) string {
	return filepath.Join(d.ConfigDir, "data", "sessions", "acp-sessions.db")
}

// openSide opens a second, independent connection to one of the daemon's SQLite files: what an operator's sqlite3
// shell would be. Triggers created through it make the daemon's own statements fail for real.
func openSide(t *testing.T, path string) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite", path+"?_pragma=busy_timeout(5000)")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func sqlExec(t *testing.T, db *sql.DB, q string) {
	t.Helper()
	if _, err := db.Exec(q); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
}

func acpNew(id string) api.SessionNewParams {
	return api.SessionNewParams{SessionID: id, ChatMode: api.ChatModeACP}
}

// liveIDs returns status.session_ids.
func liveIDs(c *rc) []string {
	c.t.Helper()
	var st struct {
		SessionIDs []string `json:"session_ids"`
	}
	c.mustCall(api.MethodStatus, map[string]any{}, &st)
	return st.SessionIDs
}

func wantCode(t *testing.T, what string, werr *wireError, code int) {
	t.Helper()
	if werr == nil || werr.Code != code {
		t.Fatalf("%s: error %v, want code %d", what, werr, code)
	}
}

// chat_mode "acp" stores the session in acp-sessions.db, not in sessions.db; a restart keeps it resumable with
// its stored workspace, and session/messages reads it there.
func TestACPNativeSessionIsDurable(t *testing.T) {
	t.Parallel()
	cwd, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	d := Start(t, WithConfig(agentConfig(echoTOML, "echo.default", "full", fmt.Sprintf("\n[acp]\nallowed_roots = [%q]\n", cwd))))
	c := dialRC(t, d, "")
	s := c.newSession(api.SessionNewParams{SessionID: "dur-1", ChatMode: api.ChatModeACP, Cwd: cwd})
	if s.WorkspaceDir != cwd {
		t.Fatalf("workspace_dir = %q, want the cwd %q", s.WorkspaceDir, cwd)
	}
	if tr := c.prompt("dur-1", "remember me", hooks{}); tr.err != nil || tr.result.Outcome != api.OutcomeCompleted {
		t.Fatalf("prompt: %+v %v", tr.result, tr.err)
	}
	acp, err := store.OpenACP(t.Context(), acpDBPath(d))
	if err != nil {
		t.Fatal(err)
	}
	row, err := acp.Session(t.Context(), "dur-1")
	acp.Close()
	if err != nil || row.MessageCount != 2 || row.Surface != "rpc" || row.WorkspaceDir != s.WorkspaceDir {
		t.Fatalf("acp-sessions.db row = %+v, %v; want 2 messages, surface rpc, workspace %s", row, err, s.WorkspaceDir)
	}
	var n int
	if err := openSide(t, filepath.Join(d.ConfigDir, "data", "sessions", "sessions.db")).
		QueryRow("SELECT COUNT(*) FROM sessions WHERE session_key IN ('dur-1','rpc_dur-1')").Scan(&n); err != nil || n != 0 {
		t.Fatalf("sessions.db holds %d rows of the ACP session (%v), want none", n, err)
	}

	if err := d.Stop(); err != nil {
		t.Fatal(err)
	}
	d = StartOn(t, d.ConfigDir)
	c = dialRC(t, d, "")
	// The stored cwd is reused; the one passed on resume is not.
	r := c.newSession(api.SessionNewParams{SessionID: "dur-1", ChatMode: api.ChatModeACP, Cwd: "/"})
	if r.MessageCount != 2 || r.WorkspaceDir != s.WorkspaceDir || r.AgentAlias != "a" {
		t.Fatalf("resume after restart = %+v, want 2 messages in %s", r, s.WorkspaceDir)
	}
	got := c.messages("dur-1")
	if got.Total != 2 || got.Messages[0].Content != "remember me" || got.Messages[1].Index != 1 {
		t.Fatalf("session/messages = %+v", got)
	}
}

// session/delete of an ACP id removes the row with its messages and checkpoint and unregisters the live session,
// while a chat session with the same id (its sessions.db rows, and it being live) is untouched.
func TestACPDeleteLeavesChatSessionWithSameID(t *testing.T) {
	t.Parallel()
	d := Start(t, WithConfig(agentConfig(echoTOML, "echo.default", "full", "")))
	c := dialRC(t, d, "")
	c.newSession(acpNew("twin"))
	if tr := c.prompt("twin", "acp side", hooks{}); tr.err != nil {
		t.Fatal(tr.err)
	}
	c.mustCall(api.MethodSessionClose, api.SessionIDParams{SessionID: "twin"}, nil)
	c.newSession(api.SessionNewParams{SessionID: "twin"}) // a chat session under the same id
	if tr := c.prompt("twin", "chat side", hooks{}); tr.err != nil {
		t.Fatal(tr.err)
	}

	var del api.SessionDeleteResult
	c.mustCall(api.MethodSessionDelete, api.SessionIDParams{SessionID: "twin"}, &del)
	if !del.Deleted {
		t.Fatalf("delete = %+v", del)
	}
	side := openSide(t, acpDBPath(d))
	for _, table := range []string{"acp_sessions", "acp_messages", "acp_checkpoints"} {
		var n int
		if err := side.QueryRow("SELECT COUNT(*) FROM " + table).Scan(&n); err != nil || n != 0 {
			t.Errorf("%s holds %d rows after delete (%v), want 0", table, n, err)
		}
	}
	if !slices.Contains(liveIDs(c), "twin") {
		t.Fatal("the live chat session was dropped by the ACP delete")
	}
	got := c.messages("twin")
	if got.Total != 2 || got.Messages[0].Content != "chat side" {
		t.Fatalf("chat transcript after the ACP delete = %+v", got)
	}
	if tr := c.prompt("twin", "still here", hooks{}); tr.err != nil || tr.result.Outcome != api.OutcomeCompleted {
		t.Fatalf("chat session after the ACP delete: %+v %v", tr.result, tr.err)
	}
}

// A kill or delete whose SQLite write fails on an idle session answers -32603 and leaves the session live and
// usable; once storage works again the same call succeeds.
func TestACPKillDeleteStoreFailureKeepsLiveOwner(t *testing.T) {
	t.Parallel()
	d := Start(t, WithConfig(agentConfig(echoTOML, "echo.default", "full", "")))
	c := dialRC(t, d, "")
	c.newSession(acpNew("fragile"))
	side := openSide(t, acpDBPath(d))
	sqlExec(t, side, `CREATE TRIGGER no_kill BEFORE UPDATE OF killed_at ON acp_sessions BEGIN SELECT RAISE(ABORT, 'injected kill failure'); END`)
	sqlExec(t, side, `CREATE TRIGGER no_delete BEFORE DELETE ON acp_sessions BEGIN SELECT RAISE(ABORT, 'injected delete failure'); END`)

	_, werr := c.call(api.MethodSessionKill, api.SessionIDParams{SessionID: "fragile"})
	wantCode(t, "kill with a failing store", werr, api.CodeInternalError)
	if strings.Contains(werr.Message, "injected") {
		t.Errorf("the -32603 message leaks the cause: %q", werr.Message)
	}
	_, werr = c.call(api.MethodSessionDelete, api.SessionIDParams{SessionID: "fragile"})
	wantCode(t, "delete with a failing store", werr, api.CodeInternalError)
	if !slices.Contains(liveIDs(c), "fragile") {
		t.Fatal("the live session was unregistered although the store write failed")
	}
	if tr := c.prompt("fragile", "still alive", hooks{}); tr.err != nil || tr.result.Outcome != api.OutcomeCompleted {
		t.Fatalf("prompt after the failed kill: %+v %v", tr.result, tr.err)
	}

	sqlExec(t, side, `DROP TRIGGER no_kill`)
	sqlExec(t, side, `DROP TRIGGER no_delete`)
	var k api.SessionKillResult
	c.mustCall(api.MethodSessionKill, api.SessionIDParams{SessionID: "fragile"}, &k)
	if !k.Killed || slices.Contains(liveIDs(c), "fragile") {
		t.Fatalf("kill once storage works: %+v, live %v", k, liveIDs(c))
	}
	var killedAt string
	if err := side.QueryRow(`SELECT killed_at FROM acp_sessions WHERE session_uuid = 'fragile'`).Scan(&killedAt); err != nil || killedAt == "" {
		t.Fatalf("killed_at = %q, %v", killedAt, err)
	}
	// A second kill keeps the first tombstone time.
	c.mustCall(api.MethodSessionKill, api.SessionIDParams{SessionID: "fragile"}, &k)
	var again string
	if err := side.QueryRow(`SELECT killed_at FROM acp_sessions WHERE session_uuid = 'fragile'`).Scan(&again); err != nil || again != killedAt {
		t.Fatalf("killed_at after a second kill = %q (%v), want the first %q", again, err, killedAt)
	}
	_, werr = c.call(api.MethodSessionNew, acpNew("fragile"))
	wantCode(t, "resuming a killed session", werr, api.CodeSessionNotFound)
}

// session/kill on a running turn cancels it before the tombstone is written: even when that write fails, the
// turn ends cancelled and the durable row stays resumable.
func TestACPKillCancelsBeforeTheStoreWrite(t *testing.T) {
	t.Parallel()
	srv := newLLM(t, blockAfterFirst("Hel", nil, nil), stream(ctSSE, openAIText(4, 1, "later")))
	d := Start(t, WithConfig(agentConfig(fakeProviderTOML("openai", srv.URL), "openai.fake", "full", "")))
	c := dialRC(t, d, "")
	c.newSession(acpNew("busy"))
	side := openSide(t, acpDBPath(d))
	sqlExec(t, side, `CREATE TRIGGER no_kill BEFORE UPDATE OF killed_at ON acp_sessions BEGIN SELECT RAISE(ABORT, 'injected'); END`)

	id := c.send(api.MethodSessionPrompt, api.SessionPromptParams{SessionID: "busy", Prompt: "hi"})
	var killID string
	var killed *frame
	onKill := func(f frame) bool {
		if killID == "" || idOf(f) != killID {
			return false
		}
		killed = &f
		return true
	}
	tr := c.await(id, hooks{
		onUpdate: func(u api.SessionUpdate) {
			if u.Type == api.UpdateAgentMessageChunk && killID == "" {
				killID = c.send(api.MethodSessionKill, api.SessionIDParams{SessionID: "busy"})
			}
		},
		onOther: onKill,
	})
	if killed == nil {
		if f := c.recv(); !onKill(f) {
			t.Fatalf("expected the session/kill response, got %s", f.Raw)
		}
	}
	wantCode(t, "kill with a failing store", killed.Error, api.CodeInternalError)
	if tr.err != nil || tr.result.Outcome != api.OutcomeCancelled {
		t.Fatalf("the running turn was not cancelled: %+v %v", tr.result, tr.err)
	}
	sqlExec(t, side, `DROP TRIGGER no_kill`)
	var n int
	if err := side.QueryRow(`SELECT COUNT(*) FROM acp_sessions WHERE session_uuid = 'busy' AND killed_at IS NULL`).Scan(&n); err != nil || n != 1 {
		t.Fatalf("the row is killed or gone after the failed kill (%d, %v)", n, err)
	}
	if tr := c.prompt("busy", "again", hooks{}); tr.err != nil || tr.result.Content != "later" {
		t.Fatalf("the session does not take a turn after the failed kill: %+v %v", tr.result, tr.err)
	}
}

// After a restart, session/prompt on a native ACP session brings it back by itself; a row of another
// interaction_surface (an editor's) is not recovered that way and is left as it was.
func TestACPPromptRecoveryBySurface(t *testing.T) {
	t.Parallel()
	d := Start(t, WithConfig(agentConfig(echoTOML, "echo.default", "full", "")))
	c := dialRC(t, d, "")
	c.newSession(acpNew("native-1"))
	c.newSession(api.SessionNewParams{SessionID: "editor-1", ChatMode: api.ChatModeACP, InteractionSurface: "acp"})
	_, werr := c.call(api.MethodSessionNew, api.SessionNewParams{ChatMode: api.ChatModeACP, InteractionSurface: "Bad Surface"})
	wantCode(t, "a malformed interaction_surface", werr, api.CodeInvalidParams)
	if err := d.Stop(); err != nil {
		t.Fatal(err)
	}
	d = StartOn(t, d.ConfigDir)
	c = dialRC(t, d, "")

	if tr := c.prompt("native-1", "back?", hooks{}); tr.err != nil || tr.result.Content != "back?" {
		t.Fatalf("prompt recovery of a native ACP session: %+v %v", tr.result, tr.err)
	}
	tr := c.prompt("editor-1", "hijack?", hooks{})
	wantCode(t, "prompt recovery of an editor's session", tr.err, api.CodeSessionNotFound)
	side := openSide(t, acpDBPath(d))
	var surface string
	var msgs int
	if err := side.QueryRow(`SELECT interaction_surface, (SELECT COUNT(*) FROM acp_messages m WHERE m.session_id = s.id)
		FROM acp_sessions s WHERE session_uuid = 'editor-1'`).Scan(&surface, &msgs); err != nil || surface != "acp" || msgs != 0 {
		t.Fatalf("the editor's row = surface %q, %d messages (%v); want it untouched", surface, msgs, err)
	}
	var lst api.SessionListResult
	c.mustCall(api.MethodSessionListACP, map[string]any{}, &lst)
	var ids []string
	for _, s := range lst.Sessions {
		ids = append(ids, s.SessionID)
	}
	slices.Sort(ids)
	if !slices.Equal(ids, []string{"editor-1", "native-1"}) {
		raw, _ := json.Marshal(lst)
		t.Fatalf("session/list-acp = %s", raw)
	}
}

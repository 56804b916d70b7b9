package rpctest

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/zeroclaw-go/zeroclaw/internal/api"
)

// A daemon restart keeps the chat history: session/new restores the session with its message count,
// session/messages returns exactly what was stored before (nothing duplicated), and a new turn appends after it.
// Both session backends: sessions.db, and one JSONL file per session.
func TestRestartKeepsHistory(t *testing.T) {
	t.Parallel()
	t.Run("sqlite", func(t *testing.T) { testRestartKeepsHistory(t, "") })
	t.Run("jsonl", func(t *testing.T) {
		d2 := testRestartKeepsHistory(t, "\n[channels]\nsession_backend = \"jsonl\"\n")
		sessions := filepath.Join(d2.ConfigDir, "data", "sessions")
		data, err := os.ReadFile(filepath.Join(sessions, "rpc_restart-session-1.jsonl"))
		if err != nil || strings.Count(string(data), "\n") != 10 || !strings.Contains(string(data), `"content":"third words"`) {
			t.Fatalf("the session's JSONL file: %v\n%s", err, data)
		}
		if _, err := os.Stat(filepath.Join(sessions, "sessions.db")); !os.IsNotExist(err) {
			t.Fatalf("the JSONL backend created sessions.db: %v", err)
		}
	})
}

func testRestartKeepsHistory(t *testing.T, extra string) *Daemon {
	cfg := agentConfig(echoTOML, "echo.default", "full", extra)
	d := Start(t, WithConfig(cfg))
	c := dialRC(t, d, "")
	const sid = "restart-session-1"
	s := c.newSession(api.SessionNewParams{SessionID: sid})
	for _, p := range []string{"first words", "/tool time {}", "second words"} {
		if tr := c.prompt(s.SessionID, p, hooks{}); tr.err != nil || tr.result.Outcome != api.OutcomeCompleted {
			t.Fatalf("prompt %q: %+v %s", p, tr.result, tr.err)
		}
	}
	before := c.messages(sid)
	if before.Total != 8 || len(before.Messages) != 8 { // 2 plain turns (2 each) + a tool turn (user, call, result, answer)
		t.Fatalf("before restart: %d messages (total %d), want 8: %+v", len(before.Messages), before.Total, before.Messages)
	}
	if err := d.Stop(); err != nil {
		t.Fatalf("stop: %v", err)
	}

	d2 := StartOn(t, d.ConfigDir)
	c2 := dialRC(t, d2, "")
	restored := c2.newSession(api.SessionNewParams{SessionID: sid})
	if restored.SessionID != sid || restored.MessageCount != 8 || restored.WorkspaceDir != s.WorkspaceDir {
		t.Fatalf("restored = %+v, want %s with 8 messages in %s", restored, sid, s.WorkspaceDir)
	}
	after := c2.messages(sid)
	if !slices.Equal(after.Messages, before.Messages) || after.Total != before.Total {
		t.Fatalf("history changed across the restart:\n before %+v\n after  %+v", before.Messages, after.Messages)
	}
	// Restoring twice does not duplicate anything either.
	if again := c2.newSession(api.SessionNewParams{SessionID: sid}); again.MessageCount != 8 {
		t.Fatalf("second restore: %+v", again)
	}

	tr := c2.prompt(sid, "third words", hooks{})
	if tr.err != nil || tr.result.Content != "third words" {
		t.Fatalf("prompt after restart: %+v %s", tr.result, tr.err)
	}
	final := c2.messages(sid)
	if final.Total != 10 || !slices.Equal(final.Messages[:8], before.Messages) {
		t.Fatalf("after a new turn: total %d, prefix kept %v", final.Total, slices.Equal(final.Messages[:8], before.Messages))
	}
	for i, want := range []string{"user:third words", "assistant:third words"} {
		m := final.Messages[8+i]
		if got := m.Role + ":" + m.Content; got != want || m.Index != 8+i {
			t.Fatalf("message %d = %q (index %d), want %q", 8+i, got, m.Index, want)
		}
	}
	var list api.SessionListResult
	c2.mustCall(api.MethodSessionList, api.SessionListParams{}, &list)
	n := 0
	for _, row := range list.Sessions {
		if row.SessionID == sid {
			n++
			if row.MessageCount != 10 {
				t.Errorf("session/list message_count = %d, want 10", row.MessageCount)
			}
		}
	}
	if n != 1 {
		t.Fatalf("session/list shows %s %d times", sid, n)
	}
	return d2
}

// Switching session_backend from jsonl back to sqlite keeps every session: its messages are imported into
// sessions.db at the next start, and it stays listed under its agent, owned by the same principal.
func TestSessionBackendSwitchBackToSQLite(t *testing.T) {
	t.Parallel()
	jsonl := agentConfig(echoTOML, "echo.default", "full", "\n[channels]\nsession_backend = \"jsonl\"\n")
	d := Start(t, WithConfig(jsonl))
	c := dialRC(t, d, "")
	const sid = "switch-back-1"
	c.newSession(api.SessionNewParams{SessionID: sid})
	for _, p := range []string{"one", "two"} {
		if tr := c.prompt(sid, p, hooks{}); tr.err != nil || tr.result.Outcome != api.OutcomeCompleted {
			t.Fatalf("prompt %q: %+v %s", p, tr.result, tr.err)
		}
	}
	before := c.messages(sid)
	if err := d.Stop(); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(d.ConfigDir, "config.toml")
	if err := os.WriteFile(path, []byte(agentConfig(echoTOML, "echo.default", "full", "")), 0o600); err != nil {
		t.Fatal(err)
	}
	d2 := StartOn(t, d.ConfigDir)
	c2 := dialRC(t, d2, "")
	after := c2.messages(sid)
	if after.Total != 4 || len(after.Messages) != len(before.Messages) {
		t.Fatalf("after switching back: %+v, want the 4 messages of %+v", after, before)
	}
	for i := range after.Messages {
		a, b := after.Messages[i], before.Messages[i]
		if a.Role != b.Role || a.Content != b.Content || a.Index != b.Index {
			t.Fatalf("message %d: %+v, want %+v", i, a, b)
		}
	}
	var list api.SessionListResult
	c2.mustCall(api.MethodSessionList, api.SessionListParams{}, &list)
	found := false
	for _, row := range list.Sessions {
		found = found || row.SessionID == sid && row.MessageCount == 4
	}
	if !found {
		t.Fatalf("session/list after switching back does not show %s with 4 messages: %+v", sid, list.Sessions)
	}
	if _, err := os.Stat(filepath.Join(d.ConfigDir, "data", "sessions", "rpc_"+sid+".jsonl.migrated")); err != nil {
		t.Fatalf("the JSONL file was not archived by the import: %v", err)
	}
}

// sessionUser is a config in which this process's uid is the non-admin user name, allowed every session method.
func sessionUser(name string) Option {
	return WithConfig(agentConfig(echoTOML, "echo.default", "full", fmt.Sprintf(`
[permission_profiles.chat]
grants = ["sessions:create", "sessions:execute", "sessions:read", "sessions:delete"]

[users.%s]
uid = %d
permission_profiles = ["chat"]
`, name, os.Getuid())))
}

// A non-admin's session is theirs across a restart: the same user lists, reads and resumes it; another
// non-admin user (the same uid mapped to another name) is refused with -32003 and does not see it.
func TestNonAdminOwnershipSurvivesRestart(t *testing.T) {
	t.Parallel()
	d := Start(t, sessionUser("alice"))
	c := dialRC(t, d, "")
	const sid = "alices-session"
	c.newSession(api.SessionNewParams{SessionID: sid})
	if tr := c.prompt(sid, "remember this", hooks{}); tr.err != nil {
		t.Fatalf("prompt: %s", tr.err)
	}
	if err := d.Stop(); err != nil {
		t.Fatal(err)
	}

	d = StartOn(t, d.ConfigDir, sessionUser("bob"))
	b := dialRC(t, d, "")
	for _, call := range []struct {
		method string
		params any
	}{
		{api.MethodSessionNew, api.SessionNewParams{SessionID: sid}},
		{api.MethodSessionMsgs, api.SessionMessagesParams{SessionID: sid}},
		{api.MethodSessionState, api.SessionIDParams{SessionID: sid}},
		{api.MethodSessionDelete, api.SessionIDParams{SessionID: sid}},
	} {
		if _, werr := b.call(call.method, call.params); werr == nil || werr.Code != api.CodeSessionNotOwned {
			t.Fatalf("bob: %s = %s, want -32003", call.method, werr)
		}
	}
	var list api.SessionListResult
	b.mustCall(api.MethodSessionList, api.SessionListParams{}, &list)
	if len(list.Sessions) != 0 {
		t.Fatalf("bob lists %+v", list.Sessions)
	}
	if err := d.Stop(); err != nil {
		t.Fatal(err)
	}

	d = StartOn(t, d.ConfigDir, sessionUser("alice"))
	a := dialRC(t, d, "")
	a.mustCall(api.MethodSessionList, api.SessionListParams{}, &list)
	if len(list.Sessions) != 1 || list.Sessions[0].SessionID != sid {
		t.Fatalf("alice lists %+v after the restarts, want her session", list.Sessions)
	}
	if back := a.newSession(api.SessionNewParams{SessionID: sid}); back.MessageCount != 2 {
		t.Fatalf("alice resumes with %d messages, want 2", back.MessageCount)
	}
	if tr := a.prompt(sid, "and this", hooks{}); tr.err != nil || tr.result.Content != "and this" {
		t.Fatalf("prompt after resuming: %+v %s", tr.result, tr.err)
	}
}

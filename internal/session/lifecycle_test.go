package session

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/zeroclaw-go/zeroclaw/internal/api"
	"github.com/zeroclaw-go/zeroclaw/internal/clock/clocktest"
	"github.com/zeroclaw-go/zeroclaw/internal/config"
	"github.com/zeroclaw-go/zeroclaw/internal/workspace"
)

func TestHistoryRestoredAfterRestartWithoutDuplicates(t *testing.T) {
	e := newEnv(t, setLevel(config.LevelFull, 0))
	s := e.open(admin, api.SessionNewParams{})
	e.prompt(s.SessionID, `/tool file_write {"path":"a.txt","content":"kept"}`, &sink{})
	before, err := e.m.Messages(t.Context(), admin, api.SessionMessagesParams{SessionID: s.SessionID})
	if err != nil || before.Total != 4 {
		t.Fatalf("before restart: %+v %v", before, err)
	}

	e.restart()
	if ids := e.m.ActiveIDs(); len(ids) != 0 {
		t.Fatalf("live sessions after restart: %v", ids)
	}
	// Not live, but stored: a call naming it sees an idle session, not an unknown one.
	if _, err := e.m.Cancel(admin, s.SessionID); !errors.Is(err, ErrNoActiveTurn) {
		t.Fatalf("cancel before restore = %v, want ErrNoActiveTurn", err)
	}
	after, err := e.m.Messages(t.Context(), admin, api.SessionMessagesParams{SessionID: s.SessionID})
	if err != nil {
		t.Fatal(err)
	}
	bj, _ := json.Marshal(before)
	aj, _ := json.Marshal(after)
	if string(bj) != string(aj) {
		t.Fatalf("history changed across restart:\n%s\n%s", bj, aj)
	}
	restored := e.open(admin, api.SessionNewParams{SessionID: s.SessionID})
	if restored.MessageCount != 4 || restored.AgentAlias != "default" {
		t.Fatalf("restored %+v", restored)
	}
	// The provider sees the restored conversation: echo numbers its call after the stored one.
	sk := &sink{}
	res := e.prompt(s.SessionID, `/tool file_read {"path":"a.txt"}`, sk)
	if call := sk.of(api.UpdateToolCall)[0]; call.ToolCallID != "echo-call-2" || res.Content != "tool file_read returned: kept" {
		t.Fatalf("tool_call %+v, result %+v", call, res)
	}
	final, err := e.m.Messages(t.Context(), admin, api.SessionMessagesParams{SessionID: s.SessionID})
	if err != nil || final.Total != 8 {
		t.Fatalf("after restore: total %d %v", final.Total, err)
	}
	for i, m := range before.Messages {
		if final.Messages[i].Content != m.Content || final.Messages[i].Role != m.Role {
			t.Fatalf("message %d changed: %+v vs %+v", i, final.Messages[i], m)
		}
	}
	page, err := e.m.Messages(t.Context(), admin, api.SessionMessagesParams{SessionID: s.SessionID, Limit: 3, BeforeIndex: new(6)})
	if err != nil || page.Start != 3 || len(page.Messages) != 3 || !page.HasOlder || page.Messages[0].Index != 3 {
		t.Fatalf("page %+v %v", page, err)
	}
}

func TestOwnership(t *testing.T) {
	e := newEnv(t, nil)
	alice := Owner{Principal: "alice", ConnID: 7}
	bob := Owner{Principal: "bob", ConnID: 8}
	s := e.open(alice, api.SessionNewParams{})
	id := s.SessionID

	if _, err := e.m.Prompt(t.Context(), bob, api.SessionPromptParams{SessionID: id, Prompt: "hi"}, &sink{}); !errors.Is(err, ErrNotOwned) {
		t.Fatalf("bob Prompt = %v", err)
	}
	if _, err := e.m.Cancel(bob, id); !errors.Is(err, ErrNotOwned) {
		t.Fatalf("bob Cancel = %v", err)
	}
	if _, err := e.m.Messages(t.Context(), bob, api.SessionMessagesParams{SessionID: id}); !errors.Is(err, ErrNotOwned) {
		t.Fatalf("bob Messages = %v", err)
	}
	if _, err := e.m.Approve(bob, api.SessionApproveParams{SessionID: id, RequestID: "r", Decision: api.DecisionAllowOnce}); !errors.Is(err, ErrNotOwned) {
		t.Fatalf("bob Approve = %v", err)
	}
	if _, err := e.m.Delete(t.Context(), bob, id); !errors.Is(err, ErrNotOwned) {
		t.Fatalf("bob Delete = %v", err)
	}
	if _, err := e.m.New(t.Context(), bob, api.SessionNewParams{SessionID: id}); !errors.Is(err, ErrNotOwned) {
		t.Fatalf("bob New(resume) = %v", err)
	}
	if l, err := e.m.List(t.Context(), bob, api.SessionListParams{}); err != nil || len(l.Sessions) != 0 {
		t.Fatalf("bob List = %+v %v", l, err)
	}

	sk := &sink{}
	res, err := e.m.Prompt(t.Context(), alice, api.SessionPromptParams{SessionID: id, Prompt: "mine"}, sk)
	if err != nil || res.Outcome != api.OutcomeCompleted {
		t.Fatalf("alice Prompt = %+v %v", res, err)
	}
	if l, err := e.m.List(t.Context(), alice, api.SessionListParams{Query: "mine"}); err != nil || len(l.Sessions) != 1 || l.Sessions[0].SessionID != id || l.Sessions[0].MessageCount != 2 {
		t.Fatalf("alice List = %+v %v", l, err)
	}
	if _, err := e.m.Prompt(t.Context(), admin, api.SessionPromptParams{SessionID: id, Prompt: "admin"}, &sink{}); err != nil {
		t.Fatalf("admin Prompt = %v", err)
	}
	if r, err := e.m.Close(alice, id); err != nil || !r.Closed {
		t.Fatalf("Close = %+v %v", r, err)
	}
	// Closing a session that is not live is done already (it stays stored and resumable), for its owner only.
	if r, err := e.m.Close(alice, id); err != nil || !r.Closed {
		t.Fatalf("second Close = %+v, %v; want closed", r, err)
	}
	if _, err := e.m.Close(bob, id); !errors.Is(err, ErrNotOwned) {
		t.Fatalf("bob Close of alice's stored session = %v", err)
	}
	if _, err := e.m.Cancel(bob, id); !errors.Is(err, ErrNotOwned) {
		t.Fatalf("bob Cancel of alice's stored session = %v", err)
	}
	if _, err := e.m.Prompt(t.Context(), bob, api.SessionPromptParams{SessionID: id, Prompt: "hi"}, &sink{}); !errors.Is(err, ErrNotOwned) {
		t.Fatalf("bob Prompt reviving alice's stored session = %v", err)
	}
	if ids := e.m.ActiveIDs(); len(ids) != 0 {
		t.Fatalf("a refused revive left %v live", ids)
	}
	if r, err := e.m.Delete(t.Context(), admin, id); err != nil || !r.Deleted {
		t.Fatalf("Delete = %+v %v", r, err)
	}
	if _, err := e.m.State(t.Context(), admin, id); !errors.Is(err, ErrNotFound) {
		t.Fatalf("State after delete = %v", err)
	}
	if r, err := e.m.Delete(t.Context(), admin, id); err != nil || !r.Deleted {
		t.Fatalf("Delete is idempotent: %+v %v", r, err)
	}
}

func TestValidation(t *testing.T) {
	e := newEnv(t, func(c *config.Config) {
		off := false
		c.Agents["other"] = config.AgentConfig{ModelProvider: "echo.default", RiskProfile: "supervised"}
		c.Agents["off"] = config.AgentConfig{ModelProvider: "echo.default", Enabled: &off}
	}, func(o *Options) { o.MaxSessions = 2 })
	ctx := t.Context()

	if _, err := e.m.New(ctx, admin, api.SessionNewParams{}); !errors.Is(err, ErrInvalid) {
		t.Fatalf("no alias with two enabled agents = %v", err)
	}
	for _, alias := range []string{"nope", "off"} {
		if _, err := e.m.New(ctx, admin, api.SessionNewParams{AgentAlias: alias}); !errors.Is(err, ErrInvalid) {
			t.Fatalf("agent %q = %v", alias, err)
		}
	}
	s := e.open(admin, api.SessionNewParams{AgentAlias: "other", SessionID: "my-chosen-id"})
	if s.SessionID != "my-chosen-id" || s.WorkspaceDir != filepath.Join(e.root, "agents", "other", "workspace") {
		t.Fatalf("New = %+v", s)
	}
	if _, err := os.Stat(s.WorkspaceDir); err != nil {
		t.Fatal(err)
	}
	if _, err := e.m.New(ctx, admin, api.SessionNewParams{AgentAlias: "default", SessionID: "my-chosen-id"}); !errors.Is(err, ErrInvalid) {
		t.Fatalf("agent mismatch on a live session = %v", err)
	}
	e.restart()
	if _, err := e.m.New(ctx, admin, api.SessionNewParams{AgentAlias: "default", SessionID: "my-chosen-id"}); !errors.Is(err, ErrInvalid) {
		t.Fatalf("agent mismatch on a stored session = %v", err)
	}
	if r := e.open(admin, api.SessionNewParams{SessionID: "my-chosen-id"}); r.AgentAlias != "other" {
		t.Fatalf("restore without alias keeps the stored agent: %+v", r)
	}
	if _, err := e.m.New(ctx, admin, api.SessionNewParams{SessionID: "has space"}); !errors.Is(err, ErrInvalid) {
		t.Fatalf("bad id = %v", err)
	}

	for _, p := range []string{"", "  \n\t"} {
		if _, err := e.m.Prompt(ctx, admin, api.SessionPromptParams{SessionID: "my-chosen-id", Prompt: p}, &sink{}); !errors.Is(err, ErrInvalid) {
			t.Fatalf("blank prompt %q = %v", p, err)
		}
	}
	if _, err := e.m.Prompt(ctx, admin, api.SessionPromptParams{SessionID: "unknown", Prompt: "hi"}, &sink{}); !errors.Is(err, ErrNotFound) {
		t.Fatalf("unknown session = %v", err)
	}
	_, err := e.m.Approve(admin, api.SessionApproveParams{SessionID: "my-chosen-id", RequestID: "r1", Decision: "maybe"})
	if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "unknown decision: maybe") {
		t.Fatalf("unknown decision = %v", err)
	}
	if _, err := e.m.Approve(admin, api.SessionApproveParams{SessionID: "my-chosen-id", RequestID: "r1", Decision: api.DecisionRejectWithEdit}); !errors.Is(err, ErrInvalid) {
		t.Fatalf("reject_with_edit without replacement = %v", err)
	}
	if res, err := e.m.Approve(admin, api.SessionApproveParams{SessionID: "my-chosen-id", RequestID: "r1", Decision: api.DecisionAllowOnce}); err != nil || res.Acknowledged || res.RequestID != "r1" {
		t.Fatalf("unknown request = %+v, %v; want not acknowledged, no error", res, err)
	}
	if res, err := e.m.Approve(admin, api.SessionApproveParams{SessionID: "no-such-session", RequestID: "r1", Decision: api.DecisionAllowOnce}); err != nil || res.Acknowledged {
		t.Fatalf("unknown session = %+v, %v; want not acknowledged, no error", res, err)
	}

	// Attachments are stored by the caller (rpc, through WithFiles) before the turn: Prompt refuses any left,
	// and nothing is written for them.
	sk := &sink{}
	_, err = e.m.Prompt(ctx, admin, api.SessionPromptParams{SessionID: "my-chosen-id", Prompt: "see file",
		Attachments: []api.FileEntry{{DataB64: "aGVsbG8=", Filename: "hi.txt"}}}, sk)
	if !errors.Is(err, ErrInvalid) || len(sk.types()) != 0 {
		t.Fatalf("prompt with unstored attachments = %v, events %v; want ErrInvalid and no turn", err, sk.types())
	}
	ents, _ := os.ReadDir(s.WorkspaceDir)
	ents = slices.DeleteFunc(ents, func(e os.DirEntry) bool { return slices.Contains(workspace.EditableFiles, e.Name()) })
	if len(ents) != 0 { // the identity files were seeded by session/new; nothing else may be there
		t.Fatalf("workspace holds %v after a refused prompt", ents)
	}

	// At the limit an idle session makes room (the least recently used one): the live set stays at 2.
	e.open(admin, api.SessionNewParams{AgentAlias: "default"})
	e.open(admin, api.SessionNewParams{AgentAlias: "default"})
	if n := len(e.m.ActiveIDs()); n != 2 {
		t.Fatalf("%d live sessions, want the limit 2", n)
	}
}

// The session limit counts live sessions; idle ones are dropped from memory to make room (or after IdleTTL),
// busy ones never. A dropped session comes back with its history, also for a non-admin owner.
func TestIdleSessionsMakeRoom(t *testing.T) {
	clock := clocktest.New(time.Unix(1_700_000_000, 0))
	e := newEnv(t, nil, func(o *Options) {
		o.MaxSessions = 1
		o.IdleTTL = time.Minute
		o.Clock = clock
	})
	ctx := t.Context()
	alice := Owner{Principal: "alice", ConnID: 7}
	e.open(alice, api.SessionNewParams{SessionID: "room-a"})
	if _, err := e.m.Prompt(ctx, alice, api.SessionPromptParams{SessionID: "room-a", Prompt: "remember me"}, &sink{}); err != nil {
		t.Fatal(err)
	}

	// Busy (waiting for an approval): never dropped, so a second session is refused.
	requests := make(chan string, 1)
	sk := &sink{onUpdate: func(ev api.SessionUpdate) {
		if ev.Type == api.UpdateApprovalRequest {
			requests <- ev.RequestID
		}
	}}
	done := make(chan error, 1)
	go func() {
		_, err := e.m.Prompt(ctx, alice, api.SessionPromptParams{SessionID: "room-a", Prompt: `/tool shell {"command":"true"}`}, sk)
		done <- err
	}()
	req := <-requests
	refused := make(chan error, 1)
	go func() {
		_, err := e.m.New(ctx, admin, api.SessionNewParams{SessionID: "room-b"})
		refused <- err
	}()
	if !clock.WaitTimer(DefaultLockTimeout, 10*time.Second) {
		t.Fatal("New at the limit did not wait for room")
	}
	clock.Advance(DefaultLockTimeout)
	if err := <-refused; !errors.Is(err, ErrLimit) {
		t.Fatalf("new session while the only one stays busy for the lock timeout = %v, want ErrLimit", err)
	}
	if _, err := e.m.Approve(alice, api.SessionApproveParams{SessionID: "room-a", RequestID: req, Decision: api.DecisionReject}); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}

	// Idle now: room-b takes its place.
	e.open(admin, api.SessionNewParams{SessionID: "room-b"})
	if ids := e.m.ActiveIDs(); len(ids) != 1 || ids[0] != "room-b" {
		t.Fatalf("live sessions %v, want [room-b]", ids)
	}
	// Its owner brings room-a back with its history; someone else may not.
	if _, err := e.m.New(ctx, Owner{Principal: "mallory"}, api.SessionNewParams{SessionID: "room-a"}); !errors.Is(err, ErrNotOwned) {
		t.Fatalf("foreign revive = %v", err)
	}
	back := e.open(alice, api.SessionNewParams{SessionID: "room-a"})
	if back.MessageCount != 6 {
		t.Fatalf("revived with %d messages, want 6 (two turns, one with a tool call and its result)", back.MessageCount)
	}

	// Past IdleTTL an idle session is dropped at the next New even below the limit.
	e.m.o.MaxSessions = 2
	clock.Advance(2 * time.Minute)
	e.open(admin, api.SessionNewParams{SessionID: "room-c"})
	if ids := e.m.ActiveIDs(); len(ids) != 1 || ids[0] != "room-c" {
		t.Fatalf("live sessions %v, want only [room-c] after the idle TTL", ids)
	}
}

func TestShutdownCancelsTurnsAndRefusesWork(t *testing.T) {
	e := newEnv(t, nil)
	s := e.open(admin, api.SessionNewParams{})
	started := make(chan struct{})
	done := make(chan api.SessionPromptResult)
	sk := &sink{onUpdate: func(ev api.SessionUpdate) {
		if ev.Type == api.UpdateApprovalRequest {
			close(started)
		}
	}}
	go func() {
		res, _ := e.m.Prompt(t.Context(), admin, api.SessionPromptParams{SessionID: s.SessionID, Prompt: `/tool file_write {"path":"a","content":"b"}`}, sk)
		done <- res
	}()
	<-started
	e.m.Shutdown(t.Context())
	res := <-done // Shutdown returned, so the turn has already ended
	if res.Outcome != api.OutcomeCancelled {
		t.Fatalf("turn after shutdown: %+v", res)
	}
	sk.checkComplete(t, res)
	if _, err := e.m.New(t.Context(), admin, api.SessionNewParams{}); !errors.Is(err, ErrClosed) {
		t.Fatalf("New after shutdown = %v", err)
	}
}

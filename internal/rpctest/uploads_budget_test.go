package rpctest

import (
	"bytes"
	"encoding/json"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zeroclaw-go/zeroclaw/internal/api"
	"github.com/zeroclaw-go/zeroclaw/internal/clock/clocktest"
	"github.com/zeroclaw-go/zeroclaw/internal/rpctest/ndjson"
	"github.com/zeroclaw-go/zeroclaw/internal/upload"
)

// beginRaw is file/upload/begin from any goroutine: it returns the upload id, or the error code and message.
func beginRaw(c *Client, id int, sid string, size int64) (string, int, string, error) {
	m, err := c.TryCall(api.MethodFileUploadBegin, map[string]any{"session_id": sid, "size_bytes": size}, id)
	if err != nil {
		return "", 0, "", err
	}
	if e, ok := m["error"].(map[string]any); ok {
		code, _ := e["code"].(float64)
		msg, _ := e["message"].(string)
		return "", int(code), msg, nil
	}
	r, _ := m["result"].(map[string]any)
	uid, _ := r["upload_id"].(string)
	return uid, 0, "", nil
}

// budgetSize is a declared size of which exactly 64 uploads fit the 256 MiB budget, whatever metadata (up to
// 4 KiB each) they are charged besides: 64 × (4,190,000 + 4,096) ≤ 268,435,456 < 65 × 4,190,000.
const budgetSize = 4_190_000

// 70 uploads begun at once on 18 connections share the one budget: exactly 64 are staged, the other 6 are
// refused for the budget (not for the per-connection limit); closing a connection gives its share back.
func TestUploadBudgetAcross70ConcurrentUploads(t *testing.T) {
	t.Parallel()
	d := Start(t)
	admin := dialRC(t, d, "")
	admin.newSession(api.SessionNewParams{SessionID: "big"})
	const conns, total = 18, 70
	clients := make([]*Client, conns)
	for i := range clients {
		clients[i] = d.Dial(t)
		clients[i].Initialize()
	}
	type outcome struct {
		conn, code int
		id, msg    string
	}
	results := make(chan outcome, total)
	var wg sync.WaitGroup
	for i, c := range clients {
		n := api.MaxUploadsPerConn
		if rest := total - i*api.MaxUploadsPerConn; rest < n {
			n = rest
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range n {
				id, code, msg, err := beginRaw(c, j+1, "big", budgetSize)
				if err != nil {
					msg = err.Error()
					code = 1
				}
				results <- outcome{conn: i, code: code, id: id, msg: msg}
			}
		}()
	}
	wg.Wait()
	close(results)
	staged := map[int][]string{} // connection → upload ids
	refused := 0
	for r := range results {
		switch {
		case r.code == 0:
			staged[r.conn] = append(staged[r.conn], r.id)
		case r.code == -32602 && strings.Contains(r.msg, "staging too many uploads"):
			refused++
		default:
			t.Fatalf("connection %d: unexpected outcome %d %q", r.conn, r.code, r.msg)
		}
	}
	accepted := 0
	for _, ids := range staged {
		accepted += len(ids)
	}
	if accepted != 64 || refused != 6 {
		t.Fatalf("%d staged, %d refused for the budget; want 64 and 6", accepted, refused)
	}
	// Full: a new connection is refused too.
	probe := d.Dial(t)
	probe.Initialize()
	if _, code, _, _ := beginRaw(probe, 1, "big", budgetSize); code != -32602 {
		t.Fatalf("begin on a full budget: code %d", code)
	}
	// Closing a connection with staged uploads returns their charge; it takes effect when the daemon sees the
	// connection end.
	var full int
	for conn, ids := range staged {
		if len(ids) == api.MaxUploadsPerConn {
			full = conn
			break
		}
	}
	clients[full].Conn().Close()
	deadline := time.Now().Add(ndjson.Safety)
	for i := 2; ; i++ {
		id, code, msg, err := beginRaw(probe, i, "big", budgetSize)
		if err != nil {
			t.Fatal(err)
		}
		if code == 0 && id != "" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the closed connection's uploads were not released: %d %s", code, msg)
		}
		time.Sleep(10 * time.Millisecond)
	}
	// Exactly its four came back: the probe's second, third and fourth fit, a fifth (on another connection) not.
	for i := 100; i < 103; i++ {
		if _, code, msg, _ := beginRaw(probe, i, "big", budgetSize); code != 0 {
			t.Fatalf("begin %d after the close: %d %s", i, code, msg)
		}
	}
	other := d.Dial(t)
	other.Initialize()
	if _, code, _, _ := beginRaw(other, 1, "big", budgetSize); code != -32602 {
		t.Fatalf("a 65th upload was staged")
	}
}

// Uploads idle for 5 minutes are reclaimed when a new one does not fit, even on connections still open; an
// upload used within the 5 minutes keeps its place, and its connection's others are gone for it too.
func TestUploadIdleReclaimOnOpenConnections(t *testing.T) {
	t.Parallel()
	clk := clocktest.New(time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC))
	d := Start(t, WithClock(clk))
	owner := dialRC(t, d, "")
	owner.newSession(api.SessionNewParams{SessionID: "s"})
	// 25 uploads of 10 MB fill the budget; their 7 connections stay open and silent.
	var silent []*rc
	var ids []string
	for len(ids) < 25 {
		c := dialRC(t, d, "")
		silent = append(silent, c)
		for range min(api.MaxUploadsPerConn, 25-len(ids)) {
			ids = append(ids, c.mustBegin("s", api.MaxFileBytes, nil))
		}
	}
	late := dialRC(t, d, "")
	_, werr := late.begin("s", api.MaxFileBytes, nil)
	wantErr(t, "budget full", werr, -32602, "staging too many uploads")

	// Just short of 5 minutes one upload is used; nothing is idle long enough yet.
	clk.Advance(upload.IdleTimeout - time.Second)
	if n, werr := silent[0].chunk(ids[0], 0, []byte("kept")); werr != nil || n != 4 {
		t.Fatalf("chunk on the used upload: %d %v", n, werr)
	}
	_, werr = late.begin("s", api.MaxFileBytes, nil)
	wantErr(t, "nothing idle yet", werr, -32602, "staging too many uploads")

	// Past 5 minutes for the others: the new upload reclaims them, not the one used 2 s ago.
	clk.Advance(2 * time.Second)
	late.mustBegin("s", api.MaxFileBytes, nil)
	if n, werr := silent[0].chunk(ids[0], 4, []byte("!")); werr != nil || n != 5 {
		t.Fatalf("the recently used upload was reclaimed: %d %v", n, werr)
	}
	for i, c := range silent {
		for _, id := range ids[i*api.MaxUploadsPerConn : min(len(ids), (i+1)*api.MaxUploadsPerConn)] {
			if id == ids[0] {
				continue
			}
			_, werr := c.chunk(id, 0, []byte("x"))
			wantErr(t, "reclaimed upload", werr, -32602, "unknown or expired")
		}
	}
	// The reclaimed uploads left room: 23 more fit (25 - the kept one - late's), not 24.
	more := 0
	for _, c := range silent {
		for {
			if _, werr := c.begin("s", api.MaxFileBytes, nil); werr != nil {
				if !strings.Contains(werr.Message, "staging too many") && !strings.Contains(werr.Message, "4 uploads") {
					t.Fatalf("begin after reclaim: %s", werr)
				}
				break
			}
			more++
		}
	}
	if more != 23 {
		t.Fatalf("%d uploads fit after the reclaim, want 23", more)
	}
}

// A connection's own idle uploads stop counting against its limit of 4 once 5 minutes pass.
func TestUploadIdleOwnUploadsExpire(t *testing.T) {
	t.Parallel()
	clk := clocktest.New(time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC))
	d := Start(t, WithClock(clk))
	c := dialRC(t, d, "")
	c.newSession(api.SessionNewParams{SessionID: "s"})
	var ids []string
	for range api.MaxUploadsPerConn {
		ids = append(ids, c.mustBegin("s", 3, nil))
	}
	_, werr := c.begin("s", 3, nil)
	wantErr(t, "fifth", werr, -32602, "4 uploads")
	clk.Advance(upload.IdleTimeout)
	c.mustBegin("s", 3, nil)
	_, werr = c.commit(ids[0])
	wantErr(t, "expired commit", werr, -32602, "unknown or expired")
}

// commit re-checks the session it was bound to and the caller's rights at that moment; a failure writes nothing.
func TestUploadCommitRechecks(t *testing.T) {
	t.Parallel()
	data := []byte("bound to one incarnation")
	t.Run("session recreated", func(t *testing.T) {
		d := Start(t)
		c, other := dialRC(t, d, ""), dialRC(t, d, "")
		s := c.newSession(api.SessionNewParams{SessionID: "u"})
		id := c.mustBegin("u", int64(len(data)), map[string]any{"filename": "a.txt"})
		c.sendAll(id, data)
		other.mustCall(api.MethodSessionClose, api.SessionIDParams{SessionID: "u"}, nil)
		other.newSession(api.SessionNewParams{SessionID: "u"})
		_, werr := c.commit(id)
		wantErr(t, "recreated", werr, -32000, "closed or recreated")
		wantNoFile(t, stored(s.WorkspaceDir, data, ".txt"))
	})
	t.Run("session closed", func(t *testing.T) {
		d := Start(t)
		c := dialRC(t, d, "")
		s := c.newSession(api.SessionNewParams{SessionID: "u"})
		id := c.mustBegin("u", int64(len(data)), nil)
		c.sendAll(id, data)
		c.mustCall(api.MethodSessionClose, api.SessionIDParams{SessionID: "u"}, nil)
		_, werr := c.commit(id)
		wantErr(t, "closed", werr, -32000)
		wantNoFile(t, stored(s.WorkspaceDir, data, ""))
	})
	t.Run("files:create revoked", func(t *testing.T) {
		d := Start(t, uploadUser("files:create", "sessions:create", "config:update"))
		c := dialRC(t, d, "")
		s := c.newSession(api.SessionNewParams{SessionID: "u"})
		id := c.mustBegin("u", int64(len(data)), nil)
		c.sendAll(id, data)
		c.mustCall(api.MethodConfigSet, map[string]any{"prop": "permission_profiles.limited.grants",
			"value": []string{"sessions:create", "config:update"}}, nil)
		_, werr := c.commit(id)
		wantErr(t, "revoked", werr, -32012, "files:create")
		wantNoFile(t, stored(s.WorkspaceDir, data, ""))
	})
	t.Run("agent disabled", func(t *testing.T) {
		d := Start(t, WithConfig(twoAgents))
		c := dialRC(t, d, "")
		s := c.newSession(api.SessionNewParams{SessionID: "u", AgentAlias: "bot"})
		id := c.mustBegin("u", int64(len(data)), nil)
		c.sendAll(id, data)
		c.mustCall(api.MethodConfigSet, map[string]any{"prop": "agents.bot.enabled", "value": false}, nil)
		_, werr := c.commit(id)
		wantErr(t, "agent disabled", werr, -32012, "bot")
		wantNoFile(t, stored(s.WorkspaceDir, data, ""))
		// begin checks the agent too.
		_, werr = c.begin("u", 1, nil)
		wantErr(t, "begin on a disabled agent", werr, -32012, "bot")
	})
	t.Run("caller no longer owns the session", func(t *testing.T) {
		d := Start(t)
		c := dialRC(t, d, "")
		s := c.newSession(api.SessionNewParams{SessionID: "u"})
		id := c.mustBegin("u", int64(len(data)), nil)
		c.sendAll(id, data)
		// The operator maps its own uid to a plain user: from the next request on, the connection is that user,
		// who does not own the operator's session.
		c.mustCall(api.MethodConfigSetMany, map[string]any{"sets": []map[string]any{
			{"prop": "permission_profiles.up.grants", "value": []string{"files:create", "sessions:create"}},
			{"prop": "users.alice.uid", "value": os.Getuid()},
			{"prop": "users.alice.permission_profiles", "value": []string{"up"}},
		}}, nil)
		_, werr := c.commit(id)
		wantErr(t, "not owned", werr, -32003)
		wantNoFile(t, stored(s.WorkspaceDir, data, ""))
		// And begin refuses the session too.
		_, werr = c.begin("u", 1, nil)
		wantErr(t, "begin on another's session", werr, -32003)
	})
	t.Run("grant needed for every method", func(t *testing.T) {
		d := Start(t, uploadUser("sessions:create", "sessions:execute", "sessions:read"))
		c := dialRC(t, d, "")
		c.newSession(api.SessionNewParams{SessionID: "u"})
		for _, m := range []string{api.MethodFileAttach, api.MethodFileUploadBegin, api.MethodFileUploadChunk, api.MethodFileUploadCommit} {
			_, werr := c.call(m, map[string]any{"session_id": "u", "size_bytes": 1})
			wantErr(t, m, werr, -32012, "files:create")
		}
		// session/prompt attachments need it as well; a prompt without them does not.
		id := c.send(api.MethodSessionPrompt, map[string]any{"session_id": "u", "prompt": "x",
			"attachments": []map[string]any{{"data_b64": "eA=="}}})
		if tr := c.await(id, hooks{}); tr.err == nil || tr.err.Code != -32012 {
			t.Fatalf("prompt attachments without files:create: %+v", tr)
		}
		if tr := c.prompt("u", "plain", hooks{}); tr.err != nil {
			t.Fatalf("plain prompt: %s", tr.err)
		}
	})
}

// A commit racing session/close on another connection either stores the whole file before the close answers
// (commit succeeds, the file is there when the close returns) or is refused after it (-32000, nothing written);
// never anything in between.
func TestUploadCommitRacesSessionClose(t *testing.T) {
	t.Parallel()
	d := Start(t)
	c := dialRC(t, d, "")
	closer := d.Dial(t)
	closer.Initialize()
	stored0, refused := 0, 0
	for i := range 30 {
		s := c.newSession(api.SessionNewParams{SessionID: "race"})
		data := payload(16<<(i%15), uint64(i)) // 16 B to 256 KiB: fast and slow commits
		id := c.mustBegin("race", int64(len(data)), map[string]any{"filename": "r.bin"})
		c.sendAll(id, data)
		path := stored(s.WorkspaceDir, data, ".bin")
		// The commit goes out first; the close follows on the other connection while the commit is handled.
		cid := c.send(api.MethodFileUploadCommit, map[string]any{"upload_id": id})
		m, err := closer.TryCall(api.MethodSessionClose, map[string]any{"session_id": "race"}, i)
		if err != nil || m["error"] != nil {
			t.Fatalf("close: %v %v", m, err)
		}
		// The close answers only after a store that began before it: what is on disk now is final.
		onDiskAtClose, _ := os.ReadFile(path)
		f := c.recv()
		if idOf(f) != cid {
			t.Fatalf("expected the commit's response, got %s", f.Raw)
		}
		var a api.FileAttachment
		werr := f.Error
		if werr == nil {
			if err := json.Unmarshal(f.Result, &a); err != nil {
				t.Fatal(err)
			}
		}
		switch {
		case werr == nil:
			stored0++
			if a.WorkspacePath != path {
				t.Fatalf("commit stored %s, want %s", a.WorkspacePath, path)
			}
			wantFile(t, path, data)
			if !bytes.Equal(onDiskAtClose, data) {
				t.Fatalf("iteration %d: the close answered before the commit it raced had stored the file", i)
			}
		case werr.Code == -32000:
			refused++
			wantNoFile(t, path)
		default:
			t.Fatalf("commit racing close: %s", werr)
		}
	}
	t.Logf("%d commits stored before the close, %d refused after it", stored0, refused)
}

// The upload methods refuse a missing or malformed upload id like an unknown one.
func TestUploadUnknownID(t *testing.T) {
	t.Parallel()
	d := Start(t)
	c := dialRC(t, d, "")
	for _, id := range []string{"", "0123456789abcdef0123456789abcdef", "../x"} {
		_, werr := c.commit(id)
		wantErr(t, "commit "+id, werr, -32602, "unknown or expired")
		_, werr = c.chunk(id, 0, []byte("x"))
		wantErr(t, "chunk "+id, werr, -32602, "unknown or expired")
	}
	raw, _ := json.Marshal(map[string]any{"upload_id": 5})
	if _, werr := c.call(api.MethodFileUploadCommit, json.RawMessage(raw)); werr == nil || werr.Code != -32602 {
		t.Fatalf("numeric upload id: %v", werr)
	}
}

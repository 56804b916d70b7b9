package rpctest

import (
	"database/sql"
	"fmt"
	"strings"
	"testing"

	"github.com/zeroclaw-go/zeroclaw/internal/api"
)

// question is the prompt of turn n: 100 bytes, 25 estimated tokens + 4 (journal.EstimateTokens); with the answer
// "ok" (1 + 4) a turn is 34 tokens, so a budget of 100 holds two turns and a compaction keeps one.
func question(n int) string {
	p := fmt.Sprintf("q%d-", n)
	return p + strings.Repeat("x", 100-len(p))
}

// A long ACP session compacts its model context: history_trimmed is sent only once the snapshot and its boundary
// are committed (checked in the database when the event arrives), a failed snapshot write sends nothing, the next
// provider requests (also after a restart) carry the snapshot and what followed instead of the dropped turns, and
// session/messages still returns every message with its original index.
func TestACPCompaction(t *testing.T) {
	t.Parallel()
	srv := newLLM(t, stream(ctSSE, openAIText(1, 1, "ok")))
	cfg := agentConfig(fakeProviderTOML("openai", srv.URL), "openai.fake", "full", "")
	cfg = strings.Replace(cfg, "[agents.a]\n", "[agents.a]\nmax_context_tokens = 100\n", 1)
	d := Start(t, WithConfig(cfg))
	c := dialRC(t, d, "")
	c.newSession(acpNew("long"))
	side := openSide(t, acpDBPath(d))

	run := func(n int, h hooks) turn {
		t.Helper()
		tr := c.prompt("long", question(n), h)
		if tr.err != nil || tr.result.Outcome != api.OutcomeCompleted {
			t.Fatalf("turn %d: %+v %v", n, tr.result, tr.err)
		}
		return tr
	}
	lastBody := func() string {
		_, bodies := srv.requests()
		return string(bodies[len(bodies)-1])
	}
	for n := 1; n <= 2; n++ {
		if tr := run(n, hooks{}); len(only(tr.events, api.UpdateHistoryTrimmed)) != 0 {
			t.Fatalf("turn %d compacted a context within budget", n)
		}
	}

	// Turn 3 passes the budget, but the snapshot write fails: nothing is announced, the context stays whole.
	sqlExec(t, side, `CREATE TRIGGER no_snapshot BEFORE INSERT ON acp_checkpoints WHEN NEW.snapshot_json IS NOT NULL
		BEGIN SELECT RAISE(ABORT, 'injected'); END`)
	if tr := run(3, hooks{}); len(only(tr.events, api.UpdateHistoryTrimmed)) != 0 {
		t.Fatal("history_trimmed sent although the snapshot was not written")
	}
	var snapshots int
	if err := side.QueryRow(`SELECT COUNT(*) FROM acp_checkpoints WHERE snapshot_json IS NOT NULL`).Scan(&snapshots); err != nil || snapshots != 0 {
		t.Fatalf("%d snapshots after a failed write (%v)", snapshots, err)
	}
	sqlExec(t, side, `DROP TRIGGER no_snapshot`)

	// Turn 4: the snapshot row must exist by the time history_trimmed is seen.
	checked := false
	tr := run(4, hooks{onUpdate: func(u api.SessionUpdate) {
		if u.Type != api.UpdateHistoryTrimmed {
			return
		}
		var snap sql.NullString
		var boundary, last int64
		err := side.QueryRow(`SELECT snapshot_json, boundary_message_id, (SELECT MAX(id) FROM acp_messages)
			FROM acp_checkpoints ORDER BY generation DESC LIMIT 1`).Scan(&snap, &boundary, &last)
		if err != nil || !snap.Valid || boundary != last {
			t.Fatalf("history_trimmed seen before its checkpoint: snapshot %v, boundary %d, last message %d (%v)", snap, boundary, last, err)
		}
		if strings.Contains(snap.String, "q3-") || !strings.Contains(snap.String, "q4-") {
			t.Fatalf("snapshot %s: want turn 4 only", snap.String)
		}
		checked = true
	}})
	trimmed := only(tr.events, api.UpdateHistoryTrimmed)
	if len(trimmed) != 1 || !checked {
		t.Fatalf("turn 4 events %q: want one history_trimmed", kinds(tr.events))
	}
	if ev := trimmed[0]; deref(ev.DroppedMessages) != 6 || deref(ev.KeptTurns) != 1 || ev.Reason != "context_budget" {
		t.Fatalf("history_trimmed = dropped %d, kept_turns %d, reason %q; want 6, 1, context_budget",
			deref(ev.DroppedMessages), deref(ev.KeptTurns), ev.Reason)
	}
	if last := tr.events[len(tr.events)-1]; last.Type != api.UpdateTurnComplete {
		t.Fatalf("last event of the turn is %s", last.Type)
	}

	run(5, hooks{})
	body := lastBody()
	for _, q := range []string{"q1-", "q2-", "q3-"} {
		if strings.Contains(body, q) {
			t.Errorf("turn 5's provider request still carries the dropped %s...: %s", q, body)
		}
	}
	if !strings.Contains(body, "q4-") || !strings.Contains(body, "q5-") {
		t.Errorf("turn 5's provider request lacks the retained context: %s", body)
	}

	msgs := c.messages("long")
	if msgs.Total != 10 || len(msgs.Messages) != 10 {
		t.Fatalf("session/messages after compaction: total %d, %d messages; want all 10", msgs.Total, len(msgs.Messages))
	}
	for i, m := range msgs.Messages {
		want := "ok"
		if i%2 == 0 {
			want = question(i/2 + 1)
		}
		if m.Index != i || m.Content != want {
			t.Fatalf("message %d = index %d %q, want index %d %q", i, m.Index, m.Content, i, want)
		}
	}

	// A restarted daemon rebuilds the context from the snapshot and what followed it.
	if err := d.Stop(); err != nil {
		t.Fatal(err)
	}
	d = StartOn(t, d.ConfigDir)
	c = dialRC(t, d, "")
	c.newSession(acpNew("long"))
	run(6, hooks{})
	body = lastBody()
	if strings.Contains(body, "q1-") || strings.Contains(body, "q3-") || !strings.Contains(body, "q4-") || !strings.Contains(body, "q5-") {
		t.Errorf("turn 6's provider request after a restart: %s", body)
	}
}

package channel_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/zeroclaw-go/zeroclaw/internal/channel"
)

// Security-matrix row (chat channels): a stranger's approval answer is ignored like any stranger's message.
// IRC, MQTT and email read "yes <token>" / {"approval":...} from anyone, so without this a stranger could grow
// sessions.db with one row per line sent, and make the bot answer them ("This request is no longer waiting."),
// on email to a forged From: address (backscatter). Nor may it answer a live prompt.
func TestCoreStrangerApprovalsAreIgnored(t *testing.T) {
	ad := &fakeAdapter{in: make(chan channel.Inbound)}
	decisions := make(chan string, 1)
	tr := &echoTurner{hook: func(ctx context.Context, r channel.TurnRequest) (string, error) {
		d, err := r.Approve(ctx, channel.ApprovalAsk{RequestID: "r1", ToolName: "shell", Summary: "rm -rf ~"})
		if err != nil {
			d = "error:" + err.Error()
		}
		decisions <- d
		return "done " + d, nil
	}}
	h := newHarness(t, t.TempDir(), ad, tr, testConfig("7"))
	h.start()
	defer h.shutdown()
	ad.in <- msg("1", "7", "run it")
	waitFor(t, "the prompt", func() bool { ad.mu.Lock(); defer ad.mu.Unlock(); return len(ad.prompts) == 1 })
	tok := ad.prompts[0].Token
	const n = 50
	for i := range n {
		token := "bogus"
		if i == 0 {
			token = tok // a stranger who saw the prompt in a group
		}
		ad.in <- channel.Inbound{EventID: fmt.Sprint("s", i), Kind: channel.KindApproval, Sender: "9", ReplyTarget: "victim@example.com",
			Approval: &channel.ApprovalAnswer{Token: token, Decision: channel.DecisionAllowOnce, AckID: "victim@example.com"}}
	}
	ad.in <- channel.Inbound{EventID: "p1", Kind: channel.KindApproval, Sender: "7", ReplyTarget: "chat7",
		Approval: &channel.ApprovalAnswer{Token: tok, Decision: channel.DecisionRejectOnce, AckID: "cb1"}}
	if d := <-decisions; d != channel.DecisionRejectOnce {
		t.Fatalf("decision %q: a stranger's press counted", d)
	}
	st := h.core.Status(context.Background())[0]
	if st.Ignored != n {
		t.Fatalf("ignored %d of %d stranger answers", st.Ignored, n)
	}
	if approvals := st.Counts["event:answered"]; approvals > 2 { // the requester's press and its message
		t.Fatalf("counts %v: a stranger's approval answers were recorded in sessions.db", st.Counts)
	}
	ad.mu.Lock()
	defer ad.mu.Unlock()
	if len(ad.acks) != 1 || ad.acks[0] != "Denied." {
		t.Fatalf("acks %q: the bot answered a stranger", ad.acks)
	}
}

// Security-matrix row (chat channels): two senders never share a conversation. Upstream's key replaces every
// byte outside [A-Za-z0-9_-] with '_', so on an open channel (external_peers = ["*"]) a stranger mailing from
// a_b@example.com, or taking the IRC nick "alice_" for "alice|", would continue (and read back) the other's
// history. Keys of plain ids (Telegram's numbers) stay upstream's.
func TestCoreSendersWhoseIDsSanitizeAlikeGetTheirOwnSessions(t *testing.T) {
	ad := &fakeAdapter{in: make(chan channel.Inbound)}
	keys := make(chan string, 4)
	tr := &echoTurner{hook: func(_ context.Context, r channel.TurnRequest) (string, error) {
		keys <- r.Sender + " " + r.SessionKey
		return "ok", nil
	}}
	h := newHarness(t, t.TempDir(), ad, tr, testConfig("*"))
	h.start()
	defer h.shutdown()
	seen := map[string]string{}
	for i, who := range []string{"a.b@example.com", "a_b@example.com", "alice|", "alice_"} {
		ad.in <- channel.Inbound{EventID: fmt.Sprint(i), Kind: channel.KindMessage, Sender: who, ReplyTarget: who, Text: "hi"}
		var sender, key string
		fmt.Sscan(<-keys, &sender, &key)
		if other, dup := seen[key]; dup {
			t.Fatalf("%s and %s share session %s", other, sender, key)
		}
		seen[key] = sender
		if len(key) > 128 {
			t.Fatalf("key %q longer than 128 bytes", key)
		}
	}
	if k := channel.SessionKey(channel.ID{Type: "telegram", Alias: "default"}, "-100123", "7", "42"); k != "telegram_default_-100123_7_42" {
		t.Fatalf("a plain key changed: %q", k)
	}
}

package matrix_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/zeroclaw-go/zeroclaw/internal/channel"
	"github.com/zeroclaw-go/zeroclaw/internal/channel/chantest"
	"github.com/zeroclaw-go/zeroclaw/internal/channel/matrix"
	"github.com/zeroclaw-go/zeroclaw/internal/channel/matrix/matrixfake"
	"github.com/zeroclaw-go/zeroclaw/internal/config"
)

// An invite from an allowed sender is joined and the room answered from the join on (the history the
// homeserver sends with a newly joined room is not); a stranger's invite is not joined, and neither is an
// allowed sender's invite to a room outside allowed_rooms.
func TestMatrixInvitesOfAllowedSendersOnly(t *testing.T) {
	w := newWorld(t)
	mine := w.fake.CreateRoom("mine", w.owner)
	theirs := w.fake.CreateRoom("theirs", w.stranger)
	other := w.fake.CreateRoom("other", w.owner)
	mc := w.cfg()
	mc.AllowedRooms = []string{w.room, mine}
	_, _ = run(t, w, mc, &chantest.Turner{}, t.TempDir())
	synced(t, w, 0)
	w.fake.Say(mine, w.owner, "said before the bot joined")
	w.fake.Invite(theirs, w.stranger, w.bot)
	w.fake.Invite(other, w.owner, w.bot)
	w.fake.Invite(mine, w.owner, w.bot)
	chantest.WaitFor(t, "the join", func() bool { return w.fake.Joined(mine, w.bot) })
	w.fake.Say(mine, w.owner, "hello in mine")
	chantest.WaitFor(t, "the answer", func() bool { return len(w.fake.Sent()) >= 1 })
	time.Sleep(200 * time.Millisecond) // a reply to the history would be sent by now; the record is checked
	if s := w.fake.Sent(); len(s) != 1 || s[0].Room != mine || s[0].Body != "echo: hello in mine" {
		t.Fatalf("sent %+v", s)
	}
	if w.fake.Joined(theirs, w.bot) || w.fake.Joined(other, w.bot) {
		t.Fatal("joined a stranger's room or one outside allowed_rooms")
	}
	if w.fake.Calls("join") != 1 {
		t.Fatalf("%d joins", w.fake.Calls("join"))
	}
}

// What the bot does not answer: history from before its first sync, its own messages, notices, edits,
// encrypted events, rooms outside allowed_rooms, strangers; with mention_only, group messages that do not name
// it (a direct room with two members is always answered).
func TestMatrixWhatIsNotAnswered(t *testing.T) {
	w := newWorld(t)
	dm := w.fake.CreateRoom("dm", w.bot, w.owner)
	outside := w.fake.CreateRoom("outside", w.bot, w.owner)
	w.fake.Say(w.room, w.owner, "history before the first sync")
	mc := w.cfg()
	mc.MentionOnly = true
	mc.AllowedRooms = []string{w.room, dm}
	tr := &chantest.Turner{}
	dir := t.TempDir()
	_, stop := run(t, w, mc, tr, dir)
	synced(t, w, 0)
	w.fake.Say(w.room, w.owner, "no mention here")
	w.fake.SayContent(w.room, w.owner, map[string]any{"msgtype": "m.notice", "body": "bot: a notice"})
	w.fake.SayContent(w.room, w.owner, map[string]any{"msgtype": "m.text", "body": "* bot: edited",
		"m.relates_to": map[string]any{"rel_type": "m.replace", "event_id": "$x"}})
	w.fake.SayEncrypted(w.room, w.owner)
	w.fake.Say(outside, w.owner, "bot: outside")
	w.fake.Say(w.room, w.stranger, "bot: I am a stranger")
	w.fake.Say(w.room, w.bot, "bot: my own words")
	w.fake.SayContent(w.room, w.owner, map[string]any{"msgtype": "m.text", "body": "hey you",
		"m.mentions": map[string]any{"user_ids": []string{w.bot}}})
	w.fake.Say(w.room, w.owner, "bot: mentioned by name")
	w.fake.Say(dm, w.owner, "direct, no mention")
	chantest.WaitFor(t, "three answers", func() bool { return len(w.fake.Sent()) == 3 })
	time.Sleep(300 * time.Millisecond) // nothing else is on its way (the fake's record is checked again below)
	got := map[string]bool{}
	for _, m := range w.fake.Sent() {
		got[m.Body] = true
	}
	for _, want := range []string{"echo: hey you", "echo: bot: mentioned by name", "echo: direct, no mention"} {
		if !got[want] {
			t.Fatalf("missing %q in %q", want, bodies(w.fake.Sent()))
		}
	}
	if len(w.fake.Sent()) != 3 {
		t.Fatalf("sent %q", bodies(w.fake.Sent()))
	}
	// After a restart no summary comes with the rooms: the direct room's member count is asked for.
	stop()
	syncs := w.fake.Calls("sync")
	_, _ = run(t, w, mc, tr, dir)
	synced(t, w, syncs)
	w.fake.Say(w.room, w.owner, "group, still no mention")
	w.fake.Say(dm, w.owner, "direct again")
	chantest.WaitFor(t, "the direct answer", func() bool { return len(w.fake.Sent()) == 4 })
	if s := w.fake.Sent()[3]; s.Body != "echo: direct again" || w.fake.Calls("joined_members") == 0 {
		t.Fatalf("sent %+v, %d member lookups", s, w.fake.Calls("joined_members"))
	}
}

// A rejected access token parks the channel (no retry loop), and no error or state file shows the token.
func TestMatrixBadTokenParksWithoutLeakingIt(t *testing.T) {
	w := newWorld(t)
	mc := w.cfg()
	mc.AccessToken = "syt_not_a_token_the_server_knows"
	core, _ := run(t, w, mc, &chantest.Turner{}, t.TempDir())
	chantest.WaitFor(t, "parked", func() bool {
		st := core.Status(context.Background())
		return len(st) == 1 && st[0].State == channel.StateParked
	})
	st := core.Status(context.Background())[0]
	if strings.Contains(st.LastError, mc.AccessToken) || !strings.Contains(st.LastError, "access_token") || !strings.Contains(st.LastError, "M_UNKNOWN_TOKEN") {
		t.Fatalf("last error %q", st.LastError)
	}
	calls := w.fake.Calls("whoami") + w.fake.Calls("sync")
	time.Sleep(100 * time.Millisecond)
	if w.fake.Calls("whoami")+w.fake.Calls("sync") != calls {
		t.Fatal("a parked channel kept calling the homeserver")
	}
}

// A password login keeps the device it was given and reuses it after a restart (so the homeserver's
// per-device transaction ids dedupe across restarts); the state file holds no password and no token.
func TestMatrixPasswordLoginReusesTheDevice(t *testing.T) {
	w := newWorld(t)
	mc := config.MatrixConfig{Enabled: true, Homeserver: w.fake.URL(), UserID: w.bot, Password: "bot-pw", ReplyInThread: true}
	dir := t.TempDir()
	_, stop := run(t, w, mc, &chantest.Turner{}, dir)
	synced(t, w, 0)
	w.fake.Say(w.room, w.owner, "one")
	chantest.WaitFor(t, "the first answer", func() bool { return len(w.fake.Sent()) == 1 })
	stop()
	syncs := w.fake.Calls("sync")
	_, _ = run(t, w, mc, &chantest.Turner{}, dir)
	synced(t, w, syncs)
	w.fake.Say(w.room, w.owner, "two")
	chantest.WaitFor(t, "the second answer", func() bool { return len(w.fake.Sent()) == 2 })
	s := w.fake.Sent()
	if s[0].Device == "" || s[0].Device != s[1].Device || w.fake.Calls("login") != 2 {
		t.Fatalf("devices %q %q after %d logins", s[0].Device, s[1].Device, w.fake.Calls("login"))
	}
	raw, err := os.ReadFile(filepath.Join(dir, "channels", "matrix.default", "sync.json"))
	if err != nil || strings.Contains(string(raw), "bot-pw") || strings.Contains(string(raw), "syt_") || !strings.Contains(string(raw), s[0].Device) {
		t.Fatalf("state %s (%v)", raw, err)
	}
	// A wrong password parks the channel.
	bad := mc
	bad.Password = "wrong"
	a, _ := matrix.New(channel.ID{Type: "matrix", Alias: "x"}, bad, matrix.Options{})
	if err := a.Run(context.Background(), &chantest.Deliverer{}); !errors.Is(err, channel.ErrPermanent) || strings.Contains(err.Error(), "wrong") {
		t.Fatalf("bad password: %v", err)
	}
}

// A send whose answer was lost (the crash window between sending and recording) is found by WasSent through
// its transaction id; a message not found is sent then, once; resending either reuses its transaction id and
// the homeserver dedupes it; a failed lookup is an error (the reply is then reported unconfirmed).
func TestMatrixWasSentFindsALostSend(t *testing.T) {
	w := newWorld(t)
	a, err := matrix.New(channel.ID{Type: "matrix", Alias: "default"}, w.cfg(), matrix.Options{RequestTimeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	m := channel.Outbound{ReplyTarget: w.room, Text: "the reply", Key: "matrix.default/7"}
	w.fake.Inject("send", matrixfake.Fault{Lost: true})
	if _, err := a.Send(ctx, m); err == nil {
		t.Fatal("a lost answer was a success")
	}
	sent, s, err := a.WasSent(ctx, m)
	if err != nil || !sent || len(w.fake.Sent()) != 1 || s.MessageID != w.fake.Sent()[0].EventID {
		t.Fatalf("WasSent = %v %+v %v; the server has %+v", sent, s, err, w.fake.Sent())
	}
	other := channel.Outbound{ReplyTarget: w.room, Text: "the reply", Key: "matrix.default/8"}
	sent, s2, err := a.WasSent(ctx, other)
	if err != nil || !sent || len(w.fake.Sent()) != 2 || s2.MessageID != w.fake.Sent()[1].EventID || w.fake.Sent()[1].TxnID != matrix.TxnID(other) {
		t.Fatalf("WasSent of a message not sent = %v %+v %v; the server has %+v", sent, s2, err, w.fake.Sent())
	}
	again, err := a.Send(ctx, m)
	if err != nil || again.MessageID != s.MessageID || len(w.fake.Sent()) != 2 || w.fake.Resends() != 1 {
		t.Fatalf("resend %+v %v: %d sent, %d resends", again, err, len(w.fake.Sent()), w.fake.Resends())
	}
	if matrix.TxnID(m) == matrix.TxnID(other) || matrix.TxnID(m) != matrix.TxnID(m) {
		t.Fatal("transaction ids are not one per message")
	}
	third := channel.Outbound{ReplyTarget: w.room, Text: "x", Key: "matrix.default/9"}
	w.fake.Inject("messages", matrixfake.Fault{Status: 502})
	if sent, _, err := a.WasSent(ctx, third); err == nil || sent || len(w.fake.Sent()) != 2 {
		t.Fatalf("WasSent with a failed lookup = %v %v (%d sent)", sent, err, len(w.fake.Sent()))
	}
	w.fake.Inject("send", matrixfake.Fault{Status: 502})
	if sent, _, err := a.WasSent(ctx, third); err != nil || sent || len(w.fake.Sent()) != 2 {
		t.Fatalf("WasSent whose send failed = %v %v: back to the outbox", sent, err)
	}
}

// The homeserver's answers steer the core: 429 M_LIMIT_EXCEEDED is a RetryAfter of retry_after_ms, a 5xx is
// retried, a 403 on send (not in the room) is permanent, and so is a configured token the server rejects.
func TestMatrixSendErrors(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	a, _ := matrix.New(channel.ID{Type: "matrix", Alias: "default"}, w.cfg(), matrix.Options{})
	m := channel.Outbound{ReplyTarget: w.room, Text: "x", Key: "k1"}
	w.fake.Inject("send", matrixfake.Fault{Status: 429, RetryAfterMS: 2500}, matrixfake.Fault{Status: 502})
	_, err := a.Send(ctx, m)
	var ra *channel.RetryAfter
	if !errors.As(err, &ra) || ra.After != 2500*time.Millisecond {
		t.Fatalf("429: %v", err)
	}
	if _, err := a.Send(ctx, m); err == nil || errors.Is(err, channel.ErrPermanent) || errors.As(err, &ra) {
		t.Fatalf("502: %v", err)
	}
	notMine := w.fake.CreateRoom("closed", w.stranger)
	if _, err := a.Send(ctx, channel.Outbound{ReplyTarget: notMine, Text: "x", Key: "k2"}); !errors.Is(err, channel.ErrPermanent) {
		t.Fatalf("403: %v", err)
	}
	bad := w.cfg()
	bad.AccessToken = "syt_revoked"
	b, _ := matrix.New(channel.ID{Type: "matrix", Alias: "default"}, bad, matrix.Options{})
	if _, err := b.Send(ctx, m); !errors.Is(err, channel.ErrPermanent) || strings.Contains(err.Error(), "syt_revoked") {
		t.Fatalf("401: %v", err)
	}
	if _, err := matrix.New(channel.ID{Type: "matrix", Alias: "x"}, config.MatrixConfig{Homeserver: "ftp://x", AccessToken: "t"}, matrix.Options{}); !errors.Is(err, channel.ErrPermanent) {
		t.Fatalf("bad homeserver: %v", err)
	}
	if _, err := matrix.New(channel.ID{Type: "matrix", Alias: "x"}, config.MatrixConfig{Homeserver: w.fake.URL()}, matrix.Options{}); !errors.Is(err, channel.ErrPermanent) {
		t.Fatalf("no credentials: %v", err)
	}
}

// More messages than one sync's timeline limit arrive while the daemon is down: the limited timeline's gap is
// read back with /messages, and every message is answered once, in order.
func TestMatrixGapIsReadBack(t *testing.T) {
	w := newWorld(t)
	dir := t.TempDir()
	_, stop := run(t, w, w.cfg(), &chantest.Turner{}, dir)
	synced(t, w, 0)
	w.fake.Say(w.room, w.owner, "first")
	chantest.WaitFor(t, "the first answer", func() bool { return len(w.fake.Sent()) == 1 })
	stop()
	// The filter's timeline limit is 50 and a /messages page holds 100: 180 leave a gap of 130, two pages.
	// (130 left a gap of 80, one page; the test passed only when a later sync was limited too.)
	const n = 180
	for i := range n {
		w.fake.Say(w.room, w.owner, "gap "+strconv.Itoa(i))
	}
	_, _ = run(t, w, w.cfg(), &chantest.Turner{}, dir)
	chantest.WaitFor(t, "every answer", func() bool { return len(w.fake.Sent()) == n+1 }, func() string { return strconv.Itoa(len(w.fake.Sent())) })
	seen := map[string]int{}
	for _, m := range w.fake.Sent() {
		seen[m.Body]++
	}
	for i := range n {
		if seen["echo: gap "+strconv.Itoa(i)] != 1 {
			t.Fatalf("gap %d answered %d times", i, seen["echo: gap "+strconv.Itoa(i)])
		}
	}
	// Only gap reads (requests bounded by a to token) count, not WasSent's history scans. The restart's gap
	// of 130 needs two pages on its own; a later sync limited by the bot's own fast replies may add one.
	if w.fake.Calls("messages to") < 2 {
		t.Fatalf("the gap was read in %d pages", w.fake.Calls("messages to"))
	}
}

// With a password login, a token the homeserver stops accepting is replaced by a fresh login on the same
// device (the channel is not parked), and the reply still goes out once.
func TestMatrixPasswordLoginRecoversFromARevokedToken(t *testing.T) {
	w := newWorld(t)
	mc := config.MatrixConfig{Enabled: true, Homeserver: w.fake.URL(), UserID: w.bot, Password: "bot-pw"}
	core, _ := run(t, w, mc, &chantest.Turner{}, t.TempDir())
	synced(t, w, 0)
	w.fake.Revoke(w.bot)
	w.fake.Say(w.room, w.owner, "still there?")
	chantest.WaitFor(t, "the answer after a new login", func() bool { return len(w.fake.Sent()) == 1 })
	if w.fake.Calls("login") < 2 || w.fake.Sent()[0].Body != "echo: still there?" {
		t.Fatalf("%d logins, sent %+v", w.fake.Calls("login"), w.fake.Sent())
	}
	if st := core.Status(context.Background())[0]; st.State == channel.StateParked {
		t.Fatalf("parked: %+v", st)
	}
}

// A notice to a room alias (a heartbeat's or a SOP's target "matrix:#ops:server") goes to the room the alias
// names; an unknown alias is a permanent failure.
func TestMatrixSendToARoomAlias(t *testing.T) {
	w := newWorld(t)
	alias := w.fake.Alias("ops", w.room)
	a, _ := matrix.New(channel.ID{Type: "matrix", Alias: "default"}, w.cfg(), matrix.Options{})
	ctx := context.Background()
	for i := range 2 {
		if _, err := a.Send(ctx, channel.Outbound{ReplyTarget: alias, Text: "notice " + strconv.Itoa(i), Key: "n" + strconv.Itoa(i)}); err != nil {
			t.Fatal(err)
		}
	}
	if s := w.fake.Sent(); len(s) != 2 || s[0].Room != w.room || s[1].Room != w.room || w.fake.Calls("directory") != 1 {
		t.Fatalf("sent %+v after %d lookups", s, w.fake.Calls("directory"))
	}
	if sent, _, err := a.WasSent(ctx, channel.Outbound{ReplyTarget: alias, Text: "notice 1", Key: "n1"}); !sent || err != nil || len(w.fake.Sent()) != 2 {
		t.Fatalf("WasSent through the alias: %v %v", sent, err)
	}
	if _, err := a.Send(ctx, channel.Outbound{ReplyTarget: "#nowhere:fake.local", Text: "x", Key: "n9"}); !errors.Is(err, channel.ErrPermanent) {
		t.Fatalf("unknown alias: %v", err)
	}
}

// A long poll the homeserver never answers (a dead connection) is given up after its timeout and a grace, and
// the channel goes on: the message sent meanwhile is answered.
func TestMatrixHungSyncIsGivenUp(t *testing.T) {
	w := newWorld(t)
	_, _ = run(t, w, w.cfg(), &chantest.Turner{}, t.TempDir())
	synced(t, w, 0)
	w.fake.Inject("sync", matrixfake.Fault{Hang: true})
	chantest.WaitFor(t, "the hung poll", func() bool { return w.fake.Calls("sync") >= 3 })
	w.fake.Say(w.room, w.owner, "are you there")
	chantest.WaitFor(t, "the answer", func() bool { return len(w.fake.Sent()) == 1 })
	if s := w.fake.Sent()[0]; s.Body != "echo: are you there" {
		t.Fatalf("sent %+v", s)
	}
}

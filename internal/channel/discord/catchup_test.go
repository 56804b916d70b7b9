package discord_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/zeroclaw-go/zeroclaw/internal/channel"
	"github.com/zeroclaw-go/zeroclaw/internal/channel/chantest"
	"github.com/zeroclaw-go/zeroclaw/internal/channel/discord"
	"github.com/zeroclaw-go/zeroclaw/internal/config"
)

// After the session is invalidated while the bot is down (Discord then replays nothing), the next start
// identifies and reads what it missed from REST: every channel it had recorded messages from, after the last
// one, 100 a page, oldest first, each message once; the guild channel's messages keep their guild (REST
// objects have no guild_id) and so pass its guild filter as group messages; the bot's own replies and the
// message recorded before are not delivered again. A second invalidation with nothing new reads nothing twice.
func TestDiscordCatchUpAfterInvalidSession(t *testing.T) {
	fake := startFake(t)
	dir := t.TempDir()
	const guild, room = "7700000000000000001", "6100000000000000001"
	newA := func() *discord.Adapter {
		a, err := discord.New(channel.ID{Type: "discord", Alias: "default"}, config.DiscordConfig{BotToken: token,
			APIBaseURL: fake.URL(), GuildIDs: []string{guild}}, nil, dir)
		if err != nil {
			t.Fatal(err)
		}
		discord.SetInvalidWait(a, 10*time.Millisecond)
		return a
	}
	b := &chantest.Deliverer{}
	a := newA()
	stop := runAsync(a, b)
	chantest.WaitFor(t, "the session", fake.Caught)
	firstRoom := fake.SendText(owner, "o", room, guild, "in the room")
	firstDM := fake.SendText(owner, "o", dm, "", "in the dm")
	chantest.WaitFor(t, "the first two", func() bool { return len(b.Events()) == 2 })
	if _, err := a.Send(context.Background(), channel.Outbound{ReplyTarget: room, Text: "a reply of the bot", Key: "k1"}); err != nil {
		t.Fatal(err)
	}
	_ = stop()

	fake.Invalidate()
	want := map[string]string{}
	var order []string
	for i := range 230 {
		id := fake.SendText(owner, "o", room, guild, fmt.Sprintf("missed %d", i))
		want[id], order = room, append(order, id)
	}
	dmMissed := fake.SendText(owner, "o", dm, "", "missed in the dm")
	want[dmMissed] = dm
	other := fake.SendText(owner, "o", "6200000000000000001", guild, "a channel never recorded from")

	stop = runAsync(newA(), b)
	chantest.WaitFor(t, "the missed messages", func() bool { return len(b.Events()) == 2+len(want) })
	chantest.WaitFor(t, "the catch-up's four pages", func() bool { return len(fake.Lists()) >= 4 })
	_ = stop() // Run returns after the catch-up goroutine: every delivery it made is in b
	got := b.Events()
	if len(got) != 2+len(want) {
		t.Fatalf("%d deliveries, want %d", len(got), 2+len(want))
	}
	seen := map[string]int{}
	var roomOrder []string
	for _, ev := range got[2:] {
		seen[ev.EventID]++
		ch, ok := want[ev.EventID]
		switch {
		case !ok:
			t.Errorf("delivered %s (%q), not a missed message", ev.EventID, ev.Text)
		case ev.ReplyTarget != ch || ev.Group != (ch == room) || ev.Sender != owner:
			t.Errorf("event %+v: want channel %s, group %t", ev, ch, ch == room)
		}
		if ch == room {
			roomOrder = append(roomOrder, ev.EventID)
		}
	}
	for id, n := range seen {
		if n != 1 {
			t.Errorf("message %s delivered %d times", id, n)
		}
	}
	if strings.Join(roomOrder, ",") != strings.Join(order, ",") {
		t.Errorf("the room's missed messages came out of order")
	}
	if seen[firstRoom]+seen[firstDM]+seen[other] != 0 {
		t.Errorf("delivered again or from an unknown channel: %v", seen)
	}
	lists := fake.Lists()
	wantFirst := room + "?after=" + firstRoom + "&limit=100"
	if len(lists) != 4 || lists[0] != dm+"?after="+firstDM+"&limit=100" && lists[0] != wantFirst {
		t.Fatalf("lists %v: want one page for the dm and three for the room", lists)
	}
	if fake.Identifies() != 2 {
		t.Fatalf("identifies %d, want a new session", fake.Identifies())
	}

	// Nothing new: the cursors moved, so the next lost session reads one empty page per channel.
	fake.Invalidate()
	stop = runAsync(newA(), b)
	chantest.WaitFor(t, "the second catch-up", func() bool { return len(fake.Lists()) == 6 })
	_ = stop()
	for _, l := range fake.Lists()[4:] {
		if !strings.Contains(l, "after="+order[len(order)-1]) && !strings.Contains(l, "after="+dmMissed) {
			t.Errorf("second catch-up read %s: not after the last delivered message", l)
		}
	}
	if n := len(b.Events()); n != 2+len(want) {
		t.Fatalf("%d deliveries after the second catch-up, want still %d", n, 2+len(want))
	}
}

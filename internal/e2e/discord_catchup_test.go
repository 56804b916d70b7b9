package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/zeroclaw-go/zeroclaw/internal/channel/chantest"

	"github.com/zeroclaw-go/zeroclaw/internal/channel/discord/discordfake"
)

// The daemon is killed (-9) and, while it is down, the gateway session is invalidated and messages are sent:
// Discord will replay none of them. The restarted daemon identifies a new session and reads what it missed
// from REST (after the last message it recorded); killed again in the middle of that, the next start does it
// again. Every message is answered exactly once, counted against the fake's record.
func TestDiscordCatchUpAfterInvalidatedSessionE2E(t *testing.T) {
	fake := discordfake.Start(dcToken)
	fake.HeartbeatMs = 200
	defer fake.Close()
	h, root := echoHome(t)
	appendFile(t, filepath.Join(root, "config.toml"), discordBlock(fake))
	state := filepath.Join(root, "data", "channels", "discord.default", "gateway.json")
	answered := func() map[string]int {
		out := map[string]int{}
		for _, m := range fake.Sent() {
			out[m.ReplyTo]++
		}
		return out
	}
	d := start(t, env(h), "daemon")
	waitSocket(t, d, agentSock(h))
	waitUntil(t, "the gateway session", 20*time.Second, fake.Caught)
	first := fake.SendText("4242", "owner", "5555", "", "before the outage")
	waitUntil(t, "the first answer", 20*time.Second, func() bool { return answered()[first] == 1 })
	waitUntil(t, "the channel's cursor on disk", 20*time.Second, func() bool {
		b, _ := os.ReadFile(state)
		return strings.Contains(string(b), `"cursors"`) && strings.Contains(string(b), first)
	})
	signal(t, d, syscall.SIGKILL)
	<-d.done

	fake.Invalidate()
	msgs := map[string]bool{first: true}
	for i := range 5 {
		msgs[fake.SendText("4242", "owner", "5555", "", fmt.Sprintf("sent while down %d", i))] = true
	}
	d = start(t, env(h), "daemon")
	waitUntil(t, "a catch-up read", 30*time.Second, func() bool { return len(fake.Lists()) >= 1 })
	signal(t, d, syscall.SIGKILL) // in the middle of the catch-up, or just after it
	<-d.done
	d = start(t, env(h), "daemon")
	waitSocket(t, d, agentSock(h))
	waitUntil(t, "every missed message answered", 60*time.Second, func() bool { return len(answered()) == len(msgs) })
	after := fake.SendText("4242", "owner", "5555", "", "after the outage")
	msgs[after] = true
	waitUntil(t, "the live message answered", 20*time.Second, func() bool { return answered()[after] == 1 })
	signal(t, d, syscall.SIGTERM)
	d.wait(t, 30*time.Second)

	chantest.AnsweredOnce(t, msgs, answered())
	chantest.Drained(t, filepath.Join(root, "data", "sessions", "sessions.db"), "discord.default")
	if fake.Identifies() < 2 {
		t.Errorf("identifies %d: no new session after the invalidation", fake.Identifies())
	}
	if l := fake.Lists(); len(l) == 0 || !strings.Contains(l[0], "5555?after="+first+"&limit=100") {
		t.Errorf("catch-up reads %v: want the DM after %s first", l, first)
	}
}

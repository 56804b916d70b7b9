package chantest

import (
	"context"
	"fmt"
	"testing"

	"github.com/zeroclaw-go/zeroclaw/internal/store"
)

// OwnerBlock is the end of a config.toml that lets peer talk to agent "default" on typ's channels (peer group
// "me") and restarts a failed channel after 1 s. The test writes the [channels.<typ>.<alias>] entry before it.
func OwnerBlock(typ, peer string) string {
	return fmt.Sprintf(`
[peer_groups.me]
channel = %q
agents = ["default"]
external_peers = [%q]

[reliability]
channel_initial_backoff_secs = 1
channel_max_backoff_secs = 1
`, typ, peer)
}

// AnsweredOnce fails t for every message of sent whose answer count is not 1 and for every answer to a
// message nobody sent (answered counts the platform's record of replies by the message each answers).
func AnsweredOnce[K comparable](t testing.TB, sent map[K]bool, answered map[K]int) {
	t.Helper()
	for id := range sent {
		if answered[id] != 1 {
			t.Errorf("message %v answered %d times", id, answered[id])
		}
	}
	for id := range answered {
		if !sent[id] {
			t.Errorf("a reply to %v, which nobody sent", id)
		}
	}
}

// Drained opens the stopped daemon's sessions.db at dbPath and returns channel id's event and outbox counts,
// failing t when work is left (an event received or running, a reply pending or sending) and listing every
// reply that failed.
func Drained(t testing.TB, dbPath, id string) map[string]int {
	t.Helper()
	ctx := context.Background()
	st, err := store.OpenChat(ctx, dbPath)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	counts, err := st.ChannelCounts(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if counts["event:received"]+counts["event:running"] != 0 || counts["out:pending"]+counts["out:sending"] != 0 {
		t.Errorf("work left after the clean run: %v", counts)
	}
	failed, err := st.ChannelOutbox(ctx, id, store.ChanOutFailed, 100)
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range failed {
		t.Errorf("reply %d to %s failed after %d attempts: %s", o.ID, o.ReplyTo, o.Attempts, o.Err)
	}
	return counts
}

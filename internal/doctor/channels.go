package doctor

import (
	"fmt"
	"strings"

	"github.com/zeroclaw-go/zeroclaw/internal/api"
)

// checkChannels reports each running chat channel: parked (a permanent failure such as a rejected token) is an
// error; failing, stale (no progress), replies left unconfirmed by a crash or given up, and a config that
// leaves the channel deaf are warnings.
func checkChannels(r *report, chans []api.ChannelStatus) {
	for _, c := range chans {
		id := "channel-" + c.ID
		switch c.State {
		case "parked":
			r.fail(CategoryChannels, id, "channels."+c.ID, fmt.Sprintf("channel %s is stopped: %s", c.ID, c.LastError),
				"fix what the error names (a bot token: zeroclaw config set channels."+c.ID+".bot_token ...), then zeroclaw config reload")
			continue
		case "backoff", "stale":
			r.warn(CategoryChannels, id, "channels."+c.ID, fmt.Sprintf("channel %s is %s: %s", c.ID, c.State, c.LastError),
				"check the network and the platform's status; it reconnects by itself")
			continue
		}
		if len(c.Warnings) > 0 {
			r.warn(CategoryChannels, id, "channels."+c.ID, fmt.Sprintf("channel %s: %s", c.ID, strings.Join(c.Warnings, "; ")),
				"see README \"Channels\": agents.<alias>.channels and [peer_groups.<name>]")
			continue
		}
		if n, f := c.Counts["out:unconfirmed"], c.Counts["out:failed"]; n+f > 0 {
			r.warn(CategoryChannels, id, "channels."+c.ID, fmt.Sprintf("channel %s: %d repl(ies) unconfirmed after a crash, %d given up", c.ID, n, f),
				"the chat may lack those answers; ask again there")
			continue
		}
		r.ok(CategoryChannels, id, fmt.Sprintf("channel %s is %s (%d messages answered)", c.ID, c.State, c.Counts["event:answered"]))
	}
}

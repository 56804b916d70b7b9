package discord

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"slices"
	"time"

	"github.com/zeroclaw-go/zeroclaw/internal/channel"
)

// Catch-up after a lost session. A RESUME replays what was sent while the bot was away; a new session (READY
// after INVALID_SESSION, an expired session, a state lost with a crash) does not, so the adapter reads what it
// missed from REST: GET /channels/{id}/messages?after=<the last message it recorded there>, page by page, for
// each channel it has recorded messages from, each message going through the same decode, filters and durable
// dedupe (its id is the event id) as a MESSAGE_CREATE.
const (
	// maxCursors bounds the channels remembered for a catch-up: the least recently active is forgotten.
	maxCursors = 64
	// catchUpPage is Discord's largest page; catchUpPages bounds one channel's catch-up (older gaps are left).
	catchUpPage  = 100
	catchUpPages = 10
	// catchUpMaxWait is the longest pause between two attempts of a failing catch-up.
	catchUpMaxWait = 30 * time.Second
)

// cursor is the last message recorded in one channel, with the channel's guild ("" : a DM), which REST
// message objects do not carry and the filters need.
type cursor struct {
	ID    string `json:"id"`
	Guild string `json:"guild,omitempty"`
}

// later reports whether snowflake a is after b (both decimal, no leading zeros).
func later(a, b string) bool {
	if len(a) != len(b) {
		return len(a) > len(b)
	}
	return a > b
}

// noteCursor records that message id of channel ch (in guild) was recorded: the channel's cursor moves forward.
func (s *gwState) noteCursor(ch, id, guild string) {
	if !snowflake(ch) || !snowflake(id) || guild != "" && !snowflake(guild) {
		return
	}
	if s.Cursors == nil {
		s.Cursors = map[string]cursor{}
	}
	if c, ok := s.Cursors[ch]; ok {
		if later(id, c.ID) {
			s.Cursors[ch] = cursor{ID: id, Guild: cmpOr(guild, c.Guild)}
		}
		return
	}
	for len(s.Cursors) >= maxCursors { // forget the channel whose last message is the oldest
		oldest := ""
		for k, c := range s.Cursors {
			if oldest == "" || later(s.Cursors[oldest].ID, c.ID) {
				oldest = k
			}
		}
		delete(s.Cursors, oldest)
	}
	s.Cursors[ch] = cursor{ID: id, Guild: guild}
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// validCursors reports whether a stored cursor set is one noteCursor could have made.
func validCursors(cs map[string]cursor) bool {
	if len(cs) > maxCursors {
		return false
	}
	for ch, c := range cs {
		if !snowflake(ch) || !snowflake(c.ID) || c.Guild != "" && !snowflake(c.Guild) {
			return false
		}
	}
	return true
}

// catchUpLoop runs the pending catch-up until it is done or ctx ends, pausing between failed attempts (a
// connection that ends first leaves it pending for the next).
func (a *Adapter) catchUpLoop(ctx context.Context, d channel.Deliverer) {
	wait := time.Second
	for ctx.Err() == nil {
		err := a.catchUp(ctx, d)
		if err == nil {
			return
		}
		pause := wait
		if ra := (*channel.RetryAfter)(nil); errors.As(err, &ra) && ra.After > 0 {
			pause = min(ra.After, catchUpMaxWait)
		}
		wait = min(wait*2, catchUpMaxWait)
		t := time.NewTimer(pause)
		select {
		case <-ctx.Done():
		case <-t.C:
		}
		t.Stop()
	}
}

// catchUp reads every remembered channel's missed messages and clears the pending mark.
func (a *Adapter) catchUp(ctx context.Context, d channel.Deliverer) error {
	st := a.state()
	chans := make([]string, 0, len(st.Cursors))
	for ch := range st.Cursors {
		chans = append(chans, ch)
	}
	slices.Sort(chans)
	for _, ch := range chans {
		if err := a.catchUpChannel(ctx, d, ch); err != nil {
			return err
		}
	}
	a.update(true, func(s *gwState) { s.CatchUp = false })
	return nil
}

// catchUpChannel delivers channel ch's messages after its cursor, oldest first, at most catchUpPages pages. A
// channel the bot can no longer read (404, 403) is forgotten.
func (a *Adapter) catchUpChannel(ctx context.Context, d channel.Deliverer, ch string) error {
	for range catchUpPages {
		cur, ok := a.state().Cursors[ch]
		if !ok {
			return nil
		}
		var page []json.RawMessage
		err := a.call(ctx, http.MethodGet, "messages/list", "/channels/"+ch+"/messages?after="+cur.ID+"&limit=100", true, nil, &page)
		var ae *apiError
		if errors.As(err, &ae) && (ae.status == http.StatusNotFound || ae.status == http.StatusForbidden) {
			a.update(true, func(s *gwState) { delete(s.Cursors, ch) })
			return nil
		}
		if err != nil {
			return err
		}
		type item struct {
			id  string
			raw json.RawMessage
		}
		items := make([]item, 0, len(page))
		for _, raw := range page {
			var m struct {
				ID        string `json:"id"`
				ChannelID string `json:"channel_id"`
			}
			// Only this channel's messages after the cursor: a hostile answer cannot move another channel's
			// cursor or make the adapter read backwards.
			if json.Unmarshal(raw, &m) == nil && snowflake(m.ID) && m.ChannelID == ch && later(m.ID, cur.ID) {
				items = append(items, item{m.ID, raw})
			}
		}
		slices.SortFunc(items, func(x, y item) int {
			switch {
			case x.id == y.id:
				return 0
			case later(x.id, y.id):
				return 1
			}
			return -1
		})
		for _, it := range items {
			raw := it.raw
			if cur.Guild != "" {
				raw = withGuild(raw, cur.Guild)
			}
			if ev, ok, err := DecodeMessage(raw, a.filter); err == nil && ok {
				if err := d.Deliver(ctx, ev); err != nil {
					return err
				}
			}
			a.update(false, func(s *gwState) { s.noteCursor(ch, it.id, cur.Guild) })
		}
		a.update(true, func(*gwState) {})
		if len(page) < catchUpPage || len(items) == 0 {
			return nil
		}
	}
	return nil
}

// withGuild is the message object raw with guild_id set to guild unless it has one.
func withGuild(raw json.RawMessage, guild string) json.RawMessage {
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) != nil {
		return raw
	}
	if _, ok := m["guild_id"]; ok {
		return raw
	}
	m["guild_id"], _ = json.Marshal(guild)
	out, err := json.Marshal(m)
	if err != nil {
		return raw
	}
	return out
}

package main

import (
	"database/sql"
	"encoding/json"
	"fmt"
	"maps"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/zeroclaw-go/zeroclaw/internal/channel/telegram/tgfake"
)

// Channel traffic in the chaos: beside the socket clients, a Telegram user (the fake Bot API in this process)
// and an MQTT publisher (a real Mosquitto) keep writing to the daemon's chat channels while it is killed. The
// fake injects 429s, 5xx and redeliveries of confirmed updates; the publisher re-sends old message ids. After
// the run, counted against the platform's own record (the fake's updates, its confirmed offset and the
// messages it accepted; the replies the broker carried to the publisher's subscription):
//   - none lost: every update the fake saw confirmed, and every message the broker acknowledged, is recorded
//     in sessions.db (and at the end every update is confirmed);
//   - no duplicate: no message answered twice, no reply to a message nobody sent;
//   - answered: a message without a reply is one whose reply the daemon counted unconfirmed (cut between the
//     send and its record: neither platform lets the daemon check what it sent) or failed (given up after the
//     core's bounded retries); none is left unanswered without a record saying so.

const (
	tgChannel = "telegram.default"
	mqChannel = "mqtt.home"
)

// chaosChannels is the platforms and what was sent through them. mu guards the maps.
type chaosChannels struct {
	h    *chaos
	tg   *tgfake.Server
	mq   *extServer
	peer *mqttPeer

	mu       sync.Mutex
	tgSent   map[int64]string // update id → text
	tgFaults int
	mqSent   map[string]string // id → text, acknowledged by the broker (PUBACK)
	mqResent int
	mqFailed int // publishes the broker did not acknowledge
}

// startChannels starts the platforms; the returned TOML binds the daemon to them.
func (h *chaos) startChannels() (toml string, err error) {
	cc := &chaosChannels{h: h, tgSent: map[int64]string{}, mqSent: map[string]string{}}
	cc.tg = tgfake.Start(tgToken)
	if cc.mq, err = startMosquitto(); err != nil {
		cc.tg.Close()
		return "", err
	}
	h.ch = cc
	return telegramTOML(cc.tg.URL()) + mqttTOML(cc.mq.port), nil
}

func (cc *chaosChannels) close() {
	if cc.peer != nil {
		cc.peer.close()
	}
	cc.mq.stop()
	cc.tg.Close()
}

// spawnTraffic starts the two writers once the daemon's MQTT session exists at the broker (before it, the
// broker keeps nothing for the daemon: a message published then is not one the daemon could ever see).
func (cc *chaosChannels) spawnTraffic(seed uint64) error {
	if err := waitEvery(20*time.Millisecond, "the MQTT chat channel up", 30*time.Second, func() bool {
		return channelHealthy(cc.h.in.sock, mqChannel)
	}); err != nil {
		return err
	}
	var err error
	if cc.peer, err = dialMQTT(cc.mq.port, "chaos-alice"); err != nil {
		return err
	}
	if err := cc.peer.subscribeReplies("zc/alice/out", func(p []byte) string {
		var m struct {
			InReplyTo string `json:"in_reply_to"`
		}
		_ = json.Unmarshal(p, &m)
		return m.InReplyTo
	}); err != nil {
		return err
	}
	cc.h.wg.Add(2)
	go cc.telegramWriter(rand.New(rand.NewPCG(seed, 3)))
	go cc.mqttWriter(rand.New(rand.NewPCG(seed, 4)))
	return nil
}

func (cc *chaosChannels) pause(rng *rand.Rand) bool {
	select {
	case <-cc.h.stopped:
		return false
	case <-time.After(time.Duration(80+rng.IntN(220)) * time.Millisecond):
		return true
	}
}

func (cc *chaosChannels) telegramWriter(rng *rand.Rand) {
	defer cc.h.wg.Done()
	for i := 1; cc.pause(rng); i++ {
		text := fmt.Sprintf("chaos tg %d", i)
		id := cc.tg.SendText(tgOwner, "owner", text)
		cc.mu.Lock()
		cc.tgSent[id] = text
		cc.mu.Unlock()
		fault := true
		switch rng.IntN(12) {
		case 0:
			cc.tg.Inject("sendMessage", tgfake.Fault{Status: 429, RetryAfter: 1})
		case 1:
			cc.tg.Inject("sendMessage", tgfake.Fault{Status: 502})
		case 2:
			cc.tg.Inject("getUpdates", tgfake.Fault{Status: 500})
		case 3:
			cc.tg.Redeliver()
		default:
			fault = false
		}
		if fault {
			cc.mu.Lock()
			cc.tgFaults++
			cc.mu.Unlock()
		}
	}
}

func (cc *chaosChannels) mqttWriter(rng *rand.Rand) {
	defer cc.h.wg.Done()
	var ids []string
	for i := 1; cc.pause(rng); i++ {
		id := fmt.Sprintf("cm%d", i)
		text := "chaos mqtt " + id
		resend := len(ids) > 2 && rng.IntN(6) == 0
		if resend { // the publisher retries an old message: same id, same text
			id = ids[rng.IntN(len(ids))]
			cc.mu.Lock()
			text = cc.mqSent[id]
			cc.mu.Unlock()
		}
		body, _ := json.Marshal(map[string]string{"id": id, "text": text})
		err := cc.peer.publish("zc/alice/in", body)
		cc.mu.Lock()
		switch {
		case err != nil:
			cc.mqFailed++
		case resend:
			cc.mqResent++
		default:
			cc.mqSent[id] = text
			ids = append(ids, id)
		}
		cc.mu.Unlock()
	}
}

// channelDB is what sessions.db holds for one channel: message events by content, and counts by state.
type channelDB struct {
	events map[string]int // content → message events recorded with it
	counts map[string]int // "event:<state>" and "out:<state>" → rows
}

func readChannelDB(path, channelID string) (channelDB, error) {
	out := channelDB{events: map[string]int{}, counts: map[string]int{}}
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro&_pragma=busy_timeout(5000)")
	if err != nil {
		return out, err
	}
	defer db.Close()
	rows, err := db.Query(`SELECT content, state FROM channel_events WHERE channel_id = ? AND kind = 'message'`, channelID)
	if err != nil {
		return out, err
	}
	for rows.Next() {
		var content, state string
		if err := rows.Scan(&content, &state); err != nil {
			rows.Close()
			return out, err
		}
		out.events[content]++
		out.counts["event:"+state]++
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return out, err
	}
	orows, err := db.Query(`SELECT state, COUNT(*) FROM channel_outbox WHERE channel_id = ? GROUP BY state`, channelID)
	if err != nil {
		return out, err
	}
	defer orows.Close()
	for orows.Next() {
		var state string
		var n int
		if err := orows.Scan(&state, &n); err != nil {
			return out, err
		}
		out.counts["out:"+state] += n
	}
	return out, orows.Err()
}

// settled: no event waiting for its turn and no reply waiting to go.
func (d channelDB) settled() bool {
	return d.counts["event:received"]+d.counts["event:running"]+d.counts["out:pending"]+d.counts["out:sending"] == 0
}

// checkChannels waits (bounded) for the live daemon to finish the channels' work, then checks the invariants
// above, one PASS line per channel.
func (cc *chaosChannels) checkChannels() {
	dbPath := filepath.Join(cc.h.in.root, "data", "sessions", "sessions.db")
	cc.mu.Lock()
	defer cc.mu.Unlock()
	maxUpdate := int64(0)
	for id := range cc.tgSent {
		maxUpdate = max(maxUpdate, id)
	}
	// The platform recovers before the settle: the faults still queued (one in twelve messages queued one)
	// would each cost a retry's backoff, serialized behind the channel's head row, and the wait below measures
	// the daemon catching up, not the fake's leftovers.
	cc.tg.ClearFaults()
	var tg, mq channelDB
	var rerr error
	werr := waitEvery(100*time.Millisecond, "the channels' work done (every update confirmed, nothing pending)", 60*time.Second, func() bool {
		if tg, rerr = readChannelDB(dbPath, tgChannel); rerr != nil {
			return false
		}
		if mq, rerr = readChannelDB(dbPath, mqChannel); rerr != nil {
			return false
		}
		return cc.tg.Confirmed() >= maxUpdate && tg.settled() && mq.settled() && len(cc.peer.all()) >= len(cc.mqSent)-mq.counts["out:unconfirmed"]-mq.counts["out:failed"]
	})
	if rerr != nil {
		cc.h.violate("sessions.db unreadable for the channel check: %v", rerr)
		return
	}
	if werr != nil {
		cc.h.violate("%v: telegram confirmed %d of %d updates, counts %v; mqtt counts %v", werr, cc.tg.Confirmed(), maxUpdate, tg.counts, mq.counts)
	}

	// Telegram: against the fake's updates, its confirmed offset and the messages it accepted.
	tgSent := map[string]sentMsg{}
	for id, text := range cc.tgSent {
		tgSent[fmt.Sprint(id)] = sentMsg{text: text, mustRecord: id <= cc.tg.Confirmed()}
	}
	tgReplies := map[string]int{}
	for _, m := range cc.tg.Sent() {
		tgReplies[fmt.Sprint(m.ReplyTo)]++
	}
	bad, missing := checkChannelTraffic("telegram update", tgSent, tgReplies, tg)
	for _, b := range bad {
		cc.h.violate("%s", b)
	}
	if len(bad) == 0 {
		cc.h.pass("every Telegram update recorded once, none lost, none answered twice (%d updates, %d faults injected, %d replies, %d unanswered and counted; counts %v)",
			len(cc.tgSent), cc.tgFaults, len(cc.tg.Sent()), missing, tg.counts)
	}

	// MQTT: against what the broker acknowledged and the replies it carried.
	mqSent := map[string]sentMsg{}
	for id, text := range cc.mqSent {
		mqSent[id] = sentMsg{text: text, mustRecord: true}
	}
	got := cc.peer.all()
	bad, missing = checkChannelTraffic("mqtt message", mqSent, got, mq)
	for _, b := range bad {
		cc.h.violate("%s", b)
	}
	if len(bad) == 0 {
		cc.h.pass("every MQTT message recorded exactly once, none lost, answered at most once (%d messages, %d re-sent, %d answered, %d unanswered and counted; counts %v)",
			len(cc.mqSent), cc.mqResent, len(got), missing, mq.counts)
	}
}

// sentMsg is one message a platform user sent: its text, and whether the platform's record says the daemon
// took it (an update the fake saw confirmed, a message the broker acknowledged), so it must be recorded.
type sentMsg struct {
	text       string
	mustRecord bool
}

// checkChannelTraffic compares what was sent (by platform id), the replies the platform carried (by the id
// they answer) and sessions.db's record. It returns one line per problem, and how many messages have no reply.
func checkChannelTraffic(kind string, sent map[string]sentMsg, replies map[string]int, rec channelDB) (bad []string, missing int) {
	for _, id := range slices.Sorted(maps.Keys(sent)) {
		m := sent[id]
		switch n := rec.events[m.text]; {
		case n == 0 && m.mustRecord:
			bad = append(bad, fmt.Sprintf("%s %s (%q) taken by the daemon but never recorded: lost", kind, id, m.text))
		case n > 1:
			bad = append(bad, fmt.Sprintf("%s %s (%q) recorded %d times", kind, id, m.text, n))
		}
		switch replies[id] {
		case 0:
			missing++
		case 1:
		default:
			bad = append(bad, fmt.Sprintf("%s %s (%q) answered %d times", kind, id, m.text, replies[id]))
		}
	}
	for _, id := range slices.Sorted(maps.Keys(replies)) {
		if _, ok := sent[id]; !ok {
			bad = append(bad, fmt.Sprintf("%s: %d replies to %s, which nobody sent", kind, replies[id], id))
		}
	}
	if allowed := rec.counts["out:unconfirmed"] + rec.counts["out:failed"]; missing > allowed {
		bad = append(bad, fmt.Sprintf("%s: %d of %d unanswered, only %d counted unconfirmed or failed (counts %v)", kind, missing, len(sent), allowed, rec.counts))
	}
	if len(sent) == 0 || len(replies) == 0 {
		bad = append(bad, fmt.Sprintf("%s: %d sent, %d replies: the channel carried no traffic", kind, len(sent), len(replies)))
	}
	return bad, missing
}

// summary line for the run's log.
func (cc *chaosChannels) String() string {
	cc.mu.Lock()
	defer cc.mu.Unlock()
	return strings.TrimSpace(fmt.Sprintf("telegram %d updates, mqtt %d messages (%d re-sent, %d unacknowledged by the broker)",
		len(cc.tgSent), len(cc.mqSent), cc.mqResent, cc.mqFailed))
}

// Package chantest is the scaffolding the chat channel adapters' tests share: a Turner that counts turns, a
// Deliverer that records (or refuses) what an adapter hands it, a Core run against a loopback platform, and
// a patient WaitFor. Tests only: nothing outside _test files and the e2e suite imports it.
package chantest

import (
	"context"
	"errors"
	"maps"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/zeroclaw-go/zeroclaw/internal/channel"
	"github.com/zeroclaw-go/zeroclaw/internal/config"
	"github.com/zeroclaw-go/zeroclaw/internal/store"
)

// Turner is a channel.Turner that counts the turns it ran by prompt. Fn answers a turn (nil: "echo: <prompt>").
type Turner struct {
	Fn    func(ctx context.Context, r channel.TurnRequest) (string, error)
	mu    sync.Mutex
	turns map[string]int
}

// Turn implements channel.Turner.
func (t *Turner) Turn(ctx context.Context, r channel.TurnRequest) (string, error) {
	t.mu.Lock()
	if t.turns == nil {
		t.turns = map[string]int{}
	}
	t.turns[r.Prompt]++
	t.mu.Unlock()
	if t.Fn != nil {
		return t.Fn(ctx, r)
	}
	return "echo: " + r.Prompt, nil
}

// Count is how many turns ran with prompt p.
func (t *Turner) Count(p string) int { t.mu.Lock(); defer t.mu.Unlock(); return t.turns[p] }

// Turns is a copy of every prompt's turn count.
func (t *Turner) Turns() map[string]int { t.mu.Lock(); defer t.mu.Unlock(); return maps.Clone(t.turns) }

// ErrDiskFull is what a failing Deliverer answers.
var ErrDiskFull = errors.New("disk full")

// Deliverer is a channel.Deliverer that records every event it is handed; while Fail is set it answers
// ErrDiskFull (the event was not recorded: the adapter must not acknowledge it).
type Deliverer struct {
	Fail atomic.Bool
	mu   sync.Mutex
	got  []channel.Inbound
}

// Failing is a Deliverer that starts failing.
func Failing() *Deliverer {
	d := &Deliverer{}
	d.Fail.Store(true)
	return d
}

// Deliver implements channel.Deliverer.
func (d *Deliverer) Deliver(_ context.Context, ev channel.Inbound) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.got = append(d.got, ev)
	if d.Fail.Load() {
		return ErrDiskFull
	}
	return nil
}

// Progress implements channel.Deliverer.
func (d *Deliverer) Progress() {}

// IDs is the event id of every delivery so far, in order (refused ones included).
func (d *Deliverer) IDs() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	out := make([]string, len(d.got))
	for i, ev := range d.got {
		out[i] = ev.EventID
	}
	return out
}

// Events is every delivery so far, in order (refused ones included).
func (d *Deliverer) Events() []channel.Inbound {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]channel.Inbound(nil), d.got...)
}

// WaitFor polls cond every 5 ms for up to 15 s (a loaded machine is slow) and fails the test naming what did
// not happen, with detail's words after it.
func WaitFor(t testing.TB, what string, cond func() bool, detail ...func() string) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			more := ""
			for _, d := range detail {
				more += ": " + d()
			}
			t.Fatalf("timed out waiting for %s%s", what, more)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// Config is the config every adapter test starts from: agent "main" owns channel id, peer group "me" on id's
// type lets peer talk to it, replies time out after 60 s, 4 turns run at once, and a failed channel restarts
// after 1 s. The caller adds the channel's own [channels.<type>.<alias>] entry.
func Config(id channel.ID, peer string) *config.Config {
	return &config.Config{
		Agents:      map[string]config.AgentConfig{"main": {Channels: []string{id.String()}}},
		PeerGroups:  map[string]config.PeerGroupConfig{"me": {Channel: id.Type, Agents: []string{"main"}, ExternalPeers: []string{peer}}},
		Channels:    config.ChannelsConfig{MessageTimeoutSecs: 60, MaxConcurrentPerChannel: 4},
		Reliability: config.ReliabilityConfig{ChannelInitialBackoffSecs: 1, ChannelMaxBackoffSecs: 1},
	}
}

// Run starts a Core running cfg with typ registered, on <dir>/sessions.db, adapters' state under
// <dir>/channels. stop (also run at cleanup; once) stops it and closes the store.
func Run(t testing.TB, typ channel.Type, cfg *config.Config, tr channel.Turner, dir string) (core *channel.Core, stop func()) {
	t.Helper()
	st, err := store.OpenChat(context.Background(), filepath.Join(dir, "sessions.db"))
	if err != nil {
		t.Fatal(err)
	}
	reg := &channel.Registry{}
	reg.Register(typ)
	core = channel.New(channel.Options{Store: st, Turner: tr, Registry: reg, Deps: channel.Deps{DataDir: filepath.Join(dir, "channels")}})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); core.Run(ctx, cfg) }()
	var once sync.Once
	stop = func() { once.Do(func() { cancel(); <-done; _ = st.Close() }) }
	t.Cleanup(stop)
	return core, stop
}

package channel

import (
	"context"
	"errors"
	"math/rand/v2"
	"strconv"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/zeroclaw-go/zeroclaw/internal/store"
)

// Bounds on what a platform (or a stranger on it) can make the core hold.
const (
	maxEventText   = 32 << 10 // bytes of one inbound text kept; the rest is cut
	maxFieldBytes  = 512      // bytes of an id, a sender, a target
	queueDepth     = 256      // events waiting for a worker in memory; more wait in sessions.db
	typingInterval = 4 * time.Second
)

// Notices the core answers with itself.
const (
	noticeInterrupted = "⚠️ The daemon restarted while this message was being answered; it was not finished. Please send it again."
	noticeEmpty       = "(The agent gave no answer.)"
	noticeTimeout     = "⚠️ The answer took too long and was stopped (channels.message_timeout_secs)."
	noticeFailed      = "⚠️ The agent could not answer this message."
)

// runner is one channel instance: its adapter's supervisor, its turn workers and its outbox sender.
type runner struct {
	c    *Core
	inst Instance
	g    Globals
	ad   Adapter

	events chan store.ChanEvent // received events for the workers
	kick   chan struct{}        // wakes the sender (capacity 1)
	// drained is closed when the dispatcher has returned (every turn it started has ended).
	drained chan struct{}

	pollCancel context.CancelFunc // stops the adapter (no new events)
	workCancel context.CancelFunc // stops the turns and the sender
	pollWG     sync.WaitGroup     // the supervisor
	workWG     sync.WaitGroup     // dispatcher, workers, sender

	mu           sync.Mutex // guards the fields below
	state        string
	lastErr      string
	lastEvent    time.Time
	lastProgress time.Time
	restarts     int
	startedAt    time.Time
	closed       bool                        // events is closed (a draining stop)
	overflow     bool                        // an event did not fit in events: rescan sessions.db
	approvals    map[string]*pendingApproval // by token
	ignored      int                         // messages from senders not allowed, since start
	strangers    map[string]struct{}         // senders whose ignored message was logged
}

func newRunner(c *Core, inst Instance, g Globals, ad Adapter) *runner {
	return &runner{c: c, inst: inst, g: g, ad: ad, events: make(chan store.ChanEvent, queueDepth),
		kick: make(chan struct{}, 1), drained: make(chan struct{}), startedAt: c.o.Clock.Now(), state: StateStarting, approvals: map[string]*pendingApproval{}, strangers: map[string]struct{}{}}
}

func (r *runner) id() string { return r.inst.ID.String() }

func (r *runner) start(ctx context.Context) {
	pollCtx, pollCancel := context.WithCancel(ctx)
	workCtx, workCancel := context.WithCancel(ctx)
	r.pollCancel, r.workCancel = pollCancel, workCancel
	r.recover(workCtx)
	r.workWG.Add(2)
	go r.dispatch(workCtx)
	go r.sender(workCtx)
	r.pollWG.Add(1)
	go r.supervise(pollCtx)
}

// stop ends the adapter first (nothing new is acknowledged); with drain the running turns finish and the
// outbox is given a last chance, else they are cancelled.
func (r *runner) stop(drain bool) {
	if r.pollCancel == nil {
		return
	}
	r.pollCancel()
	r.pollWG.Wait()
	if drain {
		r.mu.Lock()
		r.closed = true
		close(r.events) // the dispatcher finishes the queued ones and returns
		r.mu.Unlock()
		<-r.drained
	}
	r.workCancel()
	r.workWG.Wait()
}

// recover resolves what a previous process left: an outbox row it was sending is checked with the platform
// where the adapter can (SentChecker), else marked unconfirmed and not sent again; an event whose turn was
// running is answered with a notice (a second turn could repeat its tools); received events are queued.
func (r *runner) recover(ctx context.Context) {
	st, now := r.c.o.Store, r.c.o.Clock.Now()
	sending, err := st.ChannelOutbox(ctx, r.id(), store.ChanOutSending, 1000)
	if err != nil {
		r.c.o.Logger.Warn("channel recover outbox", "channel", r.id(), "error", err)
	}
	for _, o := range sending {
		if sc, ok := r.ad.(SentChecker); ok {
			sent, s, err := sc.WasSent(ctx, outboundOf(o))
			switch {
			case err == nil && sent:
				_, _ = st.SetChannelOut(ctx, o.ID, store.ChanOutSending, store.ChanOutSent, s.MessageID, "", false, now)
				continue
			case err == nil:
				_, _ = st.SetChannelOut(ctx, o.ID, store.ChanOutSending, store.ChanOutPending, "", "", false, now)
				continue
			}
		}
		_, _ = st.SetChannelOut(ctx, o.ID, store.ChanOutSending, store.ChanOutUnconfirmed, "",
			"the process ended while this reply was being sent; the platform cannot say whether it arrived", false, now)
		r.c.o.Logger.Warn("channel reply unconfirmed", "channel", r.id(), "outbox", o.ID)
	}
	pend, err := st.PendingChannelEvents(ctx, r.id())
	if err != nil {
		r.c.o.Logger.Warn("channel recover events", "channel", r.id(), "error", err)
	}
	for _, ev := range pend {
		if ev.State == store.ChanEventRunning {
			_ = r.answer(ctx, ev, noticeInterrupted)
			continue
		}
		r.enqueue(ev)
	}
}

func outboundOf(o store.ChanOut) Outbound {
	return Outbound{ReplyTarget: o.ReplyTarget, Thread: o.Thread, ReplyTo: o.ReplyTo, Text: o.Content, Key: keyOf(o)}
}

func keyOf(o store.ChanOut) string { return o.ChannelID + "/" + strconv.FormatInt(o.ID, 10) }

// supervise runs the adapter, restarting it after a failure with a backoff (initial, doubled up to the max,
// with jitter; back to initial after a run that made progress) so a dead socket never spins. A permanent
// failure parks it until the config changes.
func (r *runner) supervise(ctx context.Context) {
	defer r.pollWG.Done()
	backoff := r.g.InitialBackoff
	for {
		r.setState(StateRunning)
		started := r.c.o.Clock.Now()
		err := r.ad.Run(ctx, deliverer{r})
		if ctx.Err() != nil {
			return
		}
		if err == nil {
			err = errors.New("listener exited unexpectedly")
		}
		if errors.Is(err, ErrPermanent) {
			r.setError(err, StateParked)
			r.c.o.Logger.Error("channel parked", "channel", r.id(), "error", err)
			<-ctx.Done()
			return
		}
		r.mu.Lock()
		progressed := r.lastProgress.After(started)
		r.restarts++
		r.mu.Unlock()
		if progressed {
			backoff = r.g.InitialBackoff
		}
		r.setError(err, StateBackoff)
		wait := r.jitter(backoff)
		r.c.o.Logger.Warn("channel listener failed; restarting", "channel", r.id(), "error", err, "backoff", wait)
		if !r.sleep(ctx, wait) {
			return
		}
		backoff = min(backoff*2, r.g.MaxBackoff)
	}
}

// jitter spreads d over [d/2, d].
func (r *runner) jitter(d time.Duration) time.Duration {
	f := rand.Float64
	if r.c.o.Rand != nil {
		f = r.c.o.Rand
	}
	return d/2 + time.Duration(f()*float64(d/2))
}

func (r *runner) sleep(ctx context.Context, d time.Duration) bool {
	t := r.c.o.Clock.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

func (r *runner) setState(s string) {
	r.mu.Lock()
	if r.state != StateParked || s == StateParked {
		r.state = s
	}
	r.mu.Unlock()
}

func (r *runner) setError(err error, state string) {
	r.mu.Lock()
	r.lastErr, r.state = err.Error(), state
	r.mu.Unlock()
}

func (r *runner) status() Status {
	r.mu.Lock()
	defer r.mu.Unlock()
	s := Status{ID: r.id(), Type: r.inst.ID.Type, Alias: r.inst.ID.Alias, Agent: r.inst.Agent, State: r.state,
		LastError: r.lastErr, Restarts: r.restarts, Ignored: r.ignored}
	if r.inst.Agent == "" {
		s.Warnings = append(s.Warnings, "no enabled agent answers on this channel (agents.<alias>.channels)")
	}
	if r.inst.Peers.Nobody() {
		s.Warnings = append(s.Warnings, "no peer group lets anyone talk to the agent here (peer_groups.<name>.external_peers is empty or missing)")
	}
	if !r.lastEvent.IsZero() {
		t := r.lastEvent
		s.LastEventAt = &t
	}
	if !r.lastProgress.IsZero() {
		t := r.lastProgress
		s.LastProgressAt = &t
	}
	since := r.lastProgress
	if since.IsZero() {
		since = r.startedAt
	}
	if s.State == StateRunning && r.c.o.Clock.Now().Sub(since) > r.c.o.StaleAfter {
		s.State = StateStale
	}
	return s
}

// deliverer is the runner as its adapter sees it.
type deliverer struct{ r *runner }

func (d deliverer) Progress() {
	d.r.mu.Lock()
	d.r.lastProgress = d.r.c.o.Clock.Now()
	if d.r.state == StateBackoff || d.r.state == StateStarting {
		d.r.state = StateRunning
	}
	d.r.mu.Unlock()
}

func (d deliverer) Deliver(ctx context.Context, in Inbound) error { return d.r.deliver(ctx, in) }

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	s = s[:n]
	for len(s) > 0 && !utf8.ValidString(s) {
		s = s[:len(s)-1]
	}
	return s
}

// deliver records one inbound event, then routes it: a message from an allowed sender is queued for a turn, an
// approval answer goes to the prompt waiting for it, and a stranger's event of either kind is only counted as
// ignored and logged. A redelivered event (same platform id) is recognised and does nothing.
func (r *runner) deliver(ctx context.Context, in Inbound) error {
	if in.EventID == "" {
		return errors.New("channel: event without a platform id")
	}
	now := r.c.o.Clock.Now()
	ev := store.ChanEvent{ChannelID: r.id(), PlatformEventID: clip(in.EventID, maxFieldBytes), Kind: string(in.Kind),
		Sender: clip(in.Sender, maxFieldBytes), SenderName: clip(in.SenderName, maxFieldBytes),
		ReplyTarget: clip(in.ReplyTarget, maxFieldBytes), Thread: clip(in.Thread, maxFieldBytes),
		MessageID: clip(in.MessageID, maxFieldBytes), Content: clip(in.Text, maxEventText)}
	allowed := r.inst.Agent != "" && r.inst.Peers.Allowed(in.Sender, in.SenderName)
	if !allowed {
		// Not recorded (a stranger's flood must not grow sessions.db) nor answered, approvals included: only the
		// requester, an allowed sender, may answer a prompt, and an acknowledgement would message the stranger.
		r.ignore(ev.Sender)
		return nil
	}
	switch {
	case in.Kind == KindApproval:
		ev.State = store.ChanEventAnswered
		if in.Approval != nil {
			ev.Content = clip(in.Approval.Token+" "+in.Approval.Decision, maxFieldBytes)
		}
	default:
		ev.SessionKey = SessionKey(r.inst.ID, ev.ReplyTarget, ev.Thread, ev.Sender)
	}
	got, dup, err := r.c.o.Store.RecordChannelEvent(ctx, ev, now)
	if err != nil {
		return err
	}
	r.mu.Lock()
	r.lastEvent = now
	r.mu.Unlock()
	if dup {
		r.c.o.Logger.Debug("channel redelivery ignored", "channel", r.id(), "event", ev.PlatformEventID)
		return nil
	}
	switch {
	case in.Kind == KindApproval:
		r.answerApproval(ctx, in)
	default:
		r.enqueue(got)
	}
	return nil
}

// maxLoggedStrangers bounds the senders whose first ignored message is logged (the rest are only counted).
const maxLoggedStrangers = 1024

// ignore counts a message from a sender the allow-list does not let in, logging each sender's first one.
func (r *runner) ignore(sender string) {
	r.mu.Lock()
	r.ignored++
	_, seen := r.strangers[sender]
	if !seen && len(r.strangers) < maxLoggedStrangers {
		r.strangers[sender] = struct{}{}
	}
	r.mu.Unlock()
	if !seen {
		r.c.o.Logger.Warn("channel message from a sender not allowed (or no agent owns the channel); ignored",
			"channel", r.id(), "sender", sender, "agent", r.inst.Agent)
	}
}

func (r *runner) enqueue(ev store.ChanEvent) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return // a draining stop: the event stays received and the next runner takes it
	}
	select {
	case r.events <- ev:
	default:
		r.overflow = true
	}
}

// dispatch hands queued events to turn workers, at most MaxConcurrentPerChannel at once, and returns when
// events is closed (after the workers it started end) or ctx is done.
func (r *runner) dispatch(ctx context.Context) {
	defer r.workWG.Done()
	sem := make(chan struct{}, r.g.MaxConcurrentPerChannel)
	var turns sync.WaitGroup
	defer func() {
		turns.Wait()
		close(r.drained)
	}()
	for {
		var ev store.ChanEvent
		var ok bool
		select {
		case <-ctx.Done():
			return
		case ev, ok = <-r.events:
			if !ok {
				return
			}
		}
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
			return
		}
		turns.Add(1)
		go func() {
			defer turns.Done()
			defer func() { <-sem }()
			r.handle(ctx, ev)
			r.rescan(ctx)
		}()
	}
}

// rescan queues again the received events that did not fit in memory.
func (r *runner) rescan(ctx context.Context) {
	r.mu.Lock()
	over := r.overflow && len(r.events) == 0
	if over {
		r.overflow = false
	}
	r.mu.Unlock()
	if !over {
		return
	}
	pend, err := r.c.o.Store.PendingChannelEvents(ctx, r.id())
	if err != nil {
		return
	}
	for _, ev := range pend {
		if ev.State == store.ChanEventReceived {
			r.enqueue(ev)
		}
	}
}

// handle runs the turn of one event and queues its answer.
func (r *runner) handle(ctx context.Context, ev store.ChanEvent) {
	st := r.c.o.Store
	if err := st.SetChannelEventState(ctx, ev.ID, store.ChanEventRunning, ev.SessionKey, ""); err != nil {
		r.c.o.Logger.Warn("channel event state", "channel", r.id(), "error", err)
		return
	}
	_ = st.StampChannelSession(ctx, ev.SessionKey, r.id(), firstNonEmpty(ev.Thread, ev.ReplyTarget), ev.Sender, r.c.o.Clock.Now())
	turnCtx, cancel := context.WithTimeout(ctx, r.g.MessageTimeout)
	defer cancel()
	stopTyping := r.typing(turnCtx, ev)
	answer, err := r.c.o.Turner.Turn(turnCtx, TurnRequest{Channel: r.inst.ID, Agent: r.inst.Agent,
		SessionKey: ev.SessionKey, Sender: ev.Sender, Prompt: ev.Content, ExcludedTools: r.inst.ExcludedTools,
		Approve: r.approver(ev)})
	stopTyping()
	if ctx.Err() != nil {
		return // shutting down: the event stays running and is answered with a notice at the next start
	}
	switch {
	case err != nil && errors.Is(turnCtx.Err(), context.DeadlineExceeded):
		answer = noticeTimeout
	case err != nil:
		r.c.o.Logger.Warn("channel turn failed", "channel", r.id(), "session", ev.SessionKey, "error", err)
		if answer == "" {
			answer = noticeFailed
		}
	case answer == "":
		answer = noticeEmpty
	}
	if err := r.answer(ctx, ev, answer); err != nil {
		r.c.o.Logger.Warn("channel answer not recorded", "channel", r.id(), "error", err)
	}
}

func firstNonEmpty(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// typing shows the typing indicator every typingInterval while the turn runs (adapters that have one).
func (r *runner) typing(ctx context.Context, ev store.ChanEvent) (stop func()) {
	ty, ok := r.ad.(Typer)
	if !ok {
		return func() {}
	}
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			_ = ty.Typing(ctx, ev.ReplyTarget, ev.Thread)
			if !r.sleep(ctx, typingInterval) {
				return
			}
		}
	}()
	return func() { cancel(); <-done }
}

// answer queues text (split per the platform's limit) as the reply to ev and marks ev answered, in one
// transaction, then wakes the sender.
func (r *runner) answer(ctx context.Context, ev store.ChanEvent, text string) error {
	outs := r.chunks(ev.ReplyTarget, ev.Thread, ev.MessageID, text)
	if err := r.c.o.Store.AnswerChannelEvent(ctx, ev.ID, outs, r.c.o.Clock.Now()); err != nil {
		return err
	}
	r.wake()
	return nil
}

// queue queues a message answering no event (a notice).
func (r *runner) queue(ctx context.Context, eventID int64, target, thread, replyTo, text string) error {
	if err := r.c.o.Store.AnswerChannelEvent(ctx, eventID, r.chunks(target, thread, replyTo, text), r.c.o.Clock.Now()); err != nil {
		return err
	}
	r.wake()
	return nil
}

func (r *runner) chunks(target, thread, replyTo, text string) []store.ChanOut {
	parts := Split(text, r.ad.Limits().MaxRunes)
	outs := make([]store.ChanOut, len(parts))
	for i, p := range parts {
		outs[i] = store.ChanOut{ChannelID: r.id(), Seq: i, ReplyTarget: target, Thread: thread, ReplyTo: replyTo, Content: p}
	}
	return outs
}

func (r *runner) wake() {
	select {
	case r.kick <- struct{}{}:
	default:
	}
}

package channel

import (
	"context"
	"errors"
	"time"

	"github.com/zeroclaw-go/zeroclaw/internal/store"
)

// Retry bounds of one outbound message.
const (
	sendBaseBackoff = time.Second
	sendMaxBackoff  = 60 * time.Second
	maxRetryAfter   = 5 * time.Minute // a platform's retry_after is honoured up to this
	outboxBatch     = 32
)

// sender sends the channel's outbox in order: each row is marked sending before the platform sees it and sent
// (with the platform's message id) after, so a crash in between is found by recover. A failed send is retried
// with backoff and jitter, at most Options.MaxAttempts times; a permanent failure fails the row at once. The
// row at the head blocks the ones after it, so a chat's messages keep their order.
func (r *runner) sender(ctx context.Context) {
	defer r.workWG.Done()
	for {
		wait, ok := r.sendSome(ctx)
		if !ok {
			return
		}
		if wait > 0 {
			if !r.sleep(ctx, wait) {
				return
			}
			continue
		}
		select {
		case <-ctx.Done():
			return
		case <-r.kick:
		}
	}
}

// sendSome sends pending rows until none is left (wait 0) or one must be retried later (wait > 0). ok is false
// when ctx is done.
func (r *runner) sendSome(ctx context.Context) (wait time.Duration, ok bool) {
	st := r.c.o.Store
	for {
		rows, err := st.ChannelOutbox(ctx, r.id(), store.ChanOutPending, outboxBatch)
		if ctx.Err() != nil {
			return 0, false
		}
		if err != nil {
			r.c.o.Logger.Warn("channel outbox read", "channel", r.id(), "error", err)
			return sendBaseBackoff, true
		}
		if len(rows) == 0 {
			return 0, true
		}
		for _, o := range rows {
			moved, err := st.SetChannelOut(ctx, o.ID, store.ChanOutPending, store.ChanOutSending, "", "", true, r.c.o.Clock.Now())
			if err != nil || !moved {
				return sendBaseBackoff, ctx.Err() == nil
			}
			sent, err := r.ad.Send(ctx, outboundOf(o))
			now := r.c.o.Clock.Now()
			if err == nil { // recorded even when shutdown began meanwhile: it was sent
				if _, err := st.SetChannelOut(context.WithoutCancel(ctx), o.ID, store.ChanOutSending, store.ChanOutSent, sent.MessageID, "", false, now); err != nil {
					r.c.o.Logger.Warn("channel sent, not recorded", "channel", r.id(), "error", err)
				}
				continue
			}
			if ctx.Err() != nil { // shutting down mid-send: recover decides at the next start
				return 0, false
			}
			attempts := o.Attempts + 1
			var ra *RetryAfter
			switch {
			case errors.Is(err, ErrPermanent) || attempts >= r.c.o.MaxAttempts:
				_, _ = st.SetChannelOut(ctx, o.ID, store.ChanOutSending, store.ChanOutFailed, "", clip(err.Error(), 1024), false, now)
				r.setError(err, r.currentState())
				r.c.o.Logger.Warn("channel reply failed", "channel", r.id(), "attempts", attempts, "error", err)
				continue
			case errors.As(err, &ra):
				wait = min(max(ra.After, sendBaseBackoff), maxRetryAfter)
			default:
				wait = r.jitter(min(sendBaseBackoff<<min(attempts-1, 10), sendMaxBackoff))
			}
			_, _ = st.SetChannelOut(ctx, o.ID, store.ChanOutSending, store.ChanOutPending, "", clip(err.Error(), 1024), false, now)
			r.c.o.Logger.Info("channel reply retried", "channel", r.id(), "attempt", attempts, "wait", wait, "error", err)
			return wait, true
		}
	}
}

func (r *runner) currentState() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.state
}

package pgdb

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5/pgconn"
)

// maxQueued bounds the notifications a Listener holds between two Waits; past it the oldest are dropped and
// the next Wait reports the gap.
const maxQueued = 1024

// Notification is one NOTIFY received.
type Notification struct {
	Channel, Payload string
}

// ErrGap is Wait's error when notifications were dropped (the queue overflowed): the caller must catch up from
// the tables. The Listener stays usable.
var ErrGap = errors.New("pgdb: notifications were dropped")

// Listener is a connection of its own, outside the pool's count, that LISTENs on channels. It is not safe for
// concurrent use: one goroutine calls Wait.
type Listener struct {
	c     *pgconn.PgConn
	queue []Notification
	gap   bool
}

// Listen opens a connection and LISTENs on each channel (plain identifiers).
func (p *Pool) Listen(ctx context.Context, channels ...string) (*Listener, error) {
	for _, ch := range channels {
		if !ValidIdent(ch) {
			return nil, fmt.Errorf("%w: channel %q", ErrInvalid, ch)
		}
	}
	l := &Listener{}
	cfg := p.cfg.Copy()
	cfg.OnNotification = func(_ *pgconn.PgConn, n *pgconn.Notification) {
		if len(l.queue) >= maxQueued {
			l.queue = l.queue[1:]
			l.gap = true
		}
		l.queue = append(l.queue, Notification{Channel: n.Channel, Payload: n.Payload})
	}
	c, err := pgconn.ConnectConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("pgdb: listen: %w", err)
	}
	l.c = c
	for _, ch := range channels {
		if _, err := c.Exec(ctx, "LISTEN "+Quote(ch)).ReadAll(); err != nil {
			l.Close()
			return nil, fmt.Errorf("pgdb: listen %s: %w", ch, err)
		}
	}
	return l, nil
}

// Wait returns the next notification, waiting for one until ctx ends. ErrGap says some were dropped before it
// (call Wait again for the rest); any other error means the connection is gone: Close it and Listen again.
func (l *Listener) Wait(ctx context.Context) (Notification, error) {
	for len(l.queue) == 0 {
		if err := l.c.WaitForNotification(ctx); err != nil {
			return Notification{}, err
		}
	}
	if l.gap {
		l.gap = false
		return Notification{}, ErrGap
	}
	n := l.queue[0]
	l.queue = l.queue[1:]
	return n, nil
}

// Close closes the connection.
func (l *Listener) Close() {
	if l.c != nil {
		ctx, cancel := context.WithTimeout(context.Background(), connectTimeout)
		defer cancel()
		_ = l.c.Close(ctx)
	}
}

package pgchat

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"sync"
	"time"

	"github.com/zeroclaw-go/zeroclaw/internal/pgdb"
)

// notifyChannel is the channel every append is announced on, committed with the message (NOTIFY in the
// transaction is delivered at commit, and not at all on rollback).
const notifyChannel = "zc_chat"

// maxPayload bounds a notification (PostgreSQL refuses 8000 bytes or more): one whose key, JSON-escaped, would
// pass it names the session by its digest instead (Event.KeyDigest).
const maxPayload = 4096

type payload struct {
	Origin string `json:"o"`
	Key    string `json:"k,omitempty"`
	Digest string `json:"h,omitempty"`
	Index  int    `json:"i"`
}

// KeyDigest is how an Event names a session whose key is longer than a notification carries.
func KeyDigest(key string) string {
	d := sha256.Sum256([]byte(key))
	return hex.EncodeToString(d[:])
}

func notifyTx(ctx context.Context, tx *pgdb.Tx, origin, key string, idx int) error {
	b, err := json.Marshal(payload{Origin: origin, Key: key, Index: idx})
	if err == nil && len(b) > maxPayload {
		b, err = json.Marshal(payload{Origin: origin, Digest: KeyDigest(key), Index: idx})
	}
	if err != nil {
		return err
	}
	_, err = tx.Exec(ctx, "SELECT pg_notify($1, $2)", notifyChannel, string(b))
	return err
}

// Event is one message appended by some daemon sharing the database.
type Event struct {
	Origin    string // the appending daemon's id (Store.Holder)
	Key       string // the session; "" when only KeyDigest names it
	KeyDigest string // KeyDigest(key) of a key too long to carry
	Index     int    // the message's index
	// Gap marks an event that stands for a gap instead: events may have been missed (the subscriber fell a
	// whole buffer behind, or the connection was re-opened); Key and Index are empty and the subscriber
	// should re-read what it shows.
	Gap bool
}

// eventBuffer is how many events wait for a slow subscriber; past it they are replaced by a Gap.
const eventBuffer = 256

// Listener delivers the Events of every daemon sharing the database, this one's included (compare Origin),
// over a connection of its own that it re-opens after a failure (with a Gap event).
type Listener struct {
	events chan Event
	stop   context.CancelFunc
	done   chan struct{}
	once   sync.Once
}

// Listen starts listening; the first connection is made before it returns.
func Listen(ctx context.Context, db *pgdb.Pool) (*Listener, error) {
	conn, err := db.Listen(ctx, notifyChannel)
	if err != nil {
		return nil, err
	}
	bg, stop := context.WithCancel(context.Background())
	l := &Listener{events: make(chan Event, eventBuffer), stop: stop, done: make(chan struct{})}
	go l.run(bg, db, conn)
	return l, nil
}

// Events is the channel of events; it is closed after Close.
func (l *Listener) Events() <-chan Event { return l.events }

// Close stops listening and closes Events.
func (l *Listener) Close() {
	l.once.Do(func() {
		l.stop()
		<-l.done
	})
}

func (l *Listener) run(ctx context.Context, db *pgdb.Pool, conn *pgdb.Listener) {
	defer close(l.done)
	defer close(l.events)
	// push delivers ev; when the subscriber fell a whole buffer behind, what it has not read yet is replaced by
	// one Gap (it re-reads the tables anyway) followed by ev. This goroutine is the only sender, so after the
	// drain there is room for both.
	push := func(ev Event) {
		select {
		case l.events <- ev:
			return
		default:
		}
		for drained := false; !drained; {
			select {
			case <-l.events:
			default:
				drained = true
			}
		}
		l.events <- Event{Gap: true}
		if !ev.Gap {
			l.events <- ev
		}
	}
	backoff := 100 * time.Millisecond
	for {
		for conn == nil {
			select {
			case <-ctx.Done():
				return
			case <-time.After(backoff):
			}
			backoff = min(2*backoff, 5*time.Second)
			c, err := db.Listen(ctx, notifyChannel)
			if err == nil {
				conn = c
				backoff = 100 * time.Millisecond
				push(Event{Gap: true}) // what was sent while no connection listened is lost
			}
		}
		n, err := conn.Wait(ctx)
		switch {
		case ctx.Err() != nil:
			conn.Close()
			return
		case errors.Is(err, pgdb.ErrGap):
			push(Event{Gap: true})
			continue
		case err != nil:
			conn.Close()
			conn = nil
			continue
		}
		var p payload
		if json.Unmarshal([]byte(n.Payload), &p) != nil || (p.Key == "" && p.Digest == "") {
			continue // not one of ours
		}
		push(Event{Origin: p.Origin, Key: p.Key, KeyDigest: p.Digest, Index: p.Index})
	}
}

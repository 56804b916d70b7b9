package logs

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"log/slog"
	"sync"

	"github.com/zeroclaw-go/zeroclaw/internal/clock"
)

// Ring bounds used when Options leaves them zero.
const (
	DefaultRingFrames = 4096
	DefaultRingBytes  = 8 << 20
	maxBatch          = 256 // frames one Next returns at most
)

// ErrClosed is returned by Next once the hub is closed.
var ErrClosed = errors.New("logs: closed")

// Options configure a Hub. Only Path and Persistence are required.
type Options struct {
	// Path is the persisted log, <data>/state/runtime-trace.jsonl.
	Path string
	// Persistence returns the settings in force; it is read for every event, so a config reload applies to the
	// next one.
	Persistence func() Persistence
	Clock       clock.Clock   // timestamps and the rotating day; nil means clock.Real
	NewID       func() string // event ids; nil means random UUIDv4 strings
	Version     string        // service.version
	// Scrub removes secrets from every string of an event before it is kept anywhere; nil keeps text as is.
	Scrub      func(string) string
	RingFrames int // live events kept for subscribers; 0 means DefaultRingFrames
	RingBytes  int // bytes of live events kept; 0 means DefaultRingBytes
	Logger     *slog.Logger
	// rollSlack is how far past the cap a rolling file may grow before it is cut back (see writer); nil means
	// the cap itself. Tests and benchmarks set it.
	rollSlack func(max int) int
}

// Frame is one published event as subscribers get it: its sequence number and its JSON line (no newline).
// Line must not be modified.
type Frame struct {
	Seq  uint64
	Line []byte
}

// Hub receives events, keeps the newest in a ring for live subscribers and persists them. It is safe for
// concurrent use; Publish never waits for a subscriber.
type Hub struct {
	o     Options
	log   *slog.Logger
	epoch string
	w     *writer

	wmu sync.Mutex // wmu serializes Publish's assignment of seq with the write, so the file is in seq order

	mu     sync.Mutex // mu guards the fields below
	seq    uint64     // last assigned
	ring   []Frame    // oldest first
	bytes  int
	wake   chan struct{} // closed and replaced on every publish and on Close
	closed bool
}

// NewHub returns a hub with a fresh epoch; nothing is written until the first event.
func NewHub(o Options) *Hub {
	o.Clock = clock.OrReal(o.Clock)
	if o.NewID == nil {
		o.NewID = uuid4
	}
	if o.Scrub == nil {
		o.Scrub = func(s string) string { return s }
	}
	if o.RingFrames <= 0 {
		o.RingFrames = DefaultRingFrames
	}
	if o.RingBytes <= 0 {
		o.RingBytes = DefaultRingBytes
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.rollSlack == nil {
		o.rollSlack = func(max int) int { return max }
	}
	return &Hub{o: o, log: o.Logger, epoch: uuid4(), w: &writer{path: o.Path, slack: o.rollSlack}, wake: make(chan struct{})}
}

// Epoch identifies this hub's sequence numbers: it changes with every daemon process.
func (h *Hub) Epoch() string { return h.epoch }

// Path is the persisted log's path.
func (h *Hub) Path() string { return h.o.Path }

// Persistence returns the settings in force.
func (h *Hub) Persistence() Persistence { return h.o.Persistence() }

// Publish stamps, scrubs, sequences and stores one event. A failure to persist is logged (never the event).
func (h *Hub) Publish(e Entry) {
	ev := h.event(e)
	line, err := json.Marshal(ev)
	if err != nil {
		h.log.Warn("log event not encodable", "component", "logs", "action", e.Action, "err", err)
		return
	}
	p := h.o.Persistence()
	h.wmu.Lock()
	defer h.wmu.Unlock()
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		return
	}
	h.seq++
	h.ring = append(h.ring, Frame{Seq: h.seq, Line: line})
	h.bytes += len(line)
	for len(h.ring) > 1 && (len(h.ring) > h.o.RingFrames || h.bytes > h.o.RingBytes) {
		h.bytes -= len(h.ring[0].Line)
		h.ring[0] = Frame{}
		h.ring = h.ring[1:]
	}
	if cap(h.ring) > 2*h.o.RingFrames { // re-base so the slice does not grow without end
		h.ring = append(make([]Frame, 0, h.o.RingFrames+1), h.ring...)
	}
	close(h.wake)
	h.wake = make(chan struct{})
	h.mu.Unlock()
	if err := h.w.write(p, line, h.o.Clock.Now()); err != nil {
		h.log.Warn("log event not persisted", "component", "logs", "path", h.o.Path, "err", err)
	}
}

// event builds the scrubbed Event for e.
func (h *Hub) event(e Entry) Event {
	sev := e.Severity
	if sev == 0 {
		sev = SeverityInfo
	}
	zc := map[string]any{}
	for k, v := range e.Zeroclaw {
		zc[k] = h.scrubValue(v)
	}
	var attrs map[string]any
	if len(e.Attributes) > 0 {
		attrs = h.scrubValue(e.Attributes).(map[string]any)
	}
	return Event{
		ID: h.o.NewID(), Timestamp: timestamp(h.o.Clock.Now()), SeverityNumber: sev, SeverityText: SeverityText(sev),
		Event:   Kind{Category: e.Category, Action: e.Action, Outcome: e.Outcome},
		Service: Service{Name: "zeroclaw", Version: h.o.Version}, TraceID: h.o.Scrub(e.TraceID), SpanID: h.o.Scrub(e.SpanID),
		Zeroclaw: zc, Message: h.o.Scrub(e.Message), Attributes: attrs, SchemaVersion: SchemaVersion,
	}
}

// scrubValue returns v with every string in it scrubbed; maps and slices are copied, never changed in place.
func (h *Hub) scrubValue(v any) any {
	switch v := v.(type) {
	case string:
		return h.o.Scrub(v)
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, x := range v {
			out[h.o.Scrub(k)] = h.scrubValue(x)
		}
		return out
	case map[string]string:
		out := make(map[string]any, len(v))
		for k, x := range v {
			out[h.o.Scrub(k)] = h.o.Scrub(x)
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, x := range v {
			out[i] = h.scrubValue(x)
		}
		return out
	case []string:
		out := make([]any, len(v))
		for i, x := range v {
			out[i] = h.o.Scrub(x)
		}
		return out
	case nil, bool, int, int64, uint64, float64, json.Number:
		return v
	default:
		// Anything else goes through its JSON form, so no string inside it escapes the scrubber.
		raw, err := json.Marshal(v)
		if err != nil {
			return nil
		}
		var generic any
		if json.Unmarshal(raw, &generic) != nil {
			return nil
		}
		return h.scrubValue(generic)
	}
}

// Close ends every subscription (Next returns ErrClosed) and closes the file. Later events are dropped.
func (h *Hub) Close() error {
	h.wmu.Lock()
	defer h.wmu.Unlock()
	h.mu.Lock()
	if !h.closed {
		h.closed = true
		close(h.wake)
	}
	h.mu.Unlock()
	return h.w.close()
}

// Lag tells a subscriber that the events FromSeq up to (not including) ResumeSeq are lost to it: they left the
// ring before it read them, or they belong to an earlier epoch.
type Lag struct {
	FromSeq      uint64
	ResumeSeq    uint64
	EpochChanged bool
}

// Delivery is what one Next returns: a Lag to report first (nil when nothing was lost), then frames in order.
type Delivery struct {
	Lag    *Lag
	Frames []Frame
}

// Subscription is one live reader's cursor over the ring. It holds no events of its own, so a reader that
// stops calling Next costs nothing but its cursor. It is used by one goroutine.
type Subscription struct {
	h     *Hub
	next  uint64 // the next sequence number to deliver
	first *Lag   // reported by the first Next
}

// Subscribe starts a subscription. With sinceSeq nil it starts at the next event; otherwise it resumes after
// *sinceSeq, the last sequence number the reader saw. An epoch that is not this hub's (a cursor from an earlier
// process) resumes at the oldest event kept, telling the reader with EpochChanged.
func (h *Hub) Subscribe(sinceSeq *uint64, epoch string) *Subscription {
	h.mu.Lock()
	defer h.mu.Unlock()
	s := &Subscription{h: h, next: h.seq + 1}
	switch {
	case epoch != "" && epoch != h.epoch:
		// Sequence numbers restart with each epoch: what this one published before the oldest kept is lost.
		s.next = h.oldestLocked()
		s.first = &Lag{FromSeq: 1, ResumeSeq: s.next, EpochChanged: true}
	case sinceSeq != nil && *sinceSeq < h.seq:
		s.next = *sinceSeq + 1
	}
	return s
}

// oldestLocked is the sequence number of the oldest event in the ring (the next one when it is empty).
func (h *Hub) oldestLocked() uint64 {
	if len(h.ring) == 0 {
		return h.seq + 1
	}
	return h.ring[0].Seq
}

// Next waits until there is something to deliver, ctx ends (its error) or the hub closes (ErrClosed).
func (s *Subscription) Next(ctx context.Context) (Delivery, error) {
	for {
		h := s.h
		h.mu.Lock()
		var d Delivery
		if s.first != nil {
			d.Lag, s.first = s.first, nil
		}
		if oldest := h.oldestLocked(); s.next < oldest {
			if d.Lag == nil {
				d.Lag = &Lag{FromSeq: s.next}
			}
			d.Lag.ResumeSeq = oldest
			s.next = oldest
		}
		if n := len(h.ring); n > 0 && s.next <= h.ring[n-1].Seq {
			i := int(s.next - h.ring[0].Seq)
			end := min(n, i+maxBatch)
			d.Frames = append([]Frame(nil), h.ring[i:end]...)
			s.next = h.ring[end-1].Seq + 1
		}
		wake, closed := h.wake, h.closed
		h.mu.Unlock()
		if d.Lag != nil || len(d.Frames) > 0 {
			return d, nil
		}
		if closed {
			return Delivery{}, ErrClosed
		}
		select {
		case <-ctx.Done():
			return Delivery{}, ctx.Err()
		case <-wake:
		}
	}
}

func uuid4() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	h := hex.EncodeToString(b[:])
	return h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}

// Seq is the last sequence number published (0 before the first event).
func (h *Hub) Seq() uint64 {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.seq
}

// Package clocktest provides a clock that moves only when a test advances it.
package clocktest

import (
	"slices"
	"sync"
	"time"

	"github.com/zeroclaw-go/zeroclaw/internal/clock"
)

// Manual is a clock.Clock whose time moves only by Advance. Timers fire, in deadline order, when Advance
// reaches their deadline: a NewTimer's value is sent on its channel (buffered, never blocking), an AfterFunc's
// function runs in its own goroutine, as with package time. It is safe for concurrent use.
type Manual struct {
	mu      sync.Mutex // guards the fields below
	now     time.Time
	timers  []*timer      // armed, in creation order
	changed chan struct{} // closed and replaced whenever a timer is armed
}

type timer struct {
	d  time.Duration // as asked for
	at time.Time
	ch chan time.Time // NewTimer
	f  func()         // AfterFunc
}

// New returns a Manual clock reading start.
func New(start time.Time) *Manual { return &Manual{now: start, changed: make(chan struct{})} }

// Now implements clock.Clock.
func (m *Manual) Now() time.Time {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.now
}

// NewTimer implements clock.Clock.
func (m *Manual) NewTimer(d time.Duration) *clock.Timer {
	ch := make(chan time.Time, 1)
	t := m.arm(&timer{ch: ch}, d)
	return clock.NewTimer(ch, func() bool { return m.stop(t) })
}

// AfterFunc implements clock.Clock.
func (m *Manual) AfterFunc(d time.Duration, f func()) *clock.Timer {
	t := m.arm(&timer{f: f}, d)
	return clock.NewTimer(nil, func() bool { return m.stop(t) })
}

func (m *Manual) arm(t *timer, d time.Duration) *timer {
	m.mu.Lock()
	t.d, t.at = d, m.now.Add(d)
	m.timers = append(m.timers, t)
	close(m.changed)
	m.changed = make(chan struct{})
	m.mu.Unlock()
	if d <= 0 {
		m.Advance(0)
	}
	return t
}

func (m *Manual) stop(t *timer) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	i := slices.Index(m.timers, t)
	if i < 0 {
		return false
	}
	m.timers = slices.Delete(m.timers, i, i+1)
	return true
}

// Advance moves the clock forward by d and fires every timer whose deadline it reaches, earliest first.
func (m *Manual) Advance(d time.Duration) {
	m.mu.Lock()
	m.now = m.now.Add(d)
	var due []*timer
	m.timers = slices.DeleteFunc(m.timers, func(t *timer) bool {
		if t.at.After(m.now) {
			return false
		}
		due = append(due, t)
		return true
	})
	now := m.now
	m.mu.Unlock()
	slices.SortStableFunc(due, func(a, b *timer) int { return a.at.Compare(b.at) })
	for _, t := range due {
		if t.ch != nil {
			t.ch <- now
		} else {
			go t.f()
		}
	}
}

// Timers reports how many timers are armed (made and neither fired nor stopped).
func (m *Manual) Timers() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.timers)
}

// WaitTimer blocks until a timer made with duration d is armed, or for at most guard of real time (a bound on
// a hung test, not a timing assertion); it reports whether one was. A test calls it before Advance, so that the
// timer it means to fire exists by then.
func (m *Manual) WaitTimer(d, guard time.Duration) bool {
	giveUp := time.NewTimer(guard)
	defer giveUp.Stop()
	for {
		m.mu.Lock()
		armed := slices.ContainsFunc(m.timers, func(t *timer) bool { return t.d == d })
		changed := m.changed
		m.mu.Unlock()
		if armed {
			return true
		}
		select {
		case <-changed:
		case <-giveUp.C:
			return false
		}
	}
}

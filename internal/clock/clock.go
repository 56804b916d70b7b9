// Package clock is the time source a domain takes through daemon.Options: the current time and timers, so
// tests can drive time by hand (clocktest.Manual) instead of sleeping.
package clock

import "time"

// Clock tells the time and makes timers. Implementations are safe for concurrent use.
type Clock interface {
	Now() time.Time
	// NewTimer returns a timer that sends the time on C once d has passed.
	NewTimer(d time.Duration) *Timer
	// AfterFunc calls f in its own goroutine once d has passed, unless the timer is stopped first.
	AfterFunc(d time.Duration, f func()) *Timer
}

// Timer is a one-shot timer made by a Clock. C is nil for a timer made by AfterFunc.
type Timer struct {
	C    <-chan time.Time
	stop func() bool
}

// NewTimer builds a Timer for a Clock implementation: c is what it delivers on (nil for AfterFunc), stop
// prevents it from firing and reports whether that stopped it (false if it had fired or was stopped already).
func NewTimer(c <-chan time.Time, stop func() bool) *Timer { return &Timer{C: c, stop: stop} }

// Stop prevents the timer from firing; it reports false if the timer had already fired or been stopped. As
// with time.Timer, a value may already be waiting on C.
func (t *Timer) Stop() bool { return t.stop() }

// Real is the wall clock (package time).
var Real Clock = realClock{}

type realClock struct{}

func (realClock) Now() time.Time { return time.Now() }

func (realClock) NewTimer(d time.Duration) *Timer {
	t := time.NewTimer(d)
	return NewTimer(t.C, t.Stop)
}

func (realClock) AfterFunc(d time.Duration, f func()) *Timer {
	t := time.AfterFunc(d, f)
	return NewTimer(nil, t.Stop)
}

// OrReal returns c, or Real when c is nil.
func OrReal(c Clock) Clock {
	if c == nil {
		return Real
	}
	return c
}

package session

import "testing"

// A Signal wakes every waiter at the next Fire, and only then; a later Wait waits for the Fire after; a nil
// Signal (a session not registered) ignores Fire.
func TestSignal(t *testing.T) {
	var g Signal
	a, b := g.Wait(), g.Wait()
	select {
	case <-a:
		t.Fatal("woken before any Fire")
	default:
	}
	g.Fire()
	for _, c := range []<-chan struct{}{a, b} {
		select {
		case <-c:
		default:
			t.Fatal("a waiter was not woken by Fire")
		}
	}
	c := g.Wait()
	select {
	case <-c:
		t.Fatal("a Wait after the Fire is already woken")
	default:
	}
	var none *Signal
	none.Fire()
}

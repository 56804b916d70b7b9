package clocktest

import (
	"testing"
	"time"
)

func TestManualFiresOnlyWhenAdvancedPastTheDeadline(t *testing.T) {
	start := time.Unix(1_700_000_000, 0)
	m := New(start)
	tm := m.NewTimer(time.Minute)
	fired := make(chan struct{})
	m.AfterFunc(30*time.Second, func() { close(fired) })
	stopped := m.NewTimer(time.Second)
	if !stopped.Stop() || stopped.Stop() {
		t.Fatal("Stop must report true once, then false")
	}
	if !m.WaitTimer(time.Minute, time.Minute) || m.Timers() != 2 {
		t.Fatalf("armed timers = %d, want 2", m.Timers())
	}

	m.Advance(30*time.Second - 1)
	select {
	case <-fired:
		t.Fatal("AfterFunc ran before its deadline")
	case <-tm.C:
		t.Fatal("timer fired before its deadline")
	default:
	}
	m.Advance(1)
	<-fired
	m.Advance(30 * time.Second)
	if at := <-tm.C; !at.Equal(start.Add(time.Minute)) {
		t.Fatalf("timer sent %v, want %v", at, start.Add(time.Minute))
	}
	if tm.Stop() || m.Timers() != 0 {
		t.Fatalf("after firing: Stop must report false and nothing stays armed (%d)", m.Timers())
	}
	if got := m.Now(); !got.Equal(start.Add(time.Minute)) {
		t.Fatalf("Now = %v", got)
	}
	if m.WaitTimer(time.Hour, time.Millisecond) {
		t.Fatal("WaitTimer reported a timer nobody armed")
	}
}

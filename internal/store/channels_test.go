package store

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"
)

// A redelivered platform event is recognised across a reopen; its answer is queued exactly once; the outbox
// moves only along the state it is in.
func TestChannelDeliveryRecord(t *testing.T) {
	ctx := context.Background()
	p := filepath.Join(t.TempDir(), "sessions.db")
	s, err := OpenChat(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	ev := ChanEvent{ChannelID: "telegram.default", PlatformEventID: "42", Kind: "message", Sender: "7", ReplyTarget: "7", Content: "hi"}
	got, dup, err := s.RecordChannelEvent(ctx, ev, t0)
	if err != nil || dup || got.ID == 0 || got.State != ChanEventReceived {
		t.Fatalf("first record: %+v %v %v", got, dup, err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s, err = OpenChat(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	again, dup, err := s.RecordChannelEvent(ctx, ev, t0.Add(time.Minute))
	if err != nil || !dup || again.ID != got.ID || again.Content != "hi" {
		t.Fatalf("redelivery: %+v %v %v", again, dup, err)
	}
	other := ev
	other.ChannelID = "telegram.work" // the same platform id on another channel is another event
	if _, dup, err := s.RecordChannelEvent(ctx, other, t0); err != nil || dup {
		t.Fatalf("other channel: %v %v", dup, err)
	}
	if pend, err := s.PendingChannelEvents(ctx, "telegram.default"); err != nil || len(pend) != 1 {
		t.Fatalf("pending %v %v", pend, err)
	}
	outs := []ChanOut{{ChannelID: "telegram.default", Seq: 0, ReplyTarget: "7", Content: "a"}, {ChannelID: "telegram.default", Seq: 1, ReplyTarget: "7", Content: "b"}}
	if err := s.AnswerChannelEvent(ctx, got.ID, outs, t0); err != nil {
		t.Fatal(err)
	}
	if err := s.AnswerChannelEvent(ctx, got.ID, outs, t0); !errors.Is(err, ErrNotFound) {
		t.Fatalf("second answer: %v", err)
	}
	q, err := s.ChannelOutbox(ctx, "telegram.default", ChanOutPending, 10)
	if err != nil || len(q) != 2 || q[0].Content != "a" || q[1].Seq != 1 {
		t.Fatalf("outbox %+v %v", q, err)
	}
	if ok, err := s.SetChannelOut(ctx, q[0].ID, ChanOutPending, ChanOutSending, "", "", true, t0); !ok || err != nil {
		t.Fatal(ok, err)
	}
	if ok, _ := s.SetChannelOut(ctx, q[0].ID, ChanOutPending, ChanOutSending, "", "", true, t0); ok {
		t.Fatal("moved from a state it is not in")
	}
	if ok, err := s.SetChannelOut(ctx, q[0].ID, ChanOutSending, ChanOutSent, "m1", "", false, t0); !ok || err != nil {
		t.Fatal(ok, err)
	}
	c, err := s.ChannelCounts(ctx, "telegram.default")
	if err != nil || c["event:answered"] != 1 || c["out:sent"] != 1 || c["out:pending"] != 1 {
		t.Fatalf("counts %v %v", c, err)
	}
	if err := s.StampChannelSession(ctx, "telegram_default_7_7", "telegram.default", "7", "7", t0); err != nil {
		t.Fatal(err)
	}
	m, err := s.Meta(ctx, "telegram_default_7_7")
	if err != nil || m.ChannelID != "telegram.default" {
		t.Fatalf("meta %+v %v", m, err)
	}
}

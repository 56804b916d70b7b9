package store

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// ChannelSessions walks one channel's sessions newest first through idx_session_metadata_channel_activity
// (no sort of the channel's rows), and keeps those whose key has the prefix or whose room or sender is the
// peer; another channel's sessions and other peers' are never returned.
func TestChannelSessionsNewestFirstThroughTheIndex(t *testing.T) {
	ctx := t.Context()
	s, err := OpenChat(ctx, filepath.Join(t.TempDir(), "sessions.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	t0 := time.Unix(1_700_000_000, 0).UTC()
	stamp := func(key, channel, room, sender string, at time.Duration) {
		t.Helper()
		if err := s.StampChannelSession(ctx, key, channel, room, sender, t0.Add(at)); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Append(ctx, key, "user", "hi "+key, t0.Add(at)); err != nil {
			t.Fatal(err)
		}
	}
	stamp("telegram_default_42_42", "telegram.default", "42", "42", 1*time.Second)
	stamp("telegram_default_42_7_42", "telegram.default", "7", "42", 3*time.Second) // a thread of chat 42
	stamp("telegram_default_420_1", "telegram.default", "420", "1", 4*time.Second)  // another chat: prefix _420_
	stamp("telegram_other_42_42", "telegram.other", "42", "42", 5*time.Second)      // another alias
	stamp("telegram_default_9_42", "telegram.default", "9", "42", 2*time.Second)    // 42 as the sender in group 9
	for i := range 50 {
		stamp(fmt.Sprintf("telegram_default_5_%d", i), "telegram.default", "5", fmt.Sprint(i+100), time.Duration(10+i)*time.Second)
	}

	got, err := s.ChannelSessions(ctx, "telegram.default", "42", "telegram_default_42_", 10)
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, c := range got {
		keys = append(keys, c.Meta.Key+"@"+c.Room+"/"+c.Sender)
	}
	want := "telegram_default_42_7_42@7/42 telegram_default_9_42@9/42 telegram_default_42_42@42/42"
	if strings.Join(keys, " ") != want {
		t.Fatalf("sessions = %v, want %s (newest first, channel and peer only)", keys, want)
	}
	if got[0].Meta.ChannelID != "telegram.default" || got[0].Meta.LastActivity != t0.Add(3*time.Second) {
		t.Fatalf("meta = %+v", got[0].Meta)
	}
	if got, err := s.ChannelSessions(ctx, "telegram.default", "42", "telegram_default_42_", 1); err != nil || len(got) != 1 {
		t.Fatalf("limit 1: %d rows, %v", len(got), err)
	}
	if got, err := s.ChannelSessions(ctx, "telegram.default", "nobody", "", 10); err != nil || len(got) != 0 {
		t.Fatalf("unknown peer: %+v, %v", got, err)
	}
	if _, err := s.ChannelSessions(ctx, "telegram.default", "", "", 10); err == nil {
		t.Fatal("an empty peer was accepted")
	}

	rows, err := s.d.r.QueryContext(ctx, "EXPLAIN QUERY PLAN "+channelSessions, "telegram.default", "a", "b", "42", "42", 10)
	if err != nil {
		t.Fatal(err)
	}
	var plan []string
	for rows.Next() {
		var id, parent, unused int
		var detail string
		if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
			t.Fatal(err)
		}
		plan = append(plan, detail)
	}
	rows.Close()
	if joined := strings.Join(plan, "; "); !strings.Contains(joined, "idx_session_metadata_channel_activity") || strings.Contains(joined, "TEMP B-TREE") {
		t.Fatalf("query plan %q: want a walk of idx_session_metadata_channel_activity without a sort", joined)
	}
}

func TestPrefixEnd(t *testing.T) {
	for in, want := range map[string]string{"a_": "a`", "ab": "ac", "a\xff": "b", "\xff": "\xff", "": "\xff"} {
		if got := prefixEnd(in); got != want {
			t.Errorf("prefixEnd(%q) = %q, want %q", in, got, want)
		}
	}
}

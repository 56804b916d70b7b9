package main

import (
	"strings"
	"testing"
)

// The channel checker finds what it exists to find: a message taken but not recorded, one recorded twice, one
// answered twice, a reply nobody asked for, and more unanswered messages than the daemon counted.
func TestCheckChannelTraffic(t *testing.T) {
	sent := map[string]sentMsg{
		"1": {text: "a", mustRecord: true},
		"2": {text: "b", mustRecord: true},
		"3": {text: "c", mustRecord: false}, // never confirmed: may be unrecorded
		"4": {text: "d", mustRecord: true},
	}
	clean := channelDB{events: map[string]int{"a": 1, "b": 1, "d": 1}, counts: map[string]int{"out:unconfirmed": 1}}
	if bad, missing := checkChannelTraffic("m", sent, map[string]int{"1": 1, "2": 1, "4": 1}, clean); len(bad) != 0 || missing != 1 {
		t.Fatalf("a clean record: %q, %d missing", bad, missing)
	}
	rec := channelDB{events: map[string]int{"a": 1, "b": 2}, counts: map[string]int{}}
	bad, missing := checkChannelTraffic("m", sent, map[string]int{"1": 2, "9": 1}, rec)
	want := []string{
		`m 1 ("a") answered 2 times`,
		`m 2 ("b") recorded 2 times`,
		`m 4 ("d") taken by the daemon but never recorded: lost`,
		`m: 1 replies to 9, which nobody sent`,
		`m: 3 of 4 unanswered, only 0 counted unconfirmed or failed (counts map[])`,
	}
	if missing != 3 || strings.Join(bad, "\n") != strings.Join(want, "\n") {
		t.Fatalf("got %d missing and\n%s\nwant 3 and\n%s", missing, strings.Join(bad, "\n"), strings.Join(want, "\n"))
	}
	if bad, _ := checkChannelTraffic("m", map[string]sentMsg{}, map[string]int{}, clean); len(bad) != 1 || !strings.Contains(bad[0], "no traffic") {
		t.Fatalf("no traffic: %q", bad)
	}
}

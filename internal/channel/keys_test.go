package channel

import (
	"strings"
	"testing"
)

// Every session key of a reply target starts with SessionKeyPrefix, and PeerSession tells the peer's sessions
// from another peer's whose sanitized key shares the prefix ("a.b" and "a_b", "42.x" under "42").
func TestSessionKeyPrefixAndPeerSession(t *testing.T) {
	id := ID{Type: "irc", Alias: "default"}
	for _, c := range []struct{ target, thread, sender string }{{"42", "", "42"}, {"42", "7", "9"}, {"a.b", "", "nick|"},
		{strings.Repeat("r", 200), "", "s"}} {
		key := SessionKey(id, c.target, c.thread, c.sender)
		if !strings.HasPrefix(key, SessionKeyPrefix(id, c.target)) {
			t.Errorf("key %q lacks prefix %q", key, SessionKeyPrefix(id, c.target))
		}
		room := c.target
		if c.thread != "" {
			room = c.thread
		}
		if !PeerSession(id, c.target, key, room, c.sender) {
			t.Errorf("PeerSession(%q) refused its own session %q", c.target, key)
		}
	}
	// Same sanitized prefix, another chat: refused.
	other := SessionKey(id, "a_b", "t1", "bob")
	if !strings.HasPrefix(other, SessionKeyPrefix(id, "a.b")) {
		t.Fatalf("test premise: %q should share the prefix of a.b", other)
	}
	if PeerSession(id, "a.b", other, "t1", "bob") {
		t.Fatalf("a.b's heartbeat would read a_b's session %q", other)
	}
	x := SessionKey(id, "42.x", "", "bob")
	if !strings.HasPrefix(x, SessionKeyPrefix(id, "42")) || PeerSession(id, "42", x, "42.x", "bob") {
		t.Fatalf("chat 42 would read chat 42.x's session %q", x)
	}
	if PeerSession(id, "", "k", "", "") {
		t.Fatal("an empty peer matched")
	}
}

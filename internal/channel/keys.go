package channel

import (
	"crypto/sha256"
	"encoding/hex"
	"strconv"
	"strings"
)

// SessionKey is upstream's conversation history key for a sender-scoped chat:
// sanitize(<type>.<alias>_<reply_target>[_<thread>]_<sender>), every byte that is not an ASCII letter, digit,
// '_' or '-' replaced by '_'. Sanitizing is lossy ("a.b@x" and "a_b@x", the IRC nicks "alice|" and "alice_"
// would share one key, so on an open channel a stranger could pick an id that continues someone else's
// conversation), so unlike upstream a key whose reply target, thread or sender is not only letters, digits and
// '-' ends with a hash of its exact parts; so does a key longer than the session layer's 128 bytes, which
// keeps its first 100. Keys of plain ids (Telegram's numbers) are upstream's.
func SessionKey(id ID, replyTarget, thread, sender string) string {
	parts := []string{id.String(), replyTarget}
	if thread != "" {
		parts = append(parts, thread)
	}
	parts = append(parts, sender)
	lossy := !plain(replyTarget) || !plain(thread) || !plain(sender)
	b := []byte(strings.Join(parts, "_"))
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			b[i] = '_'
		}
	}
	if !lossy && len(b) <= 128 {
		return string(b)
	}
	h := sha256.New()
	for _, p := range parts { // length-prefixed: no two part lists hash alike
		h.Write([]byte(strconv.Itoa(len(p)) + ":" + p))
	}
	return string(b[:min(len(b), 100)]) + "_" + hex.EncodeToString(h.Sum(nil))[:27]
}

// plain reports whether s is only ASCII letters, digits and '-' (sanitizing keeps it, and it holds no '_').
func plain(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-') {
			return false
		}
	}
	return true
}

// SessionKeyPrefix is the start every SessionKey(id, replyTarget, …, …) has: the sanitized
// "<type>.<alias>_<reply_target>_", at most the 100 bytes a hashed key keeps. Sanitizing is lossy, so a key
// with this prefix may belong to another reply target: PeerSession tells.
func SessionKeyPrefix(id ID, replyTarget string) string {
	b := []byte(id.String() + "_" + replyTarget + "_")
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			b[i] = '_'
		}
	}
	return string(b[:min(len(b), 100)])
}

// PeerSession reports whether the session key of channel id, stamped with room and sender
// (StampChannelSession: the thread, else the reply target), is a conversation with peer: peer is its sender or
// its room, or its key is exactly the one a message from sender in the chat peer (in thread room) has.
func PeerSession(id ID, peer, key, room, sender string) bool {
	if peer == "" {
		return false
	}
	if sender == peer || room == peer {
		return true
	}
	return room != "" && sender != "" && key == SessionKey(id, peer, room, sender)
}

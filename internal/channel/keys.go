package channel

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
)

// SessionKey is upstream's conversation history key for a sender-scoped chat:
// sanitize(<type>.<alias>_<reply_target>[_<thread>]_<sender>), every byte that is not an ASCII letter, digit,
// '_' or '-' replaced by '_'. A key longer than the session layer's 128 bytes keeps its first 100 and a hash of
// the whole.
func SessionKey(id ID, replyTarget, thread, sender string) string {
	parts := []string{id.String(), replyTarget}
	if thread != "" {
		parts = append(parts, thread)
	}
	parts = append(parts, sender)
	raw := strings.Join(parts, "_")
	b := []byte(raw)
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			b[i] = '_'
		}
	}
	if len(b) > 128 {
		sum := sha256.Sum256([]byte(raw))
		return string(b[:100]) + "_" + hex.EncodeToString(sum[:])[:27]
	}
	return string(b)
}

// Package trigger holds the SOP trigger sources that listen to the outside world, MQTT brokers and watched
// directories, and hand each event to the engine as a sop.Event. A payload is untrusted input: it is cut to
// a bound and goes on as data; a source never runs anything itself.
package trigger

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"strings"

	"github.com/zeroclaw-go/zeroclaw/internal/sop"
	"github.com/zeroclaw-go/zeroclaw/internal/sop/engine"
)

// Dispatcher receives the events (the engine). Dispatch must be safe for concurrent use; an error means the
// event was not taken (a source that can have it redelivered, MQTT at QoS 1, leaves it unacknowledged).
type Dispatcher interface {
	Dispatch(ctx context.Context, ev sop.Event) ([]engine.Result, error)
}

// HardPayloadMax bounds a payload whatever [sop] untrusted_payload_max_bytes says (0 there means no cap of
// the engine's; a source still never holds more than this of one message).
const HardPayloadMax = 1 << 20

// capPayload makes an untrusted payload valid UTF-8 (upstream's from_utf8_lossy) and cuts it at a character
// boundary to max bytes (0: HardPayloadMax).
func capPayload(b []byte, max int) string {
	if max <= 0 || max > HardPayloadMax {
		max = HardPayloadMax
	}
	if len(b) > max+4 {
		b = b[:max+4] // the cut below lands within the last character
	}
	return sop.CapUntrusted(strings.ToValidUTF8(string(b), "\uFFFD"), max)
}

// digest is a short stable hash for dedup keys.
func digest(parts ...string) string {
	h := sha256.New()
	for _, p := range parts {
		h.Write([]byte(p))
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil)[:12])
}

// summarize counts what the engine did with an event: the SOPs that started (or joined) a run and those that
// matched but did not (deferred, skipped, blocked), for the source's debug log.
func summarize(res []engine.Result) (started, other int) {
	for _, r := range res {
		if r.Kind == engine.Started || r.Kind == engine.Coalesced {
			started++
		} else if r.Kind != engine.NoMatch {
			other++
		}
	}
	return started, other
}

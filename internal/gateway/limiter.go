package gateway

import (
	"sync"
	"time"

	"github.com/zeroclaw-go/zeroclaw/internal/clock"
)

// Limits of the auth limiter (upstream's auth_rate_limit.rs): failed attempts in a sliding window, then a
// lockout. Loopback clients are exempt.
const (
	AuthMaxAttempts = 10
	AuthWindow      = 60 * time.Second
	AuthLockout     = 300 * time.Second
	RateWindow      = 60 * time.Second
)

// window is a sliding-window counter per client key, bounded to maxKeys clients (the least recently used is
// forgotten first). mu guards the fields below.
type window struct {
	clk clock.Clock
	mu  sync.Mutex
	hit map[string]*hits
}

type hits struct {
	at          []time.Time // within the window, oldest first
	lockedUntil time.Time
	last        time.Time
}

func newWindow(clk clock.Clock) *window { return &window{clk: clk, hit: map[string]*hits{}} }

// allow records a request of key and reports whether it is within limit per RateWindow.
func (w *window) allow(key string, limit, maxKeys int) bool {
	now := w.clk.Now()
	w.mu.Lock()
	defer w.mu.Unlock()
	h := w.entryLocked(key, now, maxKeys)
	h.prune(now, RateWindow)
	if len(h.at) >= limit {
		return false
	}
	h.at = append(h.at, now)
	return true
}

// locked reports how long key stays locked out (0: not locked).
func (w *window) locked(key string) time.Duration {
	now := w.clk.Now()
	w.mu.Lock()
	defer w.mu.Unlock()
	if h := w.hit[key]; h != nil && now.Before(h.lockedUntil) {
		return h.lockedUntil.Sub(now)
	}
	return 0
}

// fail records a failed attempt of key; at AuthMaxAttempts within AuthWindow the key is locked out.
func (w *window) fail(key string, maxKeys int) {
	now := w.clk.Now()
	w.mu.Lock()
	defer w.mu.Unlock()
	h := w.entryLocked(key, now, maxKeys)
	h.prune(now, AuthWindow)
	h.at = append(h.at, now)
	if len(h.at) >= AuthMaxAttempts {
		h.lockedUntil, h.at = now.Add(AuthLockout), nil
	}
}

func (w *window) entryLocked(key string, now time.Time, maxKeys int) *hits {
	h := w.hit[key]
	if h == nil {
		if maxKeys > 0 && len(w.hit) >= maxKeys {
			w.evictLocked(now)
		}
		h = &hits{}
		w.hit[key] = h
	}
	h.last = now
	return h
}

// evictLocked forgets idle clients, or else the least recently seen one.
func (w *window) evictLocked(now time.Time) {
	var oldest string
	var at time.Time
	for k, h := range w.hit {
		if now.Sub(h.last) > AuthLockout && !now.Before(h.lockedUntil) {
			delete(w.hit, k)
			continue
		}
		if oldest == "" || h.last.Before(at) {
			oldest, at = k, h.last
		}
	}
	if oldest != "" && len(w.hit) > 0 {
		delete(w.hit, oldest)
	}
}

func (h *hits) prune(now time.Time, win time.Duration) {
	i := 0
	for i < len(h.at) && now.Sub(h.at[i]) >= win {
		i++
	}
	h.at = h.at[i:]
}

// limiters are the gateway's per-client limits.
type limiters struct {
	pair    *window // POST /pair, /api/pair requests
	auth    *window // failed codes and tokens
	webhook *window // POST /webhook requests
}

func newLimiters(clk clock.Clock) *limiters {
	return &limiters{pair: newWindow(clk), auth: newWindow(clk), webhook: newWindow(clk)}
}

// idempotency remembers webhook idempotency keys for a TTL, at most max of them. mu guards seen.
type idempotency struct {
	clk  clock.Clock
	mu   sync.Mutex
	seen map[string]time.Time // key → expiry
}

func newIdempotency(clk clock.Clock) *idempotency {
	return &idempotency{clk: clk, seen: map[string]time.Time{}}
}

// first records key and reports whether it was not seen within ttl.
func (d *idempotency) first(key string, ttl time.Duration, maxKeys int) bool {
	now := d.clk.Now()
	d.mu.Lock()
	defer d.mu.Unlock()
	if exp, ok := d.seen[key]; ok && now.Before(exp) {
		return false
	}
	if len(d.seen) >= maxKeys {
		var oldest string
		var at time.Time
		for k, exp := range d.seen {
			if !now.Before(exp) {
				delete(d.seen, k)
				continue
			}
			if oldest == "" || exp.Before(at) {
				oldest, at = k, exp
			}
		}
		if len(d.seen) >= maxKeys {
			delete(d.seen, oldest)
		}
	}
	d.seen[key] = now.Add(ttl)
	return true
}

package discord

import (
	"context"
	"time"

	"github.com/zeroclaw-go/zeroclaw/internal/channel"
)

// SetInvalidWait shortens the pause after INVALID_SESSION for tests.
func SetInvalidWait(a *Adapter, d time.Duration) { a.invalidWait = func() time.Duration { return d } }

// NoteCursor records message id of channel ch as the last one recorded there.
func NoteCursor(a *Adapter, ch, id, guild string) {
	a.update(false, func(s *gwState) { s.noteCursor(ch, id, guild) })
}

// Cursor is channel ch's catch-up cursor ("" : none).
func Cursor(a *Adapter, ch string) string { return a.state().Cursors[ch].ID }

// Cursors counts the channels remembered for a catch-up.
func Cursors(a *Adapter) int { return len(a.state().Cursors) }

// CatchUp runs one catch-up of every remembered channel.
func CatchUp(ctx context.Context, a *Adapter, d channel.Deliverer) error { return a.catchUp(ctx, d) }

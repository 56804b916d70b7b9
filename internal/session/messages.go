package session

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"
	"unicode/utf8"

	"github.com/zeroclaw-go/zeroclaw/internal/agent"
	"github.com/zeroclaw-go/zeroclaw/internal/api"
	"github.com/zeroclaw-go/zeroclaw/internal/store"
)

// Messages returns a page of the stored history (protocol.md §6 session/messages): the newest messages before
// before_index that fit in the page budget, so that the answer always fits in one frame. A message too large
// for a page on its own comes alone, cut (truncated, content_bytes); index + content_offset read it in slices.
func (m *Manager) Messages(ctx context.Context, o Owner, p api.SessionMessagesParams) (api.SessionMessagesResult, error) {
	pg, key, err := m.messagesSource(ctx, o, p.SessionID)
	if err != nil {
		if errors.Is(err, ErrNotFound) { // an unknown id has no messages (upstream), it is not an error
			return api.SessionMessagesResult{SessionID: p.SessionID, Messages: []api.SessionMessage{}}, nil
		}
		return api.SessionMessagesResult{}, err
	}
	budget := pageBudget(m.o.Config().RPC.MaxFrameBytes)
	if p.MaxBytes != nil {
		if *p.MaxBytes < MinPageBytes {
			return api.SessionMessagesResult{}, fmt.Errorf("%w: max_bytes must be at least %d, got %d", ErrInvalid, MinPageBytes, *p.MaxBytes)
		}
		budget = min(budget, *p.MaxBytes)
	}
	if p.Index != nil || p.ContentOffset != nil {
		return m.messageSlice(ctx, pg, key, p, budget)
	}
	before := -1
	if p.BeforeIndex != nil {
		if *p.BeforeIndex < 0 {
			return api.SessionMessagesResult{}, fmt.Errorf("%w: before_index must not be negative", ErrInvalid)
		}
		before = *p.BeforeIndex
	}
	limit := p.Limit
	if limit <= 0 { // upstream clients that send none get the newest page; start and has_older lead to the rest
		limit = api.DefaultSessionMessagesLimit
	}
	limit = min(limit, api.MaxSessionMessagesLimit)
	msgs, total, start, err := pg.Page(ctx, key, limit, before, budget)
	if err != nil {
		return api.SessionMessagesResult{}, fmt.Errorf("session: messages: %w", err)
	}
	// The store counted raw bytes; keep, newest first, the messages whose encoding fits.
	page := make([]api.SessionMessage, 0, len(msgs))
	room := budget
	for i := len(msgs) - 1; i >= 0; i-- {
		sm := wireMessage(msgs[i])
		size := encodedSize(sm)
		if size > room {
			if len(page) == 0 { // alone and too large: cut it to fit
				sm = cutToFit(sm, 0, room)
				page = append(page, sm)
			}
			break
		}
		room -= size
		page = append(page, sm)
	}
	slices.Reverse(page)
	if len(page) > 0 {
		start = page[0].Index
	}
	return api.SessionMessagesResult{SessionID: p.SessionID, Messages: page, Total: total, Start: start, HasOlder: start > 0}, nil
}

// messageSlice answers session/messages with index: that message alone (of the transcript pg holds under key),
// its content from content_offset, cut to fit budget.
func (m *Manager) messageSlice(ctx context.Context, pg pager, key string, p api.SessionMessagesParams, budget int) (api.SessionMessagesResult, error) {
	switch {
	case p.Index == nil:
		return api.SessionMessagesResult{}, fmt.Errorf("%w: content_offset needs index", ErrInvalid)
	case p.BeforeIndex != nil || p.Limit != 0:
		return api.SessionMessagesResult{}, fmt.Errorf("%w: index cannot be combined with before_index or limit", ErrInvalid)
	case *p.Index < 0:
		return api.SessionMessagesResult{}, fmt.Errorf("%w: index must not be negative", ErrInvalid)
	}
	offset := 0
	if p.ContentOffset != nil {
		offset = *p.ContentOffset
	}
	msg, total, err := pg.Message(ctx, key, *p.Index)
	if errors.Is(err, store.ErrNotFound) { // like an unknown session: an empty list, with the count
		return api.SessionMessagesResult{SessionID: p.SessionID, Messages: []api.SessionMessage{}, Total: total,
			Start: *p.Index, HasOlder: total > 0}, nil
	}
	if err != nil {
		return api.SessionMessagesResult{}, fmt.Errorf("session: messages: %w", err)
	}
	if offset < 0 || offset > len(msg.Content) {
		return api.SessionMessagesResult{}, fmt.Errorf("%w: content_offset must be between 0 and %d (the length of message %d), got %d",
			ErrInvalid, len(msg.Content), msg.Index, offset)
	}
	sm := cutToFit(wireMessage(msg), offset, budget)
	return api.SessionMessagesResult{SessionID: p.SessionID, Messages: []api.SessionMessage{sm}, Total: total,
		Start: msg.Index, HasOlder: msg.Index > 0}, nil
}

// Page budget: what a session/messages result may hold besides its envelope.
const (
	// MinPageBytes is the smallest max_bytes accepted.
	MinPageBytes = 1024
	// protocolFrameBytes is the frame limit clients read with (protocol.md §2.1).
	protocolFrameBytes = 8 << 20
	// pageSlack is kept for the result's envelope (jsonrpc, id, session_id, counts) and the per-message fields
	// that encodedSize rounds.
	pageSlack = 64 << 10
)

// pageBudget is the byte budget of a page for a daemon whose frame limit is maxFrame: never more than the
// protocol's frame limit, which is what clients read with, less room for the envelope.
func pageBudget(maxFrame int) int {
	frame := protocolFrameBytes
	if maxFrame > 0 && maxFrame < frame {
		frame = maxFrame
	}
	return max(MinPageBytes, frame-min(pageSlack, frame/4))
}

func wireMessage(msg store.Message) api.SessionMessage {
	return api.SessionMessage{Index: msg.Index, Role: msg.Role, Content: msg.Content,
		CreatedAt: msg.CreatedAt.UTC().Format(time.RFC3339Nano)}
}

// messageOverhead bounds the encoding of a message besides its role and content: the field names, punctuation,
// index, created_at and the paging fields.
const messageOverhead = 192

// encodedSize bounds the bytes sm takes in a result.
func encodedSize(sm api.SessionMessage) int {
	return messageOverhead + agent.EncodedLen(sm.Role) + agent.EncodedLen(sm.Content)
}

// cutToFit returns sm with its content starting at byte offset (moved forward to a rune boundary) and cut so
// that the message fits in room bytes.
func cutToFit(sm api.SessionMessage, offset, room int) api.SessionMessage {
	full := len(sm.Content)
	for offset < full && !utf8.RuneStart(sm.Content[offset]) {
		offset++
	}
	rest := sm.Content[offset:]
	n := agent.EncodedPrefix(rest, max(0, room-messageOverhead-agent.EncodedLen(sm.Role)))
	sm.Content = rest[:n]
	sm.Truncated = offset+n < full
	sm.ContentOffset = offset
	if sm.Truncated || offset > 0 {
		sm.ContentBytes = full
	}
	return sm
}

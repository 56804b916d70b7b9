package memory

import (
	"context"
	"math"
	"strings"
	"time"
	"unicode/utf8"
)

// The markers of the injected block.
const (
	ContextOpen  = "[Memory context]"
	ContextClose = "[/Memory context]"
)

// Upstream's injection caps.
const (
	RecallLimit   = 5
	MaxEntries    = 4
	EntryMaxChars = 800
	MaxTotalChars = 4000
	HalfLifeDays  = 7.0
)

// InjectOptions tunes one injection.
type InjectOptions struct {
	MinRelevance float64
	// ExcludeConversation drops conversation memories (a turn without a session scope, as RPC turns are).
	ExcludeConversation bool
	SessionID           string // recall scope; "" recalls across sessions
	Now                 time.Time
	// Keep, when set, leaves out the recalled memories it refuses (those outside the caller's scope).
	Keep func(Entry) bool
}

// Context recalls what the agent remembers about message and renders the [Memory context] block to prepend
// to it ("" when nothing qualifies). A recall error yields "" (a turn never fails for its memory); it is
// returned for logging.
func (s *Scoped) Context(ctx context.Context, message string, o InjectOptions) (string, error) {
	q := Query{Text: message, Limit: RecallLimit, SessionID: o.SessionID, Agents: s.allowed}
	if o.ExcludeConversation {
		// Upstream drops them only when rendering; with one auto-saved row per message (not upstream's single
		// overwritten user_msg row) they would crowd the facts out of the recall and below the relative floor.
		q.ExcludeCategory = CategoryConversation
	}
	if o.Keep != nil {
		q.Limit *= 4 // Keep drops others' memories below: recall more so the caller's own still make the cut
	}
	entries, err := s.b.Recall(ctx, q)
	if err != nil {
		return "", err
	}
	seen := map[string]bool{}
	kept := entries[:0]
	for _, e := range entries {
		if o.Keep != nil && !o.Keep(e) {
			continue
		}
		if !seen[e.Key] {
			seen[e.Key] = true
			kept = append(kept, e)
		}
	}
	Decay(kept, o.Now)
	return Render(kept, o), nil
}

// Decay lowers the score of every scored non-core memory by its age: half of it every HalfLifeDays.
func Decay(entries []Entry, now time.Time) {
	for i := range entries {
		e := &entries[i]
		if e.Category == CategoryCore || e.Score == nil {
			continue
		}
		ts, err := time.Parse(time.RFC3339Nano, e.Timestamp)
		if err != nil {
			continue
		}
		age := max(now.Sub(ts).Truncate(time.Second).Seconds(), 0) / 86400
		e.Score = ptr(*e.Score * math.Exp(-age/HalfLifeDays*math.Ln2))
	}
}

// Render renders entries as upstream does: those scoring below the floor (unscored ones are kept), conversation
// memories when excluded, and the skip set are left out; at most MaxEntries lines of "- key: content", each
// content cut at EntryMaxChars, MaxTotalChars in all; the block ends with a blank line.
func Render(entries []Entry, o InjectOptions) string {
	var b strings.Builder
	included, used := 0, 0
	for _, e := range entries {
		if e.Score != nil && *e.Score < o.MinRelevance {
			continue
		}
		if included >= MaxEntries {
			break
		}
		if (o.ExcludeConversation && e.Category == CategoryConversation) || Skipped(e.Key, e.Content) {
			continue
		}
		line := "- " + e.Key + ": " + truncateChars(e.Content, EntryMaxChars) + "\n"
		n := utf8.RuneCountInString(line)
		if used+n > MaxTotalChars {
			break
		}
		if included == 0 {
			b.WriteString(ContextOpen + "\n")
		}
		b.WriteString(line)
		used += n
		included++
	}
	if included > 0 {
		b.WriteString(ContextClose + "\n\n")
	}
	return b.String()
}

// Skipped reports whether a memory never goes into a prompt: auto-saved turns, histories, scheduled-task
// output, injected blocks, images and tool results.
func Skipped(key, content string) bool {
	k := strings.ToLower(strings.TrimSpace(key))
	if k == "user_msg" || strings.HasPrefix(k, "user_msg_") || k == "assistant_resp" || strings.HasPrefix(k, "assistant_resp_") ||
		strings.HasSuffix(k, "_history") {
		return true
	}
	c := strings.TrimSpace(content)
	lc := strings.ToLower(c)
	return c == "" || strings.HasPrefix(lc, "[cron:") || strings.HasPrefix(lc, "[heartbeat task") ||
		strings.HasPrefix(lc, "[distilled_") || strings.HasPrefix(lc, strings.ToLower(ContextOpen)) ||
		strings.Contains(lc, "distilled_index_sig:") || strings.Contains(content, "[IMAGE:") ||
		strings.Contains(content, "<tool_result")
}

// truncateChars keeps the first n characters, trims trailing space and appends "..." (upstream's ellipsis).
func truncateChars(s string, n int) string {
	i := 0
	for pos := range s {
		if i == n {
			return strings.TrimRight(s[:pos], " \t\r\n") + "..."
		}
		i++
	}
	return s
}

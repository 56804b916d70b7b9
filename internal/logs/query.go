package logs

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
)

// Query limits (upstream's): the default page and the clamp.
const (
	DefaultQueryLimit = 200
	MaxQueryLimit     = 10000
)

// ErrNotPersisted is returned by Query and Get when log_persistence is none.
var ErrNotPersisted = errors.New("logs: persistence is not enabled")

// ErrNotFound is returned by Get for an id the log does not hold.
var ErrNotFound = errors.New("logs: event not found")

// Filter selects events, with upstream's logs/query filters and cursors.
type Filter struct {
	SinceTS         string  // events at or after this timestamp (string order, as RFC 3339 sorts)
	UntilTS         string  // legacy cursor: events before it (ties broken by UntilID)
	UntilID         string  // legacy cursor: with an equal timestamp, ids below it
	UntilLineOffset *uint64 // byte cursor: only lines ending before this offset
	SeverityMin     int
	Q               string // case-insensitive substring of message or attributes
	Category        string
	Action          string
	Outcome         string
	TraceID         string
	HideInternal    bool
	Field           map[string]string // zeroclaw.<key> equals
	Scope           Scope             // the agents whose events the reader may see (nil: all)
}

// Page is one logs/query answer: events newest first, the cursors to the next older page, and whether there
// is none.
type Page struct {
	Events         []json.RawMessage
	NextCursor     *[2]string // [timestamp, id] of the oldest event of the page
	NextLineOffset *uint64
	AtEnd          bool
}

// Query reads the persisted log. With rolling persistence only the newest MaxEntries lines count (the file may
// hold a few more until the writer cuts it back).
func (h *Hub) Query(f Filter, limit int) (Page, error) {
	p := h.o.Persistence()
	if p.mode() == ModeNone {
		return Page{}, ErrNotPersisted
	}
	if limit <= 0 {
		limit = DefaultQueryLimit
	}
	limit = min(limit, MaxQueryLimit)
	type hit struct {
		line []byte
		end  uint64
	}
	var window []hit
	droppedOlder, stoppedEarly := false, false
	needle := strings.ToLower(f.Q)
	err := h.scan(p, func(line []byte, end uint64) bool {
		if f.UntilLineOffset != nil && end >= *f.UntilLineOffset {
			stoppedEarly = true
			return false
		}
		e, ok := parse(line)
		if !ok || !f.matches(e, needle) {
			return true
		}
		window = append(window, hit{bytes.Clone(line), end})
		if len(window) > limit {
			window = window[1:]
			droppedOlder = true
		}
		return true
	})
	if err != nil {
		return Page{}, err
	}
	page := Page{Events: make([]json.RawMessage, 0, len(window))}
	for i := len(window) - 1; i >= 0; i-- {
		page.Events = append(page.Events, window[i].line)
	}
	if len(window) > 0 {
		oldest := window[0]
		page.NextLineOffset = &oldest.end
		e, _ := parse(oldest.line)
		page.NextCursor = &[2]string{e.Timestamp, e.ID}
	}
	page.AtEnd = !droppedOlder && !stoppedEarly || len(window) == 0
	return page, nil
}

// Get returns the event with id from the persisted log (the last one when an id repeats).
func (h *Hub) Get(id string) (json.RawMessage, error) {
	p := h.o.Persistence()
	if p.mode() == ModeNone {
		return nil, ErrNotPersisted
	}
	var found []byte
	err := h.scan(p, func(line []byte, _ uint64) bool {
		if bytes.Contains(line, []byte(id)) {
			if e, ok := parse(line); ok && e.ID == id {
				found = bytes.Clone(line)
			}
		}
		return true
	})
	if err != nil {
		return nil, err
	}
	if found == nil {
		return nil, fmt.Errorf("%w: %s", ErrNotFound, id)
	}
	return found, nil
}

// scan calls fn for each non-empty line of the log that counts (see Query), with the byte offset where the line
// ends, until fn returns false. A missing file is an empty log.
func (h *Hub) scan(p Persistence, fn func(line []byte, end uint64) bool) error {
	f, err := os.Open(h.o.Path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("logs: read %s: %w", h.o.Path, err)
	}
	defer f.Close()
	skip := 0
	if p.mode() == ModeRolling {
		n, _, err := countLines(f)
		if err != nil {
			return fmt.Errorf("logs: read %s: %w", h.o.Path, err)
		}
		skip = max(n-p.maxEntries(), 0)
		if _, err := f.Seek(0, io.SeekStart); err != nil {
			return fmt.Errorf("logs: read %s: %w", h.o.Path, err)
		}
	}
	br := bufio.NewReaderSize(f, 64<<10)
	var off uint64
	for {
		line, err := br.ReadBytes('\n')
		off += uint64(len(line))
		if len(line) > 0 && line[len(line)-1] == '\n' { // a line still being written has no newline yet
			if t := bytes.TrimSpace(line); len(t) > 0 {
				if skip > 0 {
					skip--
				} else if !fn(t, off) {
					return nil
				}
			}
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("logs: read %s: %w", h.o.Path, err)
		}
	}
}

func (f Filter) matches(e Event, needle string) bool {
	switch {
	case f.HideInternal && e.Event.Category == "internal":
		return false
	case f.SinceTS != "" && e.Timestamp < f.SinceTS:
		return false
	case f.UntilTS != "" && (e.Timestamp > f.UntilTS || e.Timestamp == f.UntilTS && f.UntilID != "" && e.ID >= f.UntilID):
		return false
	case f.Action != "" && !strings.EqualFold(e.Event.Action, f.Action):
		return false
	case f.Category != "" && !strings.EqualFold(e.Event.Category, f.Category):
		return false
	case f.Outcome != "" && !strings.EqualFold(e.Event.Outcome, f.Outcome):
		return false
	case f.SeverityMin > 0 && e.SeverityNumber < f.SeverityMin:
		return false
	case f.TraceID != "" && e.TraceID != f.TraceID:
		return false
	}
	if f.Scope != nil {
		if agent, _ := e.Zeroclaw["agent_alias"].(string); !f.Scope.Allows(agent) {
			return false
		}
	}
	for k, want := range f.Field {
		if got, ok := e.Zeroclaw[k].(string); !ok || got != want {
			return false
		}
	}
	if needle != "" {
		attrs, _ := json.Marshal(e.Attributes)
		if !strings.Contains(strings.ToLower(e.Message), needle) && !strings.Contains(strings.ToLower(string(attrs)), needle) {
			return false
		}
	}
	return true
}

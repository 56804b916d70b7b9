// Package logs is the daemon's runtime event log (state.md §7, upstream's schema v2): events published by the
// daemon's domains get an id, a timestamp and a sequence number, are scrubbed of secrets, kept in a bounded
// ring for live subscribers (protocol.md §6.2.1) and persisted to data/state/runtime-trace.jsonl according to
// [observability] log_persistence.
package logs

import (
	"encoding/json"
	"time"
)

// SchemaVersion is the event schema written (upstream's v2).
const SchemaVersion = 2

// Severity numbers (upstream's OpenTelemetry-style scale).
const (
	SeverityTrace = 1
	SeverityDebug = 5
	SeverityInfo  = 9
	SeverityWarn  = 13
	SeverityError = 17
)

// Categories used by this daemon (a subset of upstream's).
const (
	CategoryAgent    = "agent"
	CategoryTool     = "tool"
	CategoryProvider = "provider"
	CategorySession  = "session"
	CategorySystem   = "system"
)

// Outcomes; an unknown outcome is left empty and omitted.
const (
	OutcomeSuccess = "success"
	OutcomeFailure = "failure"
)

// SeverityText is the name upstream's reader gives a severity number.
func SeverityText(n int) string {
	switch {
	case n <= 4:
		return "TRACE"
	case n <= 8:
		return "DEBUG"
	case n <= 12:
		return "INFO"
	case n <= 16:
		return "WARN"
	case n <= 20:
		return "ERROR"
	}
	return "FATAL"
}

// Kind is the event's event member: what happened.
type Kind struct {
	Category string `json:"category"`
	Action   string `json:"action"`
	Outcome  string `json:"outcome,omitempty"`
}

// Service names the emitter.
type Service struct {
	Name    string `json:"name"`
	Version string `json:"version"`
}

// Event is one line of runtime-trace.jsonl, field for field upstream's LogEvent (schema_version 2).
type Event struct {
	ID             string         `json:"id"`
	Timestamp      string         `json:"@timestamp"`
	SeverityNumber int            `json:"severity_number"`
	SeverityText   string         `json:"severity_text"`
	Event          Kind           `json:"event"`
	Service        Service        `json:"service"`
	TraceID        string         `json:"trace_id,omitempty"`
	SpanID         string         `json:"span_id,omitempty"`
	Zeroclaw       map[string]any `json:"zeroclaw"`
	Message        string         `json:"message,omitempty"`
	Attributes     map[string]any `json:"attributes,omitempty"`
	SchemaVersion  int            `json:"schema_version"`
}

// Entry is what a domain publishes; the hub fills in the rest of the Event.
type Entry struct {
	Severity int // 0 means SeverityInfo
	Category string
	Action   string
	Outcome  string // "", OutcomeSuccess or OutcomeFailure
	Message  string
	TraceID  string
	SpanID   string
	// Zeroclaw is the attribution map (agent_alias, session_key, tool, model, ...; duration_ms).
	Zeroclaw map[string]any
	// Attributes are free-form details; values must be JSON-encodable.
	Attributes map[string]any
}

// Publisher is what a domain needs to emit events. Publish must not block on slow readers.
type Publisher interface {
	Publish(Entry)
}

// Discard is a Publisher that drops every event.
var Discard Publisher = discard{}

type discard struct{}

func (discard) Publish(Entry) {}

// timestamp formats t as upstream does: UTC RFC 3339 with milliseconds and Z.
func timestamp(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z") }

// parse decodes one stored line; ok is false for a line that is not an event.
func parse(line []byte) (Event, bool) {
	var e Event
	if err := json.Unmarshal(line, &e); err != nil || e.ID == "" {
		return Event{}, false
	}
	return e, true
}

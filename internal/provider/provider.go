// Package provider streams chat completions from LLM backends (echo, openai, ollama, anthropic) behind one small
// interface. The echo family is an offline demo provider with a test hook: a last user message
// "/tool <name> <json-args>" makes it emit exactly that tool call (ids "echo-call-1", "echo-call-2", ...) and no
// text (also after a heartbeat task's "[Heartbeat Task | <priority>] " prefix), and a trailing tool result makes
// it reply "tool <name> returned: <content>".
package provider

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"
)

// Message roles understood by every family.
const (
	RoleSystem    = "system"
	RoleUser      = "user"
	RoleAssistant = "assistant"
	RoleTool      = "tool"
)

// Family names accepted by New.
const (
	FamilyEcho      = "echo"
	FamilyOpenAI    = "openai"
	FamilyOllama    = "ollama"
	FamilyAnthropic = "anthropic"
)

// Message is one entry of the conversation sent to a model.
type Message struct {
	Role       string     // system | user | assistant | tool
	Content    string     // text; for role tool, the tool's output
	ToolCalls  []ToolCall // assistant only: the calls the model made
	ToolCallID string     // tool only: the id of the call this result answers
	Name       string     // tool only: the name of the tool that ran
}

// ToolSpec describes a tool offered to the model.
type ToolSpec struct {
	Name        string
	Description string
	Parameters  json.RawMessage // a JSON Schema object; nil means {"type":"object"}
}

// ToolCall is one complete tool invocation requested by the model. Arguments is always valid JSON: a JSON
// object normally; when the model produced text that is not valid JSON it is carried as a JSON string so the
// caller can report the problem back to the model.
type ToolCall struct {
	ID        string
	Name      string
	Arguments json.RawMessage
}

// Request is one model call.
type Request struct {
	Messages []Message
	Tools    []ToolSpec
	Model    string // overrides Settings.Model when non-empty
	Limits   Limits // what the response may carry; enforced while it streams
}

// EventType tells what an Event carries.
type EventType int

const (
	// EventText is a chunk of the visible answer.
	EventText EventType = iota + 1
	// EventThought is a chunk of model reasoning (not part of Result.Text).
	EventThought
	// EventToolCall carries one complete, assembled tool call.
	EventToolCall
)

// String returns a short name for the event type.
func (t EventType) String() string {
	switch t {
	case EventText:
		return "text"
	case EventThought:
		return "thought"
	case EventToolCall:
		return "tool_call"
	}
	return fmt.Sprintf("EventType(%d)", int(t))
}

// Event is one streamed chunk.
type Event struct {
	Type     EventType
	Text     string    // EventText, EventThought
	ToolCall *ToolCall // EventToolCall
}

// Usage is the token accounting reported by the backend (or estimated by echo).
type Usage struct {
	Model        string
	InputTokens  int
	OutputTokens int
}

// Result is the complete response once the stream has ended.
type Result struct {
	Text       string     // concatenation of every EventText
	ToolCalls  []ToolCall // every EventToolCall, in order
	Usage      Usage
	StopReason string // the family's own stop reason ("stop", "tool_calls", "end_turn", ...)
}

// Provider is one configured model endpoint.
type Provider interface {
	// Alias returns "<family>.<alias>", used in errors and cost records.
	Alias() string
	// Stream sends the request and calls emit for each chunk in order, from the calling goroutine. It returns
	// when the response is complete. Cancelling ctx aborts the HTTP request promptly and returns ctx.Err()
	// (wrapped). Errors name the alias, never contain the API key or extra header values.
	Stream(ctx context.Context, req Request, emit func(Event)) (Result, error)
}

// Settings configures a provider; the agent layer maps config entries onto it.
type Settings struct {
	Family      string // echo | openai | ollama | anthropic
	Alias       string // the config alias; "default" when empty
	URI         string // base URL; the family's default when empty; a trailing slash is tolerated
	APIKey      string
	Model       string
	Temperature *float64
	// TimeoutSecs bounds how long the backend may stay silent: until the response headers, and then between
	// two reads of the streamed body. A long answer that keeps streaming is never cut. It is also the budget
	// of the retries: every attempt, and every backoff between them, must fit in TimeoutSecs from the start
	// of Stream, so a dead backend fails within TimeoutSecs however many retries MaxRetries allows. 120 when
	// <= 0.
	TimeoutSecs int
	// IdleTimeout overrides TimeoutSecs with a finer unit when > 0 (tests).
	IdleTimeout  time.Duration
	MaxTokens    int // 0 means the family's default (anthropic: 4096; others: unset)
	ExtraHeaders map[string]string
	Client       *http.Client  // nil means http.DefaultClient's transport with no overall timeout; redirects stay within the origin
	MaxRetries   int           // retries after the first attempt; 0 means 2, negative means none
	RetryBase    time.Duration // first backoff delay, doubled per retry; 0 means 500ms
	// Now and Sleep are the clock of the retry budget; nil means the real clock (tests inject a fake one).
	// Sleep returns early with ctx's error when ctx ends.
	Now   func() time.Time
	Sleep func(ctx context.Context, d time.Duration) error
}

// Defaults applied by New.
const (
	DefaultTimeoutSecs        = 120
	DefaultMaxRetries         = 2
	DefaultRetryBase          = 500 * time.Millisecond
	DefaultAnthropicMaxTokens = 4096
	DefaultOpenAIURI          = "https://api.openai.com/v1"
	DefaultOllamaURI          = "http://localhost:11434"
	DefaultAnthropicURI       = "https://api.anthropic.com"
	anthropicVersion          = "2023-06-01"
)

var (
	// ErrUnknownFamily is returned by New for a family it does not implement.
	ErrUnknownFamily = errors.New("provider: unknown family")
	// ErrStream reports an error the backend sent inside an otherwise successful stream.
	ErrStream = errors.New("provider: stream error")
	// ErrIncomplete reports a stream that ended before the backend marked the response complete.
	ErrIncomplete = errors.New("provider: incomplete stream")
	// ErrBadResponse reports a stream chunk that could not be decoded.
	ErrBadResponse = errors.New("provider: bad response")
	// ErrIdleTimeout reports a backend that sent nothing for longer than timeout_secs.
	ErrIdleTimeout = errors.New("provider: backend silent for longer than timeout_secs")
)

// HTTPError is a non-2xx answer from the backend.
type HTTPError struct {
	Alias  string
	Status int
	Body   string // truncated and scrubbed of the API key and extra header values

	retryAfter time.Duration // from the Retry-After header; 0 when absent
}

func (e *HTTPError) Error() string {
	msg := fmt.Sprintf("provider: %s: HTTP %d %s", e.Alias, e.Status, http.StatusText(e.Status))
	if e.Body != "" {
		msg += ": " + e.Body
	}
	return msg
}

// Temporary reports whether the status is worth retrying (429 and 5xx).
func (e *HTTPError) Temporary() bool {
	return e.Status == http.StatusTooManyRequests || e.Status >= 500
}

// New builds the provider for s.Family. It performs no I/O. The returned Provider holds no per-request state
// and is safe for concurrent use; a nil emit passed to Stream discards events.
func New(s Settings) (Provider, error) {
	if s.Alias == "" {
		s.Alias = "default"
	}
	if s.TimeoutSecs <= 0 {
		s.TimeoutSecs = DefaultTimeoutSecs
	}
	switch {
	case s.MaxRetries == 0:
		s.MaxRetries = DefaultMaxRetries
	case s.MaxRetries < 0:
		s.MaxRetries = 0
	}
	if s.RetryBase <= 0 {
		s.RetryBase = DefaultRetryBase
	}
	if s.IdleTimeout <= 0 {
		s.IdleTimeout = time.Duration(s.TimeoutSecs) * time.Second
	}
	// No overall timeout: a streamed answer may take minutes; IdleTimeout applies. Redirects stay within the
	// configured origin.
	s.Client = sameOrigin(s.Client)
	if s.Now == nil {
		s.Now = time.Now
	}
	if s.Sleep == nil {
		s.Sleep = sleep
	}
	family := strings.ToLower(strings.TrimSpace(s.Family))
	switch family {
	case FamilyEcho:
		return newEcho(s), nil
	case FamilyOpenAI:
		return newOpenAI(s), nil
	case FamilyOllama:
		return newOllama(s), nil
	case FamilyAnthropic:
		return newAnthropic(s), nil
	}
	return nil, fmt.Errorf("%w %q (want echo, openai, ollama or anthropic)", ErrUnknownFamily, s.Family)
}

// modelFor picks the request's model, falling back to the configured one.
func modelFor(req Request, s Settings) string {
	if req.Model != "" {
		return req.Model
	}
	return s.Model
}

// normalizeArgs returns raw as a JSON value usable in ToolCall.Arguments: empty becomes {}, valid JSON is kept
// (compacted), and anything else is carried as a JSON string.
func normalizeArgs(raw []byte) json.RawMessage {
	s := strings.TrimSpace(string(raw))
	if s == "" {
		return json.RawMessage("{}")
	}
	if json.Valid([]byte(s)) {
		return json.RawMessage(s)
	}
	b, _ := json.Marshal(s) // marshalling a string cannot fail
	return b
}

// argsObject returns args as a JSON value suitable where a backend expects an object.
func argsObject(args json.RawMessage) json.RawMessage {
	if len(strings.TrimSpace(string(args))) == 0 {
		return json.RawMessage("{}")
	}
	if !json.Valid(args) {
		b, _ := json.Marshal(string(args))
		return b
	}
	return args
}

// schemaOrDefault returns the tool's JSON Schema or an empty object schema.
func schemaOrDefault(p json.RawMessage) json.RawMessage {
	if len(bytes.TrimSpace(p)) == 0 { // bytes, not a string copy: this runs for every tool of every request
		return json.RawMessage(`{"type":"object","properties":{}}`)
	}
	return p
}

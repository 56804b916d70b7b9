package provider

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"unicode/utf8"
)

// endless streams frames made by frame(i) until the client goes away, closing gone then.
func endless(contentType string, head string, frame func(i int) string, gone chan<- struct{}) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		defer close(gone)
		w.Header().Set("Content-Type", contentType)
		w.WriteHeader(http.StatusOK)
		if _, err := w.Write([]byte(head)); err != nil {
			return
		}
		for i := 0; ; i++ {
			if _, err := w.Write([]byte(frame(i))); err != nil {
				return
			}
			if i%64 == 0 {
				w.(http.Flusher).Flush()
			}
			if r.Context().Err() != nil {
				return
			}
		}
	}
}

// endlessCase is one family's never-ending text answer and never-ending tool-call arguments.
type endlessCase struct {
	familyCase
	textHead string
	text     func(i int) string // one frame carrying "héllo wörld " (14 bytes)
	argsHead string
	args     func(i int) string // one frame adding 16 bytes to one tool call's arguments
	calls    func(i int) string // one frame starting a new tool call with small arguments
}

func endlessCases() []endlessCase {
	const word = "héllo wörld "
	oaiText := func(int) string {
		return `data: {"choices":[{"index":0,"delta":{"content":"` + word + `"},"finish_reason":null}]}` + "\n\n"
	}
	oaiArgs := func(int) string {
		return `data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"aaaaaaaaaaaaaaaa"}}]},"finish_reason":null}]}` + "\n\n"
	}
	oaiCalls := func(i int) string {
		return fmt.Sprintf(`data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":%d,"id":"c%d","function":{"name":"shell","arguments":"{}"}}]},"finish_reason":null}]}`+"\n\n", i, i)
	}
	ev := func(name, data string) string { return "event: " + name + "\ndata: " + data + "\n\n" }
	antStart := ev("message_start", `{"type":"message_start","message":{"model":"m","usage":{"input_tokens":1,"output_tokens":1}}}`)
	return []endlessCase{{
		familyCase: httpFamilies[0],
		text:       oaiText,
		argsHead:   `data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"c1","function":{"name":"shell","arguments":""}}]},"finish_reason":null}]}` + "\n\n",
		args:       oaiArgs,
		calls:      oaiCalls,
	}, {
		familyCase: httpFamilies[1],
		text: func(int) string {
			return `{"model":"m","message":{"role":"assistant","content":"` + word + `"},"done":false}` + "\n"
		},
		// Ollama sends each call whole: one line whose arguments never end, bounded by the line reader.
		argsHead: `{"model":"m","message":{"role":"assistant","content":"","tool_calls":[{"function":{"name":"shell","arguments":"`,
		args:     func(int) string { return "aaaaaaaaaaaaaaaa" },
		calls: func(i int) string {
			return `{"model":"m","message":{"role":"assistant","content":"","tool_calls":[{"function":{"name":"shell","arguments":{}}}]},"done":false}` + "\n"
		},
	}, {
		familyCase: httpFamilies[2],
		textHead:   antStart + ev("content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`),
		text: func(int) string {
			return ev("content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"`+word+`"}}`)
		},
		argsHead: antStart + ev("content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"t1","name":"shell","input":{}}}`),
		args: func(int) string {
			return ev("content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"aaaaaaaaaaaaaaaa"}}`)
		},
		calls: func(i int) string {
			return ev("content_block_start", fmt.Sprintf(`{"type":"content_block_start","index":%d,"content_block":{"type":"tool_use","id":"t%d","name":"shell","input":{}}}`, i, i)) +
				ev("content_block_stop", fmt.Sprintf(`{"type":"content_block_stop","index":%d}`, i))
		},
	}}
}

// A backend that never stops streaming text: the stream is abandoned (the request cancelled) once the text
// budget is spent, the events and Result.Text hold exactly what fits, and the error is a *LimitError.
func TestTextLimitStopsEndlessStream(t *testing.T) {
	t.Parallel()
	const limit = 10000
	for _, ec := range endlessCases() {
		t.Run(ec.family, func(t *testing.T) {
			gone := make(chan struct{})
			srv := newFakeBackend(t, endless(ec.contentType, ec.textHead, ec.text, gone))
			p := ec.provider(t, srv.URL, nil)
			var streamed strings.Builder
			res, err := p.Stream(t.Context(), Request{Messages: hi().Messages, Limits: Limits{MaxTextBytes: limit}}, func(ev Event) {
				streamed.WriteString(ev.Text)
			})
			var le *LimitError
			if !errors.As(err, &le) || le.What != LimitText || le.Limit != limit || !errors.Is(err, ErrLimit) {
				t.Fatalf("err = %v, want a text LimitError of %d", err, limit)
			}
			assertSafeError(t, err, ec.family+".test", testKey)
			if res.Text != streamed.String() {
				t.Fatalf("Result.Text (%d bytes) differs from the streamed events (%d bytes)", len(res.Text), streamed.Len())
			}
			if n := encodedLen(res.Text); n > limit || n < limit-32 {
				t.Fatalf("kept %d encoded bytes, want the budget %d filled to within one rune", n, limit)
			}
			if !utf8.ValidString(res.Text) {
				t.Fatal("the text was cut inside a rune")
			}
			waitClosed(t, gone, "the abandoned stream's request")
			if n := len(srv.requests()); n != 1 {
				t.Fatalf("%d attempts: a limit must not be retried", n)
			}
		})
	}
}

// Tool-call arguments that never end fail while they stream, as soon as they pass the budget.
func TestToolArgsLimitStopsEndlessArguments(t *testing.T) {
	t.Parallel()
	const limit = 4096
	for _, ec := range endlessCases() {
		t.Run(ec.family, func(t *testing.T) {
			gone := make(chan struct{})
			srv := newFakeBackend(t, endless(ec.contentType, ec.argsHead, ec.args, gone))
			p := ec.provider(t, srv.URL, nil)
			var calls int
			res, err := p.Stream(t.Context(), Request{Messages: hi().Messages, Limits: Limits{MaxToolArgBytes: limit}}, func(ev Event) {
				if ev.Type == EventToolCall {
					calls++
				}
			})
			var le *LimitError
			if !errors.As(err, &le) || le.What != LimitToolArgs || le.Limit != limit {
				t.Fatalf("err = %v, want a tool-arguments LimitError of %d", err, limit)
			}
			if calls != 0 || len(res.ToolCalls) != 0 {
				t.Fatalf("a call over the limit was emitted: %d events, %d in the result", calls, len(res.ToolCalls))
			}
			waitClosed(t, gone, "the abandoned stream's request")
		})
	}
}

// A response that keeps opening tool calls fails once it asks for more than MaxToolCalls.
func TestToolCallsLimit(t *testing.T) {
	t.Parallel()
	const limit = 5
	for _, ec := range endlessCases() {
		t.Run(ec.family, func(t *testing.T) {
			gone := make(chan struct{})
			head := ""
			if ec.family == FamilyAnthropic {
				head = ec.textHead[:strings.Index(ec.textHead, "event: content_block_start")]
			}
			srv := newFakeBackend(t, endless(ec.contentType, head, ec.calls, gone))
			p := ec.provider(t, srv.URL, nil)
			var calls int
			_, err := p.Stream(t.Context(), Request{Messages: hi().Messages, Limits: Limits{MaxToolCalls: limit}}, func(ev Event) {
				if ev.Type == EventToolCall {
					calls++
				}
			})
			var le *LimitError
			if !errors.As(err, &le) || le.What != LimitToolCalls || le.Limit != limit {
				t.Fatalf("err = %v, want a tool-calls LimitError of %d", err, limit)
			}
			if calls > limit {
				t.Fatalf("%d tool calls emitted, limit %d", calls, limit)
			}
			waitClosed(t, gone, "the abandoned stream's request")
		})
	}
}

// A negative text budget allows no text at all; zero means no limit.
func TestTextLimitNegativeAllowsNothing(t *testing.T) {
	t.Parallel()
	fc := httpFamilies[0]
	srv := newFakeBackend(t, streamFixture(t, fc.contentType, fc.fixture))
	p := fc.provider(t, srv.URL, nil)
	res, err := p.Stream(t.Context(), Request{Messages: hi().Messages, Limits: Limits{MaxTextBytes: -1}}, nil)
	var le *LimitError
	if !errors.As(err, &le) || res.Text != "" {
		t.Fatalf("res.Text %q, err %v: want no text and a LimitError", res.Text, err)
	}
	res, err = p.Stream(t.Context(), hi(), nil)
	if err != nil || res.Text != "Hello, world!" {
		t.Fatalf("zero limits: %q, %v", res.Text, err)
	}
}

// The echo provider honours the text budget too.
func TestEchoTextLimit(t *testing.T) {
	t.Parallel()
	p, _ := New(Settings{Family: FamilyEcho})
	res, err := p.Stream(t.Context(), Request{Messages: []Message{{Role: RoleUser, Content: strings.Repeat("word ", 1000)}},
		Limits: Limits{MaxTextBytes: 100}}, nil)
	var le *LimitError
	if !errors.As(err, &le) || len(res.Text) != 100 {
		t.Fatalf("echo: %d bytes, %v", len(res.Text), err)
	}
}

func TestEncodedLen(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]int{
		"":           0,
		"abc":        3,
		"a\"b":       4,
		"\\":         2,
		"\n\t\r":     6,
		"\x01":       6,
		"é":          2,
		"\u2028":     6,
		"\xff":       6,
		"<&>":        3,
		"\x7f":       1,
		"日本":         6,
		"a\xffb\x00": 14,
	} {
		if got := encodedLen(in); got != want {
			t.Errorf("encodedLen(%q) = %d, want %d", in, got, want)
		}
	}
}

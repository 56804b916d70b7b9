package provider

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
)

// One eventDecoder over a sequence of events gives, for each, what json.Unmarshal gives into a zero value: the
// same value, or the same error (and a valid event after an invalid one still decodes).
func TestEventDecoderMatchesUnmarshal(t *testing.T) {
	t.Parallel()
	events := []string{
		`{"model":"m","choices":[{"delta":{"content":"a"},"finish_reason":null}]}`,
		`{"model":"m","choices":[{"delta":{},"finish_reason":"stop"}]}`,
		`{"choices":[{"delta":{"content":"b"}}]}  ` + "\t\r\n",
		`{"choices":[{"delta":{"content":"c"}}]}`,
		`{"choices":[{"delta":{"content":"d"}}]} {"choices":[]}`,
		`{"choices":[{"delta":{"content":"e"}}]}`,
		`{"choices":[{"delta":{"content":"f"`,
		`{"choices":[{"delta":{"content":"g"}}]}`,
		`{"choices":"not an array","model":"m2"}`,
		`{"choices":[{"delta":{"tool_calls":[{"index":1,"id":"x","function":{"name":"n","arguments":"{}"}}]}}]}`,
		`{"choices":[]}`,
		`{"choices":null,"usage":{"prompt_tokens":3,"completion_tokens":4}}`,
		`[]`, `nul`, `  `, ``, `{"error":{"message":"boom","type":"t"}}`,
		`{"choices":[{"delta":{"content":"h"}},{"delta":{"reasoning_content":"r"}}]}`,
		`{"choices":[{"delta":{"content":"i"}}]}`,
	}
	var dec eventDecoder
	var c oaiChunk
	for i, ev := range events {
		choices := c.Choices[:cap(c.Choices)]
		clear(choices)
		c = oaiChunk{Choices: choices[:0]}
		err := dec.decode([]byte(ev), &c)
		var want oaiChunk
		wantErr := json.Unmarshal([]byte(ev), &want)
		if fmt.Sprint(err) != fmt.Sprint(wantErr) {
			t.Fatalf("event %d %q: error %v, json.Unmarshal's %v", i, ev, err, wantErr)
		}
		if wantErr == nil && !reflect.DeepEqual(normChoices(c), normChoices(want)) {
			t.Fatalf("event %d %q: decoded %+v, json.Unmarshal %+v", i, ev, c, want)
		}
	}
}

// normChoices treats an empty choices slice like a nil one (reused capacity) for comparison.
func normChoices(c oaiChunk) oaiChunk {
	if len(c.Choices) == 0 {
		c.Choices = nil
	}
	return c
}

// Parsing a stream of content chunks allocates, per event, the delta's text and the model name it repeats: the
// SSE lines, the JSON decoder and the chunk are reused.
func TestOpenAIParseAllocationsPerEvent(t *testing.T) {
	const n = 200
	body := openAIStreamBody(n)
	p := newOpenAI(Settings{Family: FamilyOpenAI, Alias: "fake", URI: "http://127.0.0.1:1", Model: "m"})
	var r bytes.Reader
	events := 0
	run := func() {
		r.Reset(body)
		if _, err := p.parse(&r, "m", newBudget("fake", Limits{}), func(Event) { events++ }); err != nil {
			t.Fatal(err)
		}
	}
	perStream := testing.AllocsPerRun(20, run)
	if perEvent := perStream / n; perEvent > 2.5 {
		t.Fatalf("parsing allocated %.2f times per event (%.0f per stream of %d), want at most 2 (text and model) "+
			"plus a fixed number per stream", perEvent, perStream, n)
	}
	if !strings.Contains(string(body), "tok199 ") || events == 0 {
		t.Fatal("no events parsed")
	}
}

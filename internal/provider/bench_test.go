package provider

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"testing"
)

// openAIStreamBody builds an SSE body of n content chunks followed by the usage chunk and [DONE].
func openAIStreamBody(n int) []byte {
	var b bytes.Buffer
	for i := range n {
		fmt.Fprintf(&b, `data: {"id":"chatcmpl-b","object":"chat.completion.chunk","created":1718000000,"model":"gpt-4o-mini","choices":[{"index":0,"delta":{"content":"tok%d "},"logprobs":null,"finish_reason":null}],"usage":null}`+"\n\n", i)
	}
	b.WriteString(`data: {"id":"chatcmpl-b","object":"chat.completion.chunk","created":1718000000,"model":"gpt-4o-mini","choices":[{"index":0,"delta":{},"finish_reason":"stop"}],"usage":null}` + "\n\n")
	b.WriteString(`data: {"id":"chatcmpl-b","object":"chat.completion.chunk","created":1718000000,"model":"gpt-4o-mini","choices":[],"usage":{"prompt_tokens":10,"completion_tokens":500,"total_tokens":510}}` + "\n\n")
	b.WriteString("data: [DONE]\n\n")
	return b.Bytes()
}

// BenchmarkOpenAIStream compares a full Stream call (request encoding, HTTP, SSE and JSON parsing, events)
// with a baseline that only POSTs and reads the same bytes, so the parsing overhead shows side by side.
func BenchmarkOpenAIStream(b *testing.B) {
	for _, n := range []int{50, 500} {
		body := openAIStreamBody(n)
		srv := newFakeBackend(b, streamFrames("text/event-stream", body))
		b.Run(fmt.Sprintf("baseline_read/chunks=%d", n), func(b *testing.B) {
			b.SetBytes(int64(len(body)))
			client := srv.Client()
			for b.Loop() {
				resp, err := client.Post(srv.URL+"/chat/completions", "application/json", bytes.NewReader([]byte(`{}`)))
				if err != nil {
					b.Fatal(err)
				}
				got, err := io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if err != nil || got != int64(len(body)) || resp.StatusCode != http.StatusOK {
					b.Fatalf("read %d bytes, status %d: %v", got, resp.StatusCode, err)
				}
			}
		})
		b.Run(fmt.Sprintf("stream_parse/chunks=%d", n), func(b *testing.B) {
			b.SetBytes(int64(len(body)))
			p, err := New(Settings{Family: "openai", URI: srv.URL, Model: "gpt-4o-mini", Client: srv.Client()})
			if err != nil {
				b.Fatal(err)
			}
			req := Request{Messages: []Message{{Role: RoleUser, Content: "go"}}}
			for b.Loop() {
				events := 0
				res, err := p.Stream(b.Context(), req, func(Event) { events++ })
				if err != nil || events != n || res.Usage.OutputTokens != 500 {
					b.Fatalf("events %d usage %+v: %v", events, res.Usage, err)
				}
			}
		})
	}
}

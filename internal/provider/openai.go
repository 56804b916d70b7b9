package provider

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"
)

// openAI speaks the chat-completions streaming API (OpenAI and compatible servers).
type openAI struct{ httpBase }

func newOpenAI(s Settings) *openAI {
	return &openAI{newHTTPBase(s, FamilyOpenAI, DefaultOpenAIURI)}
}

type oaiFunction struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters,omitempty"`
	Arguments   *string         `json:"arguments,omitempty"`
}

type oaiTool struct {
	Type     string      `json:"type"`
	Function oaiFunction `json:"function"`
}

type oaiToolCall struct {
	ID       string      `json:"id"`
	Type     string      `json:"type"`
	Function oaiFunction `json:"function"`
}

type oaiMessage struct {
	Role       string        `json:"role"`
	Content    *string       `json:"content"`
	ToolCalls  []oaiToolCall `json:"tool_calls,omitempty"`
	ToolCallID string        `json:"tool_call_id,omitempty"`
}

type oaiRequest struct {
	Model         string       `json:"model"`
	Messages      []oaiMessage `json:"messages"`
	Stream        bool         `json:"stream"`
	StreamOptions struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options"`
	Tools       []oaiTool `json:"tools,omitempty"`
	Temperature *float64  `json:"temperature,omitempty"`
	MaxTokens   int       `json:"max_tokens,omitempty"`
}

type oaiChunk struct {
	Model   string `json:"model"`
	Choices []struct {
		Delta struct {
			Content          string `json:"content"`
			ReasoningContent string `json:"reasoning_content"`
			ToolCalls        []struct {
				Index    int    `json:"index"`
				ID       string `json:"id"`
				Function struct {
					Name      string `json:"name"`
					Arguments string `json:"arguments"`
				} `json:"function"`
			} `json:"tool_calls"`
		} `json:"delta"`
		FinishReason *string `json:"finish_reason"`
	} `json:"choices"`
	Usage *struct {
		PromptTokens     int `json:"prompt_tokens"`
		CompletionTokens int `json:"completion_tokens"`
	} `json:"usage"`
	Error *struct {
		Message string `json:"message"`
		Type    string `json:"type"`
	} `json:"error"`
}

func (p *openAI) buildBody(req Request) ([]byte, string, error) {
	model := modelFor(req, p.s)
	body := oaiRequest{Model: model, Stream: true, Temperature: p.s.Temperature, MaxTokens: p.s.MaxTokens}
	body.StreamOptions.IncludeUsage = true
	for _, m := range req.Messages {
		om := oaiMessage{Role: m.Role}
		content := m.Content
		switch m.Role {
		case RoleAssistant:
			for _, tc := range m.ToolCalls {
				args := string(argsObject(tc.Arguments))
				om.ToolCalls = append(om.ToolCalls, oaiToolCall{ID: tc.ID, Type: "function",
					Function: oaiFunction{Name: tc.Name, Arguments: &args}})
			}
			if content != "" || len(om.ToolCalls) == 0 {
				om.Content = &content
			}
		case RoleTool:
			om.ToolCallID = m.ToolCallID
			om.Content = &content
		default:
			om.Content = &content
		}
		body.Messages = append(body.Messages, om)
	}
	body.Tools = oaiTools(req.Tools)
	b, err := json.Marshal(body)
	if err != nil {
		return nil, "", fmt.Errorf("provider: %s: encode request: %w", p.alias, err)
	}
	return b, model, nil
}

// oaiTools is the function-tool list of the OpenAI wire format, which Ollama's native API shares.
func oaiTools(specs []ToolSpec) []oaiTool {
	var out []oaiTool
	for _, t := range specs {
		out = append(out, oaiTool{Type: "function", Function: oaiFunction{
			Name: t.Name, Description: t.Description, Parameters: schemaOrDefault(t.Parameters)}})
	}
	return out
}

// Stream implements Provider.
func (p *openAI) Stream(ctx context.Context, req Request, emit func(Event)) (Result, error) {
	body, model, err := p.buildBody(req)
	if err != nil {
		return Result{}, err
	}
	headers := map[string]string{"Accept": "text/event-stream"}
	if p.s.APIKey != "" {
		headers["Authorization"] = "Bearer " + p.s.APIKey
	}
	return p.streamPOST(ctx, emit, p.s.URI+"/chat/completions", body, headers, func(r io.Reader, emit func(Event)) (Result, error) {
		return p.parse(r, model, newBudget(p.alias, req.Limits), emit)
	})
}

// oaiPending is a tool call being assembled from deltas.
type oaiPending struct {
	index    int
	id, name string
	args     strings.Builder
}

// parse reads a chat-completions SSE stream. Tool calls are emitted once the stream finishes, when their
// argument fragments are complete; bud is checked on every fragment.
func (p *openAI) parse(r io.Reader, model string, bud *budget, emit func(Event)) (Result, error) {
	res := Result{Usage: Usage{Model: model}}
	var text strings.Builder
	pending := map[int]*oaiPending{}
	finished, done := false, false
	sse := newSSEReader(r)
	var dec eventDecoder
	var c oaiChunk // reused: its choices' array is kept (cleared) from one event to the next
	flush := func() {
		calls := make([]*oaiPending, 0, len(pending))
		for _, pc := range pending {
			calls = append(calls, pc)
		}
		sort.Slice(calls, func(i, j int) bool { return calls[i].index < calls[j].index })
		for _, pc := range calls {
			id := pc.id
			if id == "" {
				id = fmt.Sprintf("call_%d", pc.index)
			}
			tc := ToolCall{ID: id, Name: pc.name, Arguments: normalizeArgs([]byte(pc.args.String()))}
			res.ToolCalls = append(res.ToolCalls, tc)
			emit(Event{Type: EventToolCall, ToolCall: &tc})
		}
		clear(pending)
	}
	for !done {
		_, data, err := sse.next()
		if err == io.EOF {
			break
		}
		if err != nil {
			res.Text = text.String()
			return res, p.readErr(err)
		}
		if bytes.Equal(bytes.TrimSpace(data), []byte("[DONE]")) {
			done = true
			break
		}
		choices := c.Choices[:cap(c.Choices)]
		clear(choices)
		c = oaiChunk{Choices: choices[:0]}
		if err := dec.decode(data, &c); err != nil {
			res.Text = text.String()
			return res, p.badChunk(err)
		}
		if c.Error != nil {
			res.Text = text.String()
			return res, fmt.Errorf("provider: %s: %w: %s", p.alias, ErrStream, p.scrub(c.Error.Message))
		}
		if c.Model != "" {
			res.Usage.Model = c.Model
		}
		if c.Usage != nil {
			res.Usage.InputTokens = c.Usage.PromptTokens
			res.Usage.OutputTokens = c.Usage.CompletionTokens
		}
		for _, ch := range c.Choices {
			d := ch.Delta
			if d.ReasoningContent != "" {
				part, lerr := bud.takeText(d.ReasoningContent)
				if part != "" {
					emit(Event{Type: EventThought, Text: part})
				}
				if lerr != nil {
					res.Text = text.String()
					return res, lerr
				}
			}
			if d.Content != "" {
				part, lerr := bud.takeText(d.Content)
				if part != "" {
					text.WriteString(part)
					emit(Event{Type: EventText, Text: part})
				}
				if lerr != nil {
					res.Text = text.String()
					return res, lerr
				}
			}
			for _, f := range d.ToolCalls {
				pc := pending[f.Index]
				if pc == nil {
					if err := bud.checkCalls(len(res.ToolCalls) + len(pending) + 1); err != nil {
						res.Text = text.String()
						return res, err
					}
					pc = &oaiPending{index: f.Index}
					pending[f.Index] = pc
				}
				// The name counts too: some servers send it in fragments, and those must not grow unbounded either.
				if err := bud.checkArgs(pc.args.Len() + len(f.Function.Arguments) + len(pc.name) + len(f.Function.Name)); err != nil {
					res.Text = text.String()
					return res, err
				}
				if f.ID != "" {
					pc.id = f.ID
				}
				if f.Function.Name != "" && f.Function.Name != pc.name {
					pc.name += f.Function.Name // some servers repeat the whole name in every fragment
				}
				pc.args.WriteString(f.Function.Arguments)
			}
			if ch.FinishReason != nil && *ch.FinishReason != "" {
				res.StopReason = *ch.FinishReason
				finished = true
				flush()
			}
		}
	}
	res.Text = text.String()
	if !done && !finished {
		return res, p.incomplete()
	}
	flush()
	return res, nil
}

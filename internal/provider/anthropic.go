package provider

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
)

// anthropic speaks the Messages API SSE stream.
type anthropic struct{ httpBase }

func newAnthropic(s Settings) *anthropic {
	return &anthropic{newHTTPBase(s, FamilyAnthropic, DefaultAnthropicURI)}
}

type antBlock struct {
	Type      string          `json:"type"`
	Text      string          `json:"text,omitempty"`
	ID        string          `json:"id,omitempty"`
	Name      string          `json:"name,omitempty"`
	Input     json.RawMessage `json:"input,omitempty"`
	ToolUseID string          `json:"tool_use_id,omitempty"`
	Content   string          `json:"content,omitempty"`
}

type antMessage struct {
	Role    string     `json:"role"`
	Content []antBlock `json:"content"`
}

type antTool struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	InputSchema json.RawMessage `json:"input_schema"`
}

type antRequest struct {
	Model       string       `json:"model"`
	MaxTokens   int          `json:"max_tokens"`
	System      string       `json:"system,omitempty"`
	Messages    []antMessage `json:"messages"`
	Tools       []antTool    `json:"tools,omitempty"`
	Temperature *float64     `json:"temperature,omitempty"`
	Stream      bool         `json:"stream"`
}

type antEvent struct {
	Type    string `json:"type"`
	Index   int    `json:"index"`
	Message struct {
		Model string   `json:"model"`
		Usage antUsage `json:"usage"`
	} `json:"message"`
	ContentBlock struct {
		Type string `json:"type"`
		ID   string `json:"id"`
		Name string `json:"name"`
		Text string `json:"text"`
	} `json:"content_block"`
	Delta struct {
		Type        string `json:"type"`
		Text        string `json:"text"`
		PartialJSON string `json:"partial_json"`
		Thinking    string `json:"thinking"`
		StopReason  string `json:"stop_reason"`
	} `json:"delta"`
	Usage *antUsage `json:"usage"`
	Error struct {
		Type    string `json:"type"`
		Message string `json:"message"`
	} `json:"error"`
}

type antUsage struct {
	InputTokens  int `json:"input_tokens"`
	OutputTokens int `json:"output_tokens"`
}

// buildBody maps the conversation onto Anthropic's shape: system messages move to "system", tool results
// become user tool_result blocks, assistant tool calls become tool_use blocks, and consecutive messages of
// the same role merge (the API wants all results of one assistant turn in a single user message).
func (p *anthropic) buildBody(req Request) ([]byte, string, error) {
	model := modelFor(req, p.s)
	body := antRequest{Model: model, MaxTokens: p.s.MaxTokens, Temperature: p.s.Temperature, Stream: true}
	if body.MaxTokens <= 0 {
		body.MaxTokens = DefaultAnthropicMaxTokens
	}
	var system []string
	for _, m := range req.Messages {
		var role string
		var blocks []antBlock
		switch m.Role {
		case RoleSystem:
			if m.Content != "" {
				system = append(system, m.Content)
			}
			continue
		case RoleTool:
			role = RoleUser
			blocks = []antBlock{{Type: "tool_result", ToolUseID: m.ToolCallID, Content: m.Content}}
		case RoleAssistant:
			role = RoleAssistant
			if m.Content != "" {
				blocks = append(blocks, antBlock{Type: "text", Text: m.Content})
			}
			for _, tc := range m.ToolCalls {
				blocks = append(blocks, antBlock{Type: "tool_use", ID: tc.ID, Name: tc.Name,
					Input: argsObject(tc.Arguments)})
			}
		default:
			role = RoleUser
			if m.Content != "" {
				blocks = []antBlock{{Type: "text", Text: m.Content}}
			}
		}
		if len(blocks) == 0 {
			continue // the API rejects empty text blocks and empty messages
		}
		if n := len(body.Messages); n > 0 && body.Messages[n-1].Role == role {
			body.Messages[n-1].Content = append(body.Messages[n-1].Content, blocks...)
			continue
		}
		body.Messages = append(body.Messages, antMessage{Role: role, Content: blocks})
	}
	body.System = strings.Join(system, "\n\n")
	for _, t := range req.Tools {
		body.Tools = append(body.Tools, antTool{Name: t.Name, Description: t.Description,
			InputSchema: schemaOrDefault(t.Parameters)})
	}
	b, err := json.Marshal(body)
	if err != nil {
		return nil, "", fmt.Errorf("provider: %s: encode request: %w", p.alias, err)
	}
	return b, model, nil
}

// Stream implements Provider.
func (p *anthropic) Stream(ctx context.Context, req Request, emit func(Event)) (Result, error) {
	body, model, err := p.buildBody(req)
	if err != nil {
		return Result{}, err
	}
	headers := map[string]string{"Accept": "text/event-stream", "anthropic-version": anthropicVersion}
	if p.s.APIKey != "" {
		headers["x-api-key"] = p.s.APIKey
	}
	return p.streamPOST(ctx, emit, p.s.URI+"/v1/messages", body, headers, func(r io.Reader, emit func(Event)) (Result, error) {
		return p.parse(r, model, newBudget(p.alias, req.Limits), emit)
	})
}

// antPending is a tool_use block being assembled.
type antPending struct {
	id, name string
	input    strings.Builder
}

// parse reads the Messages SSE stream; a tool_use block is emitted at its content_block_stop. bud is checked
// on every text and input delta.
func (p *anthropic) parse(r io.Reader, model string, bud *budget, emit func(Event)) (Result, error) {
	res := Result{Usage: Usage{Model: model}}
	var text strings.Builder
	tools := map[int]*antPending{}
	sse := newSSEReader(r)
	fail := func(err error) (Result, error) {
		res.Text = text.String()
		return res, err
	}
	var dec eventDecoder
	var ev antEvent // reused, zeroed for each event
	calls := 0      // tool_use blocks opened
	// takeText emits what fits of s as an event of type typ; false means the budget is spent (see limitErr).
	var limitErr error
	takeText := func(typ EventType, s string) bool {
		part, lerr := bud.takeText(s)
		if part != "" {
			if typ == EventText {
				text.WriteString(part)
			}
			emit(Event{Type: typ, Text: part})
		}
		limitErr = lerr
		return lerr == nil
	}
	for {
		_, data, err := sse.next()
		if err == io.EOF {
			return fail(p.incomplete())
		}
		if err != nil {
			return fail(p.readErr(err))
		}
		ev = antEvent{}
		if err := dec.decode(data, &ev); err != nil {
			return fail(p.badChunk(err))
		}
		switch ev.Type {
		case "message_start":
			if ev.Message.Model != "" {
				res.Usage.Model = ev.Message.Model
			}
			res.Usage.InputTokens = ev.Message.Usage.InputTokens
			res.Usage.OutputTokens = ev.Message.Usage.OutputTokens
		case "content_block_start":
			switch ev.ContentBlock.Type {
			case "tool_use":
				calls++
				if err := bud.checkCalls(calls); err != nil {
					return fail(err)
				}
				tools[ev.Index] = &antPending{id: ev.ContentBlock.ID, name: ev.ContentBlock.Name}
			case "text":
				if !takeText(EventText, ev.ContentBlock.Text) {
					return fail(limitErr)
				}
			}
		case "content_block_delta":
			switch ev.Delta.Type {
			case "text_delta":
				if !takeText(EventText, ev.Delta.Text) {
					return fail(limitErr)
				}
			case "thinking_delta":
				if !takeText(EventThought, ev.Delta.Thinking) {
					return fail(limitErr)
				}
			case "input_json_delta":
				if pt := tools[ev.Index]; pt != nil {
					if err := bud.checkArgs(pt.input.Len() + len(ev.Delta.PartialJSON)); err != nil {
						return fail(err)
					}
					pt.input.WriteString(ev.Delta.PartialJSON)
				}
			}
		case "content_block_stop":
			if pt := tools[ev.Index]; pt != nil {
				delete(tools, ev.Index)
				tc := ToolCall{ID: pt.id, Name: pt.name, Arguments: normalizeArgs([]byte(pt.input.String()))}
				res.ToolCalls = append(res.ToolCalls, tc)
				emit(Event{Type: EventToolCall, ToolCall: &tc})
			}
		case "message_delta":
			if ev.Delta.StopReason != "" {
				res.StopReason = ev.Delta.StopReason
			}
			if ev.Usage != nil {
				res.Usage.OutputTokens = ev.Usage.OutputTokens
				if ev.Usage.InputTokens > 0 {
					res.Usage.InputTokens = ev.Usage.InputTokens
				}
			}
		case "message_stop":
			res.Text = text.String()
			return res, nil
		case "error":
			return fail(fmt.Errorf("provider: %s: %w: %s: %s", p.alias, ErrStream, ev.Error.Type,
				p.scrub(ev.Error.Message)))
		}
	}
}

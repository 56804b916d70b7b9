package provider

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
)

// olLineSlack is what an NDJSON line may hold besides tool-call arguments (the envelope, a text chunk).
const olLineSlack = 64 << 10

// ollama speaks Ollama's native /api/chat NDJSON stream.
type ollama struct{ httpBase }

func newOllama(s Settings) *ollama {
	return &ollama{newHTTPBase(s, FamilyOllama, DefaultOllamaURI)}
}

type olToolCall struct {
	ID       string `json:"id,omitempty"`
	Function struct {
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
	} `json:"function"`
}

type olMessage struct {
	Role      string       `json:"role"`
	Content   string       `json:"content"`
	Thinking  string       `json:"thinking,omitempty"`
	ToolCalls []olToolCall `json:"tool_calls,omitempty"`
	ToolName  string       `json:"tool_name,omitempty"`
}

type olOptions struct {
	Temperature *float64 `json:"temperature,omitempty"`
	NumPredict  int      `json:"num_predict,omitempty"`
}

type olRequest struct {
	Model    string      `json:"model"`
	Messages []olMessage `json:"messages"`
	Stream   bool        `json:"stream"`
	Tools    []oaiTool   `json:"tools,omitempty"` // same shape as OpenAI's
	Options  *olOptions  `json:"options,omitempty"`
}

type olChunk struct {
	Model           string    `json:"model"`
	Message         olMessage `json:"message"`
	Done            bool      `json:"done"`
	DoneReason      string    `json:"done_reason"`
	PromptEvalCount int       `json:"prompt_eval_count"`
	EvalCount       int       `json:"eval_count"`
	Error           string    `json:"error"`
}

func (p *ollama) buildBody(req Request) ([]byte, string, error) {
	model := modelFor(req, p.s)
	body := olRequest{Model: model, Stream: true}
	if p.s.Temperature != nil || p.s.MaxTokens > 0 {
		body.Options = &olOptions{Temperature: p.s.Temperature, NumPredict: p.s.MaxTokens}
	}
	names := map[string]string{} // tool call id -> tool name, to label tool results
	for _, m := range req.Messages {
		om := olMessage{Role: m.Role, Content: m.Content}
		switch m.Role {
		case RoleAssistant:
			for _, tc := range m.ToolCalls {
				var c olToolCall
				c.Function.Name = tc.Name
				c.Function.Arguments = argsObject(tc.Arguments)
				om.ToolCalls = append(om.ToolCalls, c)
				names[tc.ID] = tc.Name
			}
		case RoleTool:
			om.ToolName = m.Name
			if om.ToolName == "" {
				om.ToolName = names[m.ToolCallID]
			}
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

// Stream implements Provider.
func (p *ollama) Stream(ctx context.Context, req Request, emit func(Event)) (Result, error) {
	body, model, err := p.buildBody(req)
	if err != nil {
		return Result{}, err
	}
	headers := map[string]string{"Accept": "application/x-ndjson"}
	if p.s.APIKey != "" { // hosted Ollama and proxies in front of it take a bearer token
		headers["Authorization"] = "Bearer " + p.s.APIKey
	}
	return p.streamPOST(ctx, emit, p.s.URI+"/api/chat", body, headers, func(r io.Reader, emit func(Event)) (Result, error) {
		return p.parse(r, model, req.Limits, emit)
	})
}

// parse reads the NDJSON stream. Ollama sends each tool call whole, so it is emitted as soon as it arrives,
// with a synthesized id when the server gives none. Since a call arrives in one line, a line longer than the
// tool calls allowed could carry is cut off as tool arguments over the limit, before it is buffered whole.
func (p *ollama) parse(r io.Reader, model string, lim Limits, emit func(Event)) (Result, error) {
	res := Result{Usage: Usage{Model: model}}
	var text strings.Builder
	bud := newBudget(p.alias, lim)
	lines := newLineReader(r)
	if lim.MaxToolArgBytes > 0 {
		lines.max = min(maxLineBytes, lim.MaxToolArgBytes*max(1, lim.MaxToolCalls)+olLineSlack)
	}
	for {
		line, err := lines.readLine()
		if err == io.EOF {
			res.Text = text.String()
			return res, p.incomplete()
		}
		if errors.Is(err, errLineTooLong) && lim.MaxToolArgBytes > 0 {
			res.Text = text.String()
			return res, bud.fail(LimitToolArgs, lim.MaxToolArgBytes)
		}
		if err != nil {
			res.Text = text.String()
			return res, p.readErr(err)
		}
		line = bytes.TrimSpace(line)
		if len(line) == 0 {
			continue
		}
		var c olChunk
		if err := json.Unmarshal(line, &c); err != nil {
			res.Text = text.String()
			return res, p.badChunk(err)
		}
		if c.Error != "" {
			res.Text = text.String()
			return res, fmt.Errorf("provider: %s: %w: %s", p.alias, ErrStream, p.scrub(c.Error))
		}
		if c.Model != "" {
			res.Usage.Model = c.Model
		}
		if c.Message.Thinking != "" {
			part, lerr := bud.takeText(c.Message.Thinking)
			if part != "" {
				emit(Event{Type: EventThought, Text: part})
			}
			if lerr != nil {
				res.Text = text.String()
				return res, lerr
			}
		}
		if c.Message.Content != "" {
			part, lerr := bud.takeText(c.Message.Content)
			if part != "" {
				text.WriteString(part)
				emit(Event{Type: EventText, Text: part})
			}
			if lerr != nil {
				res.Text = text.String()
				return res, lerr
			}
		}
		for _, oc := range c.Message.ToolCalls {
			err := bud.checkCalls(len(res.ToolCalls) + 1)
			if err == nil {
				err = bud.checkArgs(len(oc.Function.Arguments) + len(oc.Function.Name))
			}
			if err != nil {
				res.Text = text.String()
				return res, err
			}
			id := oc.ID
			if id == "" {
				id = fmt.Sprintf("ollama-call-%d", len(res.ToolCalls)+1)
			}
			tc := ToolCall{ID: id, Name: oc.Function.Name, Arguments: olArgs(oc.Function.Arguments)}
			res.ToolCalls = append(res.ToolCalls, tc)
			emit(Event{Type: EventToolCall, ToolCall: &tc})
		}
		if c.Done {
			res.Text = text.String()
			res.Usage.InputTokens = c.PromptEvalCount
			res.Usage.OutputTokens = c.EvalCount
			res.StopReason = c.DoneReason
			if res.StopReason == "" {
				res.StopReason = "stop"
			}
			return res, nil
		}
	}
}

// olArgs accepts the object Ollama sends, or a JSON string holding an object as some models produce.
func olArgs(raw json.RawMessage) json.RawMessage {
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		return normalizeArgs([]byte(s))
	}
	return normalizeArgs(raw)
}

package provider

import (
	"context"
	"fmt"
	"strings"
	"unicode"
)

// echo is the offline demo provider: it repeats the last user message, streamed word by word, and follows the
// test hooks described in the package doc. It never touches the network.
type echo struct {
	alias string
	model string
}

func newEcho(s Settings) *echo {
	model := s.Model
	if model == "" {
		model = "echo"
	}
	return &echo{alias: FamilyEcho + "." + s.Alias, model: model}
}

// Alias returns "echo.<alias>".
func (e *echo) Alias() string { return e.alias }

// Stream implements Provider deterministically. Usage counts words: every message's content as input, the
// reply (or the tool call's name and arguments) as output.
func (e *echo) Stream(ctx context.Context, req Request, emit func(Event)) (Result, error) {
	if emit == nil {
		emit = func(Event) {}
	}
	model := req.Model
	if model == "" {
		model = e.model
	}
	res := Result{Usage: Usage{Model: model}, StopReason: "stop"}
	for _, m := range req.Messages {
		res.Usage.InputTokens += countWords(m.Content)
	}
	if err := ctx.Err(); err != nil {
		return res, fmt.Errorf("provider: %s: %w", e.alias, err)
	}
	reply := ""
	if n := len(req.Messages); n > 0 {
		last := req.Messages[n-1]
		switch {
		case last.Role == RoleTool:
			reply = fmt.Sprintf("tool %s returned: %s", toolNameFor(req.Messages, last), last.Content)
		case last.Role == RoleUser:
			if tc, ok := parseToolHook(last.Content, req.Messages); ok {
				if err := newBudget(e.alias, req.Limits).checkArgs(len(tc.Arguments)); err != nil {
					return res, err
				}
				res.ToolCalls = []ToolCall{tc}
				res.StopReason = "tool_calls"
				res.Usage.OutputTokens = countWords(tc.Name) + countWords(string(tc.Arguments))
				emit(Event{Type: EventToolCall, ToolCall: &tc})
				return res, nil
			}
			reply = last.Content
		default:
			reply = lastUserText(req.Messages)
		}
	}
	var text strings.Builder
	bud := newBudget(e.alias, req.Limits)
	for _, chunk := range splitWords(reply) {
		if err := ctx.Err(); err != nil {
			res.Text = text.String()
			return res, fmt.Errorf("provider: %s: %w", e.alias, err)
		}
		part, lerr := bud.takeText(chunk)
		if part != "" {
			text.WriteString(part)
			emit(Event{Type: EventText, Text: part})
		}
		if lerr != nil {
			res.Text = text.String()
			return res, lerr
		}
	}
	res.Text = text.String()
	res.Usage.OutputTokens = countWords(reply)
	return res, nil
}

// parseToolHook recognizes "/tool <name> [<json-args>]". The id counts the tool calls already in the
// conversation so ids stay unique across a session: echo-call-1, echo-call-2, ...
func parseToolHook(content string, history []Message) (ToolCall, bool) {
	content = strings.TrimSpace(content)
	// A heartbeat task's prompt is "[Heartbeat Task | <priority>] <task>": a task written as a hook is one too.
	if rest, ok := strings.CutPrefix(content, "[Heartbeat Task | "); ok {
		if _, task, ok := strings.Cut(rest, "] "); ok {
			content = strings.TrimSpace(task)
		}
	}
	rest, ok := strings.CutPrefix(content, "/tool ")
	if !ok {
		return ToolCall{}, false
	}
	rest = strings.TrimSpace(rest)
	name, args, _ := strings.Cut(rest, " ")
	if name == "" {
		return ToolCall{}, false
	}
	n := 1
	for _, m := range history {
		n += len(m.ToolCalls)
	}
	return ToolCall{ID: fmt.Sprintf("echo-call-%d", n), Name: name, Arguments: normalizeArgs([]byte(args))}, true
}

// toolNameFor names the tool whose result msg is, from msg.Name or the assistant call it answers.
func toolNameFor(history []Message, msg Message) string {
	if msg.Name != "" {
		return msg.Name
	}
	for i := len(history) - 1; i >= 0; i-- {
		for _, tc := range history[i].ToolCalls {
			if tc.ID == msg.ToolCallID {
				return tc.Name
			}
		}
	}
	return "unknown"
}

func lastUserText(history []Message) string {
	for i := len(history) - 1; i >= 0; i-- {
		if history[i].Role == RoleUser {
			return history[i].Content
		}
	}
	return ""
}

// splitWords cuts s into chunks of one word plus its trailing whitespace (leading whitespace stays with the
// first chunk), so the chunks concatenate to exactly s.
func splitWords(s string) []string {
	var chunks []string
	start := 0
	inSpace := true // treat leading whitespace as belonging to the first word's chunk
	seenWord := false
	for i, r := range s {
		space := unicode.IsSpace(r)
		if !space && inSpace && seenWord {
			chunks = append(chunks, s[start:i])
			start = i
		}
		if !space {
			seenWord = true
		}
		inSpace = space
	}
	if start < len(s) {
		chunks = append(chunks, s[start:])
	}
	return chunks
}

func countWords(s string) int { return len(strings.Fields(s)) }

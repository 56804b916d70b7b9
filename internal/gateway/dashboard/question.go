package dashboard

import (
	"errors"
	"slices"
)

// Question frames of /ws/chat (ours: upstream's WebSocket channel declines ask_user). When a turn asks the
// person something (ask_user: a choice, several choices or free text), the socket sends
//
//	{"type":"question","request_id":"q1","message":"...","kind":"choice"|"choices"|"text","choices":[{"value":"choice-0","label":"..."}]}
//
// and the client answers
//
//	{"type":"question_response","request_id":"q1","action":"accept"|"decline"|"cancel","answer":"choice-0"|"free text","choices":["choice-0",...]}
//
// The message and labels were escaped by the agent (internal/visible); values are the agent's "choice-<i>".

// Question kinds: one choice, one or more choices, free text.
const (
	QuestionChoice  = "choice"
	QuestionChoices = "choices"
	QuestionText    = "text"
)

// Question is a question the chat page can show.
type Question struct {
	Kind    string
	Choices []QuestionOption
}

// QuestionOption is one choice: the value to answer with and the label to show.
type QuestionOption struct {
	Value string `json:"value"`
	Label string `json:"label"`
}

// MaxQuestionAnswer bounds a free-text answer (bytes); a frame is at most 256 KiB anyway.
const MaxQuestionAnswer = 64 << 10

// ErrQuestionForm is a form the chat cannot show (not one of the agent's three shapes).
var ErrQuestionForm = errors.New("ws/chat: not a question form this socket can show")

// ParseQuestion reads the agent's requested schema: {choice: {oneOf}}, {choices: {items: {anyOf}}} or
// {answer: {type: string}}.
func ParseQuestion(schema map[string]any) (Question, error) {
	props, _ := schema["properties"].(map[string]any)
	if len(props) != 1 {
		return Question{}, ErrQuestionForm
	}
	if p, ok := props["choice"].(map[string]any); ok {
		opts, err := options(p["oneOf"])
		return Question{Kind: QuestionChoice, Choices: opts}, err
	}
	if p, ok := props["choices"].(map[string]any); ok {
		items, _ := p["items"].(map[string]any)
		opts, err := options(items["anyOf"])
		return Question{Kind: QuestionChoices, Choices: opts}, err
	}
	if p, ok := props["answer"].(map[string]any); ok && p["type"] == "string" {
		return Question{Kind: QuestionText}, nil
	}
	return Question{}, ErrQuestionForm
}

func options(v any) ([]QuestionOption, error) {
	list, _ := v.([]any)
	if len(list) == 0 {
		return nil, ErrQuestionForm
	}
	out := make([]QuestionOption, 0, len(list))
	for _, o := range list {
		m, _ := o.(map[string]any)
		c, ok1 := m["const"].(string)
		t, ok2 := m["title"].(string)
		if !ok1 || !ok2 {
			return nil, ErrQuestionForm
		}
		out = append(out, QuestionOption{Value: c, Label: t})
	}
	return out, nil
}

// QuestionAnswer is a question_response frame's answer.
type QuestionAnswer struct {
	Action  string   `json:"action"`
	Answer  *string  `json:"answer"`
	Choices []string `json:"choices"`
}

// Content checks a against q and returns the elicitation answer's action and content: accept with the value
// the form asked for ({choice}, {choices} or {answer}), or decline or cancel with none. The error says what
// is wrong with the answer (shown to the client, which may answer again).
func (q Question) Content(a QuestionAnswer) (string, map[string]any, error) {
	switch a.Action {
	case "decline", "cancel":
		return a.Action, nil, nil
	case "accept", "":
	default:
		return "", nil, errors.New(`action must be "accept", "decline" or "cancel"`)
	}
	offered := func(v string) bool {
		return slices.ContainsFunc(q.Choices, func(o QuestionOption) bool { return o.Value == v })
	}
	switch q.Kind {
	case QuestionChoice:
		if a.Answer == nil || !offered(*a.Answer) {
			return "", nil, errors.New("answer must be the value of one of the question's choices")
		}
		return "accept", map[string]any{"choice": *a.Answer}, nil
	case QuestionChoices:
		if len(a.Choices) == 0 || len(a.Choices) > len(q.Choices) {
			return "", nil, errors.New("choices must list one or more of the question's choice values")
		}
		seen := map[string]bool{}
		picked := make([]any, 0, len(a.Choices))
		for _, c := range a.Choices {
			if !offered(c) || seen[c] {
				return "", nil, errors.New("choices must list one or more of the question's choice values, each once")
			}
			seen[c] = true
			picked = append(picked, c)
		}
		return "accept", map[string]any{"choices": picked}, nil
	default:
		if a.Answer == nil {
			return "", nil, errors.New("answer is required")
		}
		if len(*a.Answer) > MaxQuestionAnswer {
			return "", nil, errors.New("answer is longer than 64 KiB")
		}
		return "accept", map[string]any{"answer": *a.Answer}, nil
	}
}

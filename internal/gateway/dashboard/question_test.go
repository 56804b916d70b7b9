package dashboard

import (
	"encoding/json"
	"slices"
	"testing"
)

var testQuestions = []map[string]any{
	{"type": "object", "properties": map[string]any{"choice": map[string]any{"type": "string", "oneOf": []any{
		map[string]any{"const": "choice-0", "title": "yes"}, map[string]any{"const": "choice-1", "title": "no"}}}}},
	{"type": "object", "properties": map[string]any{"choices": map[string]any{"type": "array", "items": map[string]any{"anyOf": []any{
		map[string]any{"const": "choice-0", "title": "a"}, map[string]any{"const": "choice-1", "title": "b"}}}}}},
	{"type": "object", "properties": map[string]any{"answer": map[string]any{"type": "string"}}},
}

// FuzzQuestionAnswer: whatever a client sends as question_response, an accepted answer holds only what the
// question offered (a choice's value, each at most once) or a bounded text; everything else is an error.
func FuzzQuestionAnswer(f *testing.F) {
	for _, s := range []string{`{"answer":"choice-0"}`, `{"action":"accept","choices":["choice-1","choice-0"]}`,
		`{"action":"decline"}`, `{"answer":"choice-9"}`, `{"choices":["choice-0","choice-0"]}`, `{"action":"x"}`, `{"answer":null}`} {
		f.Add(s)
	}
	var qs []Question
	for _, s := range testQuestions {
		q, err := ParseQuestion(s)
		if err != nil {
			f.Fatal(err)
		}
		qs = append(qs, q)
	}
	f.Fuzz(func(t *testing.T, frame string) {
		var a QuestionAnswer
		if json.Unmarshal([]byte(frame), &a) != nil {
			return
		}
		for _, q := range qs {
			action, content, err := q.Content(a)
			if err != nil {
				if content != nil {
					t.Fatalf("an error with content %v", content)
				}
				continue
			}
			if action != "accept" {
				if content != nil || (action != "decline" && action != "cancel") {
					t.Fatalf("action %q with content %v", action, content)
				}
				continue
			}
			values := []string{}
			for _, o := range q.Choices {
				values = append(values, o.Value)
			}
			switch q.Kind {
			case QuestionChoice:
				if !slices.Contains(values, content["choice"].(string)) {
					t.Fatalf("accepted %v", content)
				}
			case QuestionChoices:
				picked := content["choices"].([]any)
				seen := map[any]bool{}
				for _, p := range picked {
					if !slices.Contains(values, p.(string)) || seen[p] {
						t.Fatalf("accepted %v", content)
					}
					seen[p] = true
				}
				if len(picked) == 0 {
					t.Fatal("accepted no choice")
				}
			default:
				if len(content["answer"].(string)) > MaxQuestionAnswer {
					t.Fatal("accepted an answer over the bound")
				}
			}
		}
	})
}

// Forms the chat cannot show are refused, never half-read.
func TestParseQuestionRefusesOtherForms(t *testing.T) {
	for _, s := range []map[string]any{
		nil, {}, {"properties": map[string]any{}},
		{"properties": map[string]any{"choice": map[string]any{"oneOf": []any{}}}},
		{"properties": map[string]any{"choice": map[string]any{"oneOf": []any{map[string]any{"const": 1, "title": "x"}}}}},
		{"properties": map[string]any{"answer": map[string]any{"type": "number"}}},
		{"properties": map[string]any{"answer": map[string]any{"type": "string"}, "other": map[string]any{}}},
		{"properties": map[string]any{"email": map[string]any{"type": "string"}}},
	} {
		if q, err := ParseQuestion(s); err == nil {
			t.Errorf("ParseQuestion(%v) = %+v, want an error", s, q)
		}
	}
}

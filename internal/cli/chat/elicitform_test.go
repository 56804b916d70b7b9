package chat

import (
	"reflect"
	"testing"
)

// upstreamSingle and upstreamMulti are the forms upstream's zeroclaw-api/src/elicitation.rs builds.
func upstreamSingle(titles ...string) map[string]any {
	var one []any
	for i, t := range titles {
		one = append(one, map[string]any{"const": "choice-" + string(rune('0'+i)), "title": t})
	}
	return map[string]any{"type": "object", "required": []any{"choice"},
		"properties": map[string]any{"choice": map[string]any{"type": "string", "title": "Choice", "oneOf": one}}}
}

func upstreamMulti(titles ...string) map[string]any {
	s := upstreamSingle(titles...)
	one := s["properties"].(map[string]any)["choice"].(map[string]any)["oneOf"]
	return map[string]any{"type": "object", "required": []any{"choices"},
		"properties": map[string]any{"choices": map[string]any{"type": "array", "minItems": 1, "maxItems": len(titles),
			"items": map[string]any{"anyOf": one}}}}
}

// chat reads upstream's single- and multi-select forms and answers with their consts; a line that picks no
// choice goes back as a free answer, and the older enum form still answers with the choice's text.
func TestElicitFormUpstreamShapes(t *testing.T) {
	for _, c := range []struct {
		schema map[string]any
		line   string
		want   map[string]any
	}{
		{upstreamSingle("Red", "Green", "Blue"), "2", map[string]any{"choice": "choice-1"}},
		{upstreamSingle("Red", "Green", "Blue"), "Blue", map[string]any{"choice": "choice-2"}},
		{upstreamSingle("Red", "Green"), "neither", map[string]any{"answer": "neither"}},
		{upstreamMulti("Red", "Green", "Blue"), "1, 3", map[string]any{"choices": []any{"choice-0", "choice-2"}}},
		{upstreamMulti("Red", "Green"), "", map[string]any{"answer": ""}},
		{map[string]any{"properties": map[string]any{"answer": map[string]any{"enum": []any{"x", "y"}}}}, "2", map[string]any{"answer": "y"}},
		{map[string]any{"properties": map[string]any{"answer": map[string]any{"type": "string"}}}, " free ", map[string]any{"answer": "free"}},
	} {
		f := parseElicitForm(c.schema)
		if got := f.content(c.line); !reflect.DeepEqual(got, c.want) {
			t.Errorf("%+v answering %q: %v, want %v", f, c.line, got, c.want)
		}
	}
	if f := parseElicitForm(upstreamMulti("a", "b")); !f.multi || !reflect.DeepEqual(f.titles, []string{"a", "b"}) {
		t.Errorf("multi form %+v", f)
	}
}

package chat

import (
	"fmt"
	"strconv"
	"strings"
)

// elicitForm is an elicitation/create form as chat reads it: upstream's single-select ({choice} with oneOf
// [{const, title}]) or multi-select ({choices} of type array with items.anyOf), our older form ({answer} with an
// enum), or free text ({answer}).
type elicitForm struct {
	property string   // the form's property: "choice", "choices" or "answer"
	titles   []string // what each choice shows
	consts   []string // each choice's wire value; nil for the older enum form (the title is the value)
	multi    bool
}

// parseElicitForm reads the first (the only) property of requestedSchema.
func parseElicitForm(schema map[string]any) elicitForm {
	props, _ := schema["properties"].(map[string]any)
	f := elicitForm{property: "answer"}
	for name, v := range props {
		prop, _ := v.(map[string]any)
		f.property = name
		options, _ := prop["oneOf"].([]any)
		if items, ok := prop["items"].(map[string]any); ok && prop["type"] == "array" {
			options, _ = items["anyOf"].([]any)
			f.multi = true
		}
		for _, o := range options {
			opt, _ := o.(map[string]any)
			c, ok := opt["const"].(string)
			if !ok {
				continue
			}
			title, ok := opt["title"].(string)
			if !ok {
				title = c
			}
			f.consts = append(f.consts, c)
			f.titles = append(f.titles, title)
		}
		if f.consts == nil {
			enum, _ := prop["enum"].([]any)
			for _, e := range enum {
				if s, ok := e.(string); ok {
					f.titles = append(f.titles, s)
				} else {
					f.titles = append(f.titles, fmt.Sprint(e))
				}
			}
		}
		break
	}
	return f
}

// content is the accepted content for the line the user typed: a choice's number (or its exact title) picks it;
// a multi-select takes numbers separated by commas or spaces. Anything else is sent as a free answer,
// {answer: text}, which our daemon reads beside upstream's form (a user may answer "neither").
func (f elicitForm) content(line string) map[string]any {
	answer := strings.TrimSpace(line)
	pick := func(s string) (int, bool) {
		for i, t := range f.titles {
			if t == s {
				return i, true
			}
		}
		if n, err := strconv.Atoi(s); err == nil && n >= 1 && n <= len(f.titles) {
			return n - 1, true
		}
		return 0, false
	}
	switch {
	case f.consts == nil && len(f.titles) > 0: // the older enum form: the value is the title
		if i, ok := pick(answer); ok {
			answer = f.titles[i]
		}
		return map[string]any{f.property: answer}
	case f.consts == nil:
		return map[string]any{f.property: answer}
	case f.multi:
		var picked []any
		for _, s := range strings.FieldsFunc(answer, func(r rune) bool { return r == ',' || r == ' ' }) {
			i, ok := pick(s)
			if !ok {
				return map[string]any{"answer": answer}
			}
			picked = append(picked, f.consts[i])
		}
		if len(picked) == 0 {
			return map[string]any{"answer": answer}
		}
		return map[string]any{f.property: picked}
	}
	if i, ok := pick(answer); ok {
		return map[string]any{f.property: f.consts[i]}
	}
	return map[string]any{"answer": answer}
}

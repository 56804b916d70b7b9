package engine

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"sync"

	"github.com/zeroclaw-go/zeroclaw/internal/sop"
	"github.com/zeroclaw-go/zeroclaw/internal/sop/runstore"
)

// Step schemas (step_schema_enforce): a step's input is checked before it runs and its output once it has,
// against the step's schema fragments (sop.ValidateValue). A value that does not fit fails the step with the
// reason (event step_schema_reject) and on_failure decides the rest.

// jsonish is text as a JSON value when it parses, else the text as a string.
func jsonish(s string) any {
	var v any
	if json.Unmarshal([]byte(strings.TrimSpace(s)), &v) == nil {
		return v
	}
	return s
}

var fenced = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile("(?s)```(?:json)?\\s*\\n?(.*?)```") })

// declaredOutput is a step's output as the value its schema is checked against: JSON when the text is JSON,
// a JSON object or array inside a JSON string or a ``` fence recovered from around it, else the text.
func declaredOutput(s string) any {
	v := jsonish(s)
	if str, ok := v.(string); ok {
		if m := fenced().FindStringSubmatch(str); m != nil {
			if inner := jsonish(m[1]); isContainer(inner) {
				return inner
			}
		}
		if inner := jsonish(str); isContainer(inner) {
			return inner
		}
	}
	return v
}

func isContainer(v any) bool {
	switch v.(type) {
	case map[string]any, []any:
		return true
	}
	return false
}

// stepInput is what a step receives: the trigger payload for the run's first step, the previous result's
// output after that.
func stepInput(r *Run, first int, step int) any {
	if step == first || len(r.StepResults) == 0 {
		if r.TriggerEvent.Payload == nil {
			return nil
		}
		return jsonish(*r.TriggerEvent.Payload)
	}
	return jsonish(r.StepResults[len(r.StepResults)-1].Output)
}

// checkInput validates a step's input when the step declares an input schema; it returns the failure reason.
func (e *Engine) checkInput(rs *runState, st *sop.Step) string {
	if !e.set.SchemaEnforce || st.Schema == nil || len(st.Schema.Input) == 0 {
		return ""
	}
	if err := sop.ValidateValue(st.Schema.Input, stepInput(&rs.run, rs.def.first(), int(st.Number))); err != nil {
		return fmt.Sprintf("Step %d input schema validation failed: %s", st.Number, err)
	}
	return ""
}

// checkOutput validates a completed step's output against its output schema. It returns the output to record
// (canonical JSON when the value was recovered from around the text) and the failure reason, if any.
func (e *Engine) checkOutput(st *sop.Step, output string) (string, string) {
	if !e.set.SchemaEnforce || st.Schema == nil || len(st.Schema.Output) == 0 {
		return output, ""
	}
	v := declaredOutput(output)
	if err := sop.ValidateValue(st.Schema.Output, v); err != nil {
		return output, fmt.Sprintf("Step %d output schema validation failed: %s", st.Number, err)
	}
	if isContainer(v) && !isContainer(jsonish(output)) {
		b, _ := json.Marshal(v)
		return string(b), ""
	}
	return output, ""
}

func (e *Engine) schemaReject(r *Run, st *sop.Step, phase, reason string) runstore.Event {
	return e.event(r.RunID, "step_schema_reject", Principal{}, reason, map[string]any{"step": st.Number, "phase": phase})
}

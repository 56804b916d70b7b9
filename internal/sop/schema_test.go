package sop

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestValidateValue(t *testing.T) {
	schema := json.RawMessage(`{"type":"object","required":["severity"],"properties":{"severity":{"type":"string"},"count":{"type":"integer"},"tags":{"items":{"type":"string"}}}}`)
	for _, c := range []struct {
		data string
		want string // "" = valid
	}{
		{`{"severity":"high","count":2,"tags":["a"]}`, ""},
		{`{"count":2}`, "$: missing required key 'severity'"},
		{`{"severity":3}`, "$.severity: expected string, got number"},
		{`{"severity":"x","count":2.5}`, "$.count: expected integer, got number"},
		{`{"severity":"x","tags":["a",1]}`, "$.tags.1: expected string, got number"},
		{`"text"`, "$: expected object, got string"},
	} {
		var v any
		if err := json.Unmarshal([]byte(c.data), &v); err != nil {
			t.Fatal(err)
		}
		err := ValidateValue(schema, v)
		if c.want == "" && err != nil || c.want != "" && (err == nil || err.Error() != c.want) {
			t.Errorf("%s: %v, want %q", c.data, err, c.want)
		}
	}
	if err := ValidateValue(json.RawMessage(`{}`), "anything"); err != nil {
		t.Errorf("empty fragment: %v", err)
	}
	for _, bad := range []string{`[]`, `{"type":5}`, `{"type":"date"}`, `{"required":"x"}`} {
		if err := ValidateValue(json.RawMessage(bad), map[string]any{}); err == nil || !strings.HasPrefix(err.Error(), "schema: ") {
			t.Errorf("malformed %s: %v", bad, err)
		}
	}
}

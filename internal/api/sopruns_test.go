package api

import (
	"encoding/json"
	"strings"
	"testing"
)

// Every form upstream's serde ApprovalDecision accepts decodes, what it refuses is refused, and encoding gives
// back the form serde writes.
func TestSopDecisionWire(t *testing.T) {
	good := []struct {
		in   string
		want SopDecision
		out  string
	}{
		{`"approve"`, SopDecision{Kind: SopDecisionApprove}, `"approve"`},
		{`{"deny":{}}`, SopDecision{Kind: SopDecisionDeny}, `{"deny":{}}`}, // zerocode's deny
		{`{"deny":{"reason":"no"}}`, SopDecision{Kind: SopDecisionDeny, Text: "no"}, `{"deny":{"reason":"no"}}`},
		{`{"deny":{"reason":null}}`, SopDecision{Kind: SopDecisionDeny}, `{"deny":{}}`},
		{`{"amend":{"text":"t"}}`, SopDecision{Kind: SopDecisionAmend, Text: "t"}, `{"amend":{"text":"t"}}`},
		{`{"revise":{"guidance":"g","extra":1}}`, SopDecision{Kind: SopDecisionRevise, Text: "g"}, `{"revise":{"guidance":"g"}}`},
	}
	for _, c := range good {
		var d SopDecision
		if err := json.Unmarshal([]byte(c.in), &d); err != nil {
			t.Fatalf("%s: %v", c.in, err)
		}
		if d != c.want {
			t.Fatalf("%s = %+v, want %+v", c.in, d, c.want)
		}
		b, err := json.Marshal(d)
		if err != nil || string(b) != c.out {
			t.Fatalf("marshal %+v = %s %v, want %s", d, b, err, c.out)
		}
	}
	bad := map[string]string{
		`"deny"`:                       "unknown variant",
		`"yes"`:                        "unknown variant",
		`{"amend":{}}`:                 "missing field `text`",
		`{"revise":{"text":"x"}}`:      "missing field `guidance`",
		`{"deny":null}`:                "expected an object",
		`{"deny":"x"}`:                 "expected an object",
		`{"deny":{},"amend":{}}`:       "exactly one key",
		`{"approve_all":{}}`:           "unknown variant",
		`null`:                         "expected",
		`42`:                           "expected",
		`{"deny":{"reason":42}}`:       "deny:",
		`{"amend":{"text":["a","b"]}}`: "amend:",
	}
	for in, want := range bad {
		var d SopDecision
		err := json.Unmarshal([]byte(in), &d)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Fatalf("%s: err %v, want one containing %q", in, err, want)
		}
	}
}

// A summary carries upstream's nullable completed_at as null, never drops it.
func TestSopRunSummaryWire(t *testing.T) {
	run := SopRun{RunID: "r", SopName: "s", Status: SopRunCancelled, FailureReason: "denied"}
	b, _ := json.Marshal(run.Summary(false))
	for _, k := range []string{`"completed_at":null`, `"trigger_source":""`, `"active":false`, `"failure_reason":"denied"`} {
		if !strings.Contains(string(b), k) {
			t.Fatalf("summary %s lacks %s", b, k)
		}
	}
}

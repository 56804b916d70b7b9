package sop

import (
	"encoding/json"
	"math"
	"strconv"
	"strings"
)

// Operators in the order a condition is scanned for them: the longest first, so ">=" is not read as ">".
var condOps = []string{">=", "<=", "!=", "==", ">", "<"}

// Operators is the condition operator catalogue ({token, label}) sops/trigger-sources sends.
var Operators = []struct {
	Token string `json:"token"`
	Label string `json:"label"`
}{{"==", "is"}, {"!=", "is not"}, {">", "is greater than"}, {">=", "is at least"}, {"<", "is less than"}, {"<=", "is at most"}}

// EvalCondition tests a trigger condition or a step guard against a payload, as upstream's
// evaluate_condition. An empty condition holds. Every error fails closed (false): an invalid expression, no
// payload, a path that does not resolve, a non-numeric operand of the direct form.
//
// Two forms: "$.a.b.0 <op> value" reads a dot path of the JSON payload (numeric segments index arrays) and
// compares numerically when both sides are numbers, else as strings (quotes around the literal stripped,
// booleans as "true"/"false"); "<op> value" compares the whole payload as a number.
func EvalCondition(condition string, payload *string) bool {
	condition = strings.TrimSpace(condition)
	if condition == "" {
		return true
	}
	if payload == nil || *payload == "" {
		return false
	}
	if rest, ok := strings.CutPrefix(condition, "$"); ok {
		return evalPath(rest, *payload)
	}
	return evalDirect(condition, *payload)
}

// EvalConditionString is EvalCondition with a payload that is always present (possibly empty).
func EvalConditionString(condition, payload string) bool { return EvalCondition(condition, &payload) }

func evalPath(pathAndOp, payload string) bool {
	var doc any
	d := json.NewDecoder(strings.NewReader(payload))
	d.UseNumber()
	if d.Decode(&doc) != nil || d.More() {
		return false
	}
	for _, op := range condOps {
		pos := strings.Index(pathAndOp, op)
		if pos < 0 {
			continue
		}
		pathPart := strings.TrimSpace(pathAndOp[:pos])
		value := strings.TrimSpace(pathAndOp[pos+len(op):])
		if value == "" {
			return false
		}
		var segs []string
		for s := range strings.SplitSeq(pathPart, ".") {
			if s != "" {
				segs = append(segs, s)
			}
		}
		if len(segs) == 0 {
			return false
		}
		v, ok := resolvePath(doc, segs)
		if !ok {
			return false
		}
		return compareValues(v, op, value)
	}
	return false
}

func resolvePath(v any, segs []string) (any, bool) {
	for _, s := range segs {
		switch c := v.(type) {
		case map[string]any:
			n, ok := c[s]
			if !ok {
				return nil, false
			}
			v = n
		case []any:
			i, err := strconv.ParseUint(s, 10, 64)
			if err != nil || i >= uint64(len(c)) {
				return nil, false
			}
			v = c[i]
		default:
			return nil, false
		}
	}
	return v, true
}

func evalDirect(cond, payload string) bool {
	cond = strings.TrimSpace(cond)
	for _, op := range condOps {
		rest, ok := strings.CutPrefix(cond, op)
		if !ok {
			continue
		}
		value := strings.TrimSpace(rest)
		if value == "" {
			return false
		}
		lhs, ok1 := parseFloat(strings.TrimSpace(payload))
		rhs, ok2 := parseFloat(value)
		if !ok1 || !ok2 {
			return false
		}
		return applyFloat(lhs, op, rhs)
	}
	return false
}

// parseFloat reads a number as Rust's f64::from_str does (which also takes inf and NaN).
func parseFloat(s string) (float64, bool) {
	if s == "" || strings.ContainsAny(s, "_xXpP") {
		return 0, false
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		if ne, ok := err.(*strconv.NumError); ok && ne.Err == strconv.ErrRange {
			return f, true
		}
		return 0, false
	}
	return f, true
}

func compareValues(v any, op, comparand string) bool {
	if lhs, ok := valueFloat(v); ok {
		if rhs, ok := parseFloat(comparand); ok {
			return applyFloat(lhs, op, rhs)
		}
	}
	lhs := valueString(v)
	rhs := comparand
	if len(rhs) >= 2 && strings.HasPrefix(rhs, `"`) && strings.HasSuffix(rhs, `"`) {
		rhs = rhs[1 : len(rhs)-1]
	}
	switch op {
	case "==":
		return lhs == rhs
	case "!=":
		return lhs != rhs
	case ">":
		return lhs > rhs
	case "<":
		return lhs < rhs
	case ">=":
		return lhs >= rhs
	case "<=":
		return lhs <= rhs
	}
	return false
}

func valueFloat(v any) (float64, bool) {
	switch x := v.(type) {
	case json.Number:
		return parseFloat(x.String())
	case string:
		return parseFloat(x)
	}
	return 0, false
}

func valueString(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case bool:
		return strconv.FormatBool(x)
	case nil:
		return ""
	case json.Number:
		return x.String()
	}
	b, _ := json.Marshal(v)
	return string(b)
}

func applyFloat(l float64, op string, r float64) bool {
	switch op {
	case ">":
		return l > r
	case "<":
		return l < r
	case ">=":
		return l >= r
	case "<=":
		return l <= r
	case "==":
		return math.Abs(l-r) < epsilon
	case "!=":
		return math.Abs(l-r) >= epsilon
	}
	return false
}

// epsilon is f64::EPSILON, upstream's equality tolerance.
const epsilon = 2.220446049250313e-16

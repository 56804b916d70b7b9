package gateway_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/coder/websocket"

	"github.com/zeroclaw-go/zeroclaw/internal/rpctest"
)

// askUser is the echo model's ask_user call with args.
func askUser(args map[string]any) string {
	b, _ := json.Marshal(args)
	return "/tool ask_user " + string(b)
}

// toolOutput is the output of the turn's tool_result among frames read until done.
func untilToolResult(t *testing.T, w *rpctest.WS) map[string]any {
	t.Helper()
	_, f := w.Until("tool_result")
	w.Until("done")
	return f
}

// A turn that asks the person something sends a question frame (the escaped question, its kind, the choices
// as value and label); the answer comes back as question_response and is what the tool returns to the model.
// A hostile or confused client cannot answer a choice not offered, a request id nobody asked, twice, or with
// an unknown action; a decline reaches the tool as a decline.
func TestWSChatQuestions(t *testing.T) {
	t.Parallel()
	d, g, code := rpctest.StartGateway(t, rpctest.GatewayConfig)
	auth := rpctest.PairOnce(t, g, code)
	w := rpctest.DialWS(t, d.GatewayURL(t), "/ws/chat?agent=default", &websocket.DialOptions{HTTPHeader: rpctest.BearerHeader(auth)})
	w.Next()

	// One choice: the labels are escaped, the values are the agent's.
	w.Send(map[string]any{"type": "message", "content": askUser(map[string]any{"question": "Deploy?\x1b[2J", "choices": []string{"yes\r", "no"}})})
	_, q := w.Until("question")
	id, _ := q["request_id"].(string)
	choices, _ := q["choices"].([]any)
	if id == "" || q["kind"] != "choice" || q["message"] != `Deploy?\x1b[2J` || len(choices) != 2 ||
		choices[0].(map[string]any)["value"] != "choice-0" || choices[0].(map[string]any)["label"] != `yes\r` {
		t.Fatalf("question frame %v", q)
	}
	w.Send(map[string]any{"type": "question_response", "request_id": id, "answer": "choice-7"})
	w.WantError("INVALID_QUESTION_RESPONSE")
	w.Send(map[string]any{"type": "question_response", "request_id": id, "answer": "maybe"})
	w.WantError("INVALID_QUESTION_RESPONSE")
	w.Send(map[string]any{"type": "question_response", "request_id": "q999", "answer": "choice-1"})
	w.WantError("INVALID_QUESTION_RESPONSE")
	w.Send(map[string]any{"type": "question_response", "request_id": id, "action": "shrug"})
	w.WantError("INVALID_QUESTION_RESPONSE")
	w.Send(map[string]any{"type": "question_response", "request_id": id, "action": "accept", "answer": "choice-1"})
	if r := untilToolResult(t, w); r["output"] != "no" {
		t.Fatalf("the tool returned %v, want the second choice", r)
	}
	w.Send(map[string]any{"type": "question_response", "request_id": id, "answer": "choice-0"})
	w.WantError("INVALID_QUESTION_RESPONSE") // answered already

	// Free text.
	w.Send(map[string]any{"type": "message", "content": askUser(map[string]any{"question": "Your name?"})})
	_, q = w.Until("question")
	if q["kind"] != "text" || q["choices"] != nil {
		t.Fatalf("free-text question %v", q)
	}
	w.Send(map[string]any{"type": "question_response", "request_id": q["request_id"], "answer": strings.Repeat("x", 70<<10)})
	w.WantError("INVALID_QUESTION_RESPONSE")
	w.Send(map[string]any{"type": "question_response", "request_id": q["request_id"], "answer": "Ada <b>"})
	if r := untilToolResult(t, w); r["output"] != "Ada <b>" {
		t.Fatalf("the tool returned %v", r)
	}

	// Several choices, then a decline.
	w.Send(map[string]any{"type": "message", "content": askUser(map[string]any{"question": "Which?", "choices": []string{"a", "b", "c"}, "multi_select": true})})
	_, q = w.Until("question")
	if q["kind"] != "choices" {
		t.Fatalf("multi-select question %v", q)
	}
	w.Send(map[string]any{"type": "question_response", "request_id": q["request_id"], "choices": []string{"choice-0", "choice-0"}})
	w.WantError("INVALID_QUESTION_RESPONSE")
	w.Send(map[string]any{"type": "question_response", "request_id": q["request_id"], "choices": []string{"choice-2", "choice-0"}})
	if r := untilToolResult(t, w); !strings.Contains(r["output"].(string), "c") || !strings.Contains(r["output"].(string), "a") || strings.Contains(r["output"].(string), "b") {
		t.Fatalf("the tool returned %v", r)
	}
	w.Send(map[string]any{"type": "message", "content": askUser(map[string]any{"question": "Sure?"})})
	_, q = w.Until("question")
	w.Send(map[string]any{"type": "question_response", "request_id": q["request_id"], "action": "decline"})
	if r := untilToolResult(t, w); !strings.Contains(strings.ToLower(r["output"].(string)), "declin") {
		t.Fatalf("a declined question: the tool returned %v", r)
	}
}

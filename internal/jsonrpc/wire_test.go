package jsonrpc

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"testing"
)

// want describes the expected classification of one frame in compact form.
type want struct {
	kind    string // "request", "response", "reply", "drop"
	id      string // raw id of the Request/Response, or ReplyID for a reply; "" = nil
	method  string
	params  string // raw params; "" = nil
	code    int    // reply code, or error code of a response
	message string // reply message (checked when set)
	result  string // raw result of a response
}

func TestClassify(t *testing.T) {
	tests := []struct {
		name  string
		frame string
		want  want
	}{
		// requests and notifications
		{"request id 0", `{"jsonrpc":"2.0","id":0,"method":"status"}`, want{kind: "request", id: `0`, method: "status"}},
		{"request string id", `{"jsonrpc":"2.0","id":"abc","method":"m","params":{}}`, want{kind: "request", id: `"abc"`, method: "m", params: `{}`}},
		{"request id 1.50 kept raw", `{"jsonrpc":"2.0","id":1.50,"method":"m"}`, want{kind: "request", id: `1.50`, method: "m"}},
		{"request id 1e3 kept raw", `{"id":1e3,"jsonrpc":"2.0","method":"m"}`, want{kind: "request", id: `1e3`, method: "m"}},
		{"request id -1.0 kept raw", `{"id":-1.0,"jsonrpc":"2.0","method":"m"}`, want{kind: "request", id: `-1.0`, method: "m"}},
		{"request id null is not a notification", `{"jsonrpc":"2.0","id":null,"method":"m"}`, want{kind: "request", id: `null`, method: "m"}},
		{"request params array", `{"jsonrpc":"2.0","id":1,"method":"m","params":[1, 2]}`, want{kind: "request", id: `1`, method: "m", params: `[1, 2]`}},
		{"notification", `{"jsonrpc":"2.0","method":"notifications/initialized"}`, want{kind: "request", method: "notifications/initialized"}},
		{"escaped method and version", `{"jsonrpc":"2\u002e0","id":2,"method":"a\/b"}`, want{kind: "request", id: `2`, method: "a/b"}},
		{"duplicate key last wins", `{"jsonrpc":"2.0","id":1,"id":2,"method":"x","method":"y"}`, want{kind: "request", id: `2`, method: "y"}},
		{"unknown keys ignored", `{"jsonrpc":"2.0","id":1,"method":"m","extra":true}`, want{kind: "request", id: `1`, method: "m"}},

		// invalid requests
		{"params null", `{"jsonrpc":"2.0","id":7,"method":"m","params":null}`, want{kind: "reply", id: `7`, code: -32600, message: msgParams}},
		{"params string", `{"jsonrpc":"2.0","id":"x","method":"m","params":"s"}`, want{kind: "reply", id: `"x"`, code: -32600, message: msgParams}},
		{"params null notification replies with id null", `{"jsonrpc":"2.0","method":"m","params":null}`, want{kind: "reply", id: `null`, code: -32600, message: msgParams}},
		{"bad jsonrpc version", `{"jsonrpc":"1.0","id":3,"method":"m"}`, want{kind: "reply", id: `3`, code: -32600, message: msgVersion}},
		{"jsonrpc number", `{"jsonrpc":2.0,"id":3,"method":"m"}`, want{kind: "reply", id: `3`, code: -32600, message: msgVersion}},
		{"missing jsonrpc", `{"id":3,"method":"m"}`, want{kind: "reply", id: `3`, code: -32600, message: msgVersion}},
		{"id bool", `{"jsonrpc":"2.0","id":true,"method":"m"}`, want{kind: "reply", id: `null`, code: -32600, message: msgID}},
		{"id object", `{"jsonrpc":"2.0","id":{},"method":"m"}`, want{kind: "reply", id: `null`, code: -32600, message: msgID}},
		{"id array and bad version", `{"jsonrpc":"1","id":[1],"method":"m"}`, want{kind: "reply", id: `null`, code: -32600}},

		// parse errors and non-objects
		{"not json", `{"jsonrpc":"2.0",`, want{kind: "reply", id: `null`, code: -32700}},
		{"garbage", `hello`, want{kind: "reply", id: `null`, code: -32700}},
		{"batch", `[{"jsonrpc":"2.0","id":1,"method":"m"}]`, want{kind: "reply", id: `null`, code: -32600, message: msgBatch}},
		{"empty batch", `[]`, want{kind: "reply", id: `null`, code: -32600, message: msgBatch}},
		{"string", `"x"`, want{kind: "reply", id: `null`, code: -32600, message: msgNotObject}},
		{"number", `42`, want{kind: "reply", id: `null`, code: -32600, message: msgNotObject}},
		{"null", `null`, want{kind: "reply", id: `null`, code: -32600, message: msgNotObject}},

		// ambiguous
		{"method null", `{"jsonrpc":"2.0","id":1,"method":null}`, want{kind: "reply", id: `null`, code: -32600}},
		{"method number", `{"jsonrpc":"2.0","id":1,"method":5}`, want{kind: "reply", id: `null`, code: -32600}},
		{"method and result", `{"jsonrpc":"2.0","id":1,"method":"m","result":1}`, want{kind: "reply", id: `null`, code: -32600, message: msgAmbiguous}},
		{"method and error", `{"jsonrpc":"2.0","id":1,"method":"m","error":{"code":1,"message":"x"}}`, want{kind: "reply", id: `null`, code: -32600, message: msgAmbiguous}},
		{"empty object", `{}`, want{kind: "reply", id: `null`, code: -32600, message: msgAmbiguous}},
		{"only id", `{"jsonrpc":"2.0","id":1}`, want{kind: "reply", id: `null`, code: -32600, message: msgAmbiguous}},

		// responses
		{"response result", `{"jsonrpc":"2.0","id":"zc-out-0","result":{"action":"accept"}}`, want{kind: "response", id: `"zc-out-0"`, result: `{"action":"accept"}`}},
		{"response result null", `{"jsonrpc":"2.0","id":"zc-out-1","result":null}`, want{kind: "response", id: `"zc-out-1"`, result: `null`}},
		{"response error", `{"jsonrpc":"2.0","id":5,"error":{"code":-32601,"message":"nope","data":{"a":1}}}`, want{kind: "response", id: `5`, code: -32601}},
		{"response id null", `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}`, want{kind: "response", id: `null`, code: -32700}},

		// invalid responses are dropped
		{"response without id", `{"jsonrpc":"2.0","result":1}`, want{kind: "drop"}},
		{"response bad version", `{"jsonrpc":"1.0","id":1,"result":1}`, want{kind: "drop"}},
		{"response with params", `{"jsonrpc":"2.0","id":1,"result":1,"params":{}}`, want{kind: "drop"}},
		{"response result and error", `{"jsonrpc":"2.0","id":1,"result":1,"error":{"code":1,"message":"x"}}`, want{kind: "drop"}},
		{"response id bool", `{"jsonrpc":"2.0","id":false,"result":1}`, want{kind: "drop"}},
		{"error code float", `{"jsonrpc":"2.0","id":1,"error":{"code":1.5,"message":"x"}}`, want{kind: "drop"}},
		{"error code 1e3", `{"jsonrpc":"2.0","id":1,"error":{"code":1e3,"message":"x"}}`, want{kind: "drop"}},
		{"error code string", `{"jsonrpc":"2.0","id":1,"error":{"code":"1","message":"x"}}`, want{kind: "drop"}},
		{"error message missing", `{"jsonrpc":"2.0","id":1,"error":{"code":1}}`, want{kind: "drop"}},
		{"error not object", `{"jsonrpc":"2.0","id":1,"error":"boom"}`, want{kind: "drop"}},
		{"error null", `{"jsonrpc":"2.0","id":1,"error":null}`, want{kind: "drop"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Classify([]byte(tt.frame))
			checkInbound(t, got, tt.want)
		})
	}
}

func checkInbound(t *testing.T, got Inbound, w want) {
	t.Helper()
	set := 0
	for _, b := range []bool{got.Request != nil, got.Response != nil, got.Reply != nil, got.Drop} {
		if b {
			set++
		}
	}
	if set != 1 {
		t.Fatalf("Classify set %d outcomes, want exactly 1: %+v", set, got)
	}
	rawEq := func(what string, got json.RawMessage, want string) {
		t.Helper()
		if (want == "") != (got == nil) || string(got) != want {
			t.Errorf("%s = %q (nil=%v), want %q", what, got, got == nil, want)
		}
	}
	switch w.kind {
	case "request":
		if got.Request == nil {
			t.Fatalf("want request, got %+v (reply %v)", got, got.Reply)
		}
		rawEq("ID", got.Request.ID, w.id)
		rawEq("Params", got.Request.Params, w.params)
		if got.Request.Method != w.method {
			t.Errorf("Method = %q, want %q", got.Request.Method, w.method)
		}
		if got.Request.IsNotification() != (w.id == "") {
			t.Errorf("IsNotification = %v", got.Request.IsNotification())
		}
	case "response":
		if got.Response == nil {
			t.Fatalf("want response, got %+v", got)
		}
		rawEq("ID", got.Response.ID, w.id)
		if w.code != 0 {
			if got.Response.Error == nil || got.Response.Error.Code != w.code || got.Response.Result != nil {
				t.Errorf("Response = %+v, want error code %d", got.Response, w.code)
			}
		} else {
			rawEq("Result", got.Response.Result, w.result)
			if got.Response.Error != nil {
				t.Errorf("unexpected Error %v", got.Response.Error)
			}
		}
	case "reply":
		if got.Reply == nil {
			t.Fatalf("want reply, got %+v", got)
		}
		rawEq("ReplyID", got.ReplyID, w.id)
		if got.Reply.Code != w.code {
			t.Errorf("Reply.Code = %d, want %d", got.Reply.Code, w.code)
		}
		if w.message != "" && got.Reply.Message != w.message {
			t.Errorf("Reply.Message = %q, want %q", got.Reply.Message, w.message)
		}
	case "drop":
		if !got.Drop {
			t.Fatalf("want drop, got %+v", got)
		}
	}
}

func TestClassifyResponseErrorFields(t *testing.T) {
	in := Classify([]byte(`{"jsonrpc":"2.0","id":5,"error":{"code":-32601,"message":"nope","data":{"a":1}}}`))
	if in.Response == nil || in.Response.Error == nil {
		t.Fatalf("got %+v", in)
	}
	e := in.Response.Error
	if e.Message != "nope" {
		t.Errorf("Message = %q", e.Message)
	}
	data, err := json.Marshal(e.Data)
	if err != nil || string(data) != `{"a":1}` {
		t.Errorf("Data = %s, %v", data, err)
	}
}

func TestErrorIs(t *testing.T) {
	err := fmt.Errorf("wrapped: %w", NewError(CodeInvalidParams, "bad", nil))
	if !errors.Is(err, &Error{Code: CodeInvalidParams}) {
		t.Error("errors.Is with the same code = false")
	}
	if errors.Is(err, &Error{Code: CodeInternalError}) {
		t.Error("errors.Is with another code = true")
	}
	var e *Error
	if !errors.As(err, &e) || e.Message != "bad" {
		t.Errorf("errors.As = %v", e)
	}
	if got := e.Error(); got != "jsonrpc: error -32602: bad" {
		t.Errorf("Error() = %q", got)
	}
}

func TestEncode(t *testing.T) {
	tests := []struct {
		name string
		got  func() ([]byte, error)
		want string
	}{
		{"response raw id", func() ([]byte, error) { return EncodeResponse(json.RawMessage(`1.50`), map[string]int{"a": 1}) },
			`{"jsonrpc":"2.0","id":1.50,"result":{"a":1}}`},
		{"response nil result", func() ([]byte, error) { return EncodeResponse(json.RawMessage(`"x"`), nil) },
			`{"jsonrpc":"2.0","id":"x","result":null}`},
		{"response nil id", func() ([]byte, error) { return EncodeResponse(nil, "<&>") },
			`{"jsonrpc":"2.0","id":null,"result":"<&>"}`},
		{"error nil id", func() ([]byte, error) {
			return EncodeError(nil, NewError(-32004, "limit", map[string]any{"limit": 2})), nil
		},
			`{"jsonrpc":"2.0","id":null,"error":{"code":-32004,"message":"limit","data":{"limit":2}}}`},
		{"error bad id becomes null", func() ([]byte, error) { return EncodeError(json.RawMessage(`true`), NewError(1, "m", nil)), nil },
			`{"jsonrpc":"2.0","id":null,"error":{"code":1,"message":"m"}}`},
		{"error unencodable data", func() ([]byte, error) { return EncodeError(json.RawMessage(`0`), NewError(1, "m", func() {})), nil },
			`{"jsonrpc":"2.0","id":0,"error":{"code":1,"message":"m"}}`},
		{"frame too large data order", func() ([]byte, error) { return EncodeError(nil, frameTooLargeError(8388608)), nil },
			`{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid Request: frame too large","data":{"reason":"frame_too_large","limit_bytes":8388608}}}`},
		{"notification", func() ([]byte, error) { return EncodeNotification("session/update", map[string]string{"type": "x"}) },
			`{"jsonrpc":"2.0","method":"session/update","params":{"type":"x"}}`},
		{"notification no params", func() ([]byte, error) { return EncodeNotification("ping", nil) },
			`{"jsonrpc":"2.0","method":"ping"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.got()
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tt.want {
				t.Errorf("got  %s\nwant %s", got, tt.want)
			}
		})
	}
	if _, err := EncodeResponse(json.RawMessage(`1`), func() {}); err == nil {
		t.Error("EncodeResponse of a func succeeded")
	}
	if _, err := EncodeNotification("m", make(chan int)); err == nil {
		t.Error("EncodeNotification of a chan succeeded")
	}
}

func TestWriteFrame(t *testing.T) {
	var buf bytes.Buffer
	f, err := EncodeNotification("ping", nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := WriteFrame(&buf, f); err != nil {
		t.Fatal(err)
	}
	if got := buf.String(); got != `{"jsonrpc":"2.0","method":"ping"}`+"\n" {
		t.Errorf("got %q", got)
	}
	r := NewReader(&buf, 0)
	back, err := r.ReadFrame()
	if err != nil || !bytes.Equal(back, f) {
		t.Errorf("read back %q, %v", back, err)
	}
}

func TestNotifyEncodeError(t *testing.T) {
	server, client := socketPair(t)
	defer client.Close()
	c := NewConn(NewStream(server), HandlerFunc(echo), Options{})
	defer c.Close()
	err := c.Notify("m", make(chan int))
	if err == nil || errors.Is(err, ErrClosed) {
		t.Errorf("Notify with unencodable params = %v, want an encode error", err)
	}
	if _, err := c.Call(t.Context(), "m", func() {}); err == nil || errors.Is(err, ErrClosed) {
		t.Errorf("Call with unencodable params = %v, want an encode error", err)
	}
}

// Classifying a large frame does not copy it: the params are a slice of the frame.
func TestClassifyDoesNotCopyParams(t *testing.T) {
	frame := []byte(`{"jsonrpc":"2.0","id":1,"method":"m","params":{"pad":"` + strings.Repeat("x", 4<<20) + `"}}`)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	in := Classify(frame)
	runtime.ReadMemStats(&after)
	if in.Request == nil || len(in.Request.Params) != len(frame)-len(`{"jsonrpc":"2.0","id":1,"method":"m","params":}`) {
		t.Fatalf("classified as %+v", in)
	}
	if n := after.TotalAlloc - before.TotalAlloc; n > 64<<10 {
		t.Fatalf("Classify allocated %d bytes for a 4 MiB frame", n)
	}
}

package rpc

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/zeroclaw-go/zeroclaw/internal/api"
	"github.com/zeroclaw-go/zeroclaw/internal/jsonrpc"
)

func TestDecodeParamsAliases(t *testing.T) {
	for _, raw := range []string{
		`{"session_id":"s1","before_index":3,"limit":2}`,
		`{"sessionId":"s1","beforeIndex":3,"limit":2}`,
		`{"sessionId":"s1","before_index":3,"limit":2,"unknownField":{"x":1}}`,
	} {
		var p api.SessionMessagesParams
		if err := decodeParams(json.RawMessage(raw), &p); err != nil {
			t.Fatalf("%s: %v", raw, err)
		}
		if p.SessionID != "s1" || p.BeforeIndex == nil || *p.BeforeIndex != 3 || p.Limit != 2 {
			t.Fatalf("%s decoded to %+v", raw, p)
		}
	}
	// The snake_case spelling wins when both are present.
	var p api.SessionIDParams
	if err := decodeParams(json.RawMessage(`{"sessionId":"camel","session_id":"snake"}`), &p); err != nil || p.SessionID != "snake" {
		t.Fatalf("got %+v, %v", p, err)
	}
	// camelCase fields by design stay camelCase (clientCapabilities).
	var ip api.InitializeParams
	if err := decodeParams(json.RawMessage(`{"clientCapabilities":{"elicitation":{"form":{}}},"protocolVersion":1}`), &ip); err != nil {
		t.Fatal(err)
	}
	if !declaresElicitationForm(ip.ClientCapabilities) || ip.ProtocolVersion == nil || *ip.ProtocolVersion != 1 {
		t.Fatalf("got %+v", ip)
	}
}

func TestDecodeParamsErrors(t *testing.T) {
	for raw, want := range map[string]string{
		`[1,2]`:                     "params must be an object",
		`{"session_id":5}`:          "invalid params: session_id must be a string",
		`{"sessionId":true}`:        "invalid params: session_id must be a string",
		`{"limit":"ten"}`:           "invalid params: limit must be an integer",
		`{"before_index":[]}`:       "invalid params: before_index must be an integer",
		`{"limit":1.5}`:             "invalid params: limit must be an integer",
		`{"session_id":"a","x":{}}`: "",
	} {
		var p api.SessionMessagesParams
		err := decodeParams(json.RawMessage(raw), &p)
		if want == "" {
			if err != nil {
				t.Errorf("%s: unexpected %v", raw, err)
			}
			continue
		}
		var we *jsonrpc.Error
		if !errors.As(err, &we) || we.Code != api.CodeInvalidParams || we.Message != want {
			t.Errorf("%s: got %v, want -32602 %q", raw, err, want)
		}
	}
	// Absent params are {}.
	var p api.SessionListParams
	if err := decodeParams(nil, &p); err != nil || p != (api.SessionListParams{}) {
		t.Fatalf("absent params: %+v %v", p, err)
	}
}

func TestSnakeCase(t *testing.T) {
	for in, want := range map[string]string{"protocolVersion": "protocol_version", "session_id": "session_id",
		"agentAlias": "agent_alias", "tuiId": "tui_id", "x": "x"} {
		if got := snakeCase(in); got != want {
			t.Errorf("snakeCase(%q) = %q, want %q", in, got, want)
		}
	}
}

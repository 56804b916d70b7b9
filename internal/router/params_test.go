package router

import (
	"encoding/json"
	"errors"
	"runtime"
	"strings"
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
		if err := DecodeParams(json.RawMessage(raw), &p); err != nil {
			t.Fatalf("%s: %v", raw, err)
		}
		if p.SessionID != "s1" || p.BeforeIndex == nil || *p.BeforeIndex != 3 || p.Limit != 2 {
			t.Fatalf("%s decoded to %+v", raw, p)
		}
	}
	// Both spellings with the same value are fine (also for a repeated key, and values equal once decoded).
	for _, raw := range []string{`{"sessionId":"s","session_id":"s"}`, `{"session_id":"s","session_id":"\u0073"}`} {
		var p api.SessionIDParams
		if err := DecodeParams(json.RawMessage(raw), &p); err != nil || p.SessionID != "s" {
			t.Fatalf("%s: got %+v, %v", raw, p, err)
		}
	}
	var ip0 api.InitializeParams
	if err := DecodeParams(json.RawMessage(`{"protocol_version":1,"protocolVersion":1}`), &ip0); err != nil || *ip0.ProtocolVersion != 1 {
		t.Fatalf("same version twice: %+v %v", ip0, err)
	}
	// camelCase fields by design stay camelCase (clientCapabilities).
	var ip api.InitializeParams
	if err := DecodeParams(json.RawMessage(`{"clientCapabilities":{"elicitation":{"form":{}}},"protocolVersion":1}`), &ip); err != nil {
		t.Fatal(err)
	}
	if string(ip.ClientCapabilities) != `{"elicitation":{"form":{}}}` || ip.ProtocolVersion == nil || *ip.ProtocolVersion != 1 {
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
		// The same field twice with different values, whichever spellings, is refused rather than guessed.
		`{"sessionId":"camel","session_id":"snake"}`: `invalid params: conflicting values for session_id (given as "sessionId" and "session_id")`,
		`{"limit":1,"limit":2}`:                      `invalid params: conflicting values for limit (given as "limit" and "limit")`,
		`{"beforeIndex":1,"before_index":null}`:      `invalid params: conflicting values for before_index (given as "beforeIndex" and "before_index")`,
		`{"limit":2,"limit":"x"}`:                    "invalid params: limit must be an integer",
		`{"LIMIT":"x","limit ":[]}`:                  "", // keys match exactly: these are unknown fields
	} {
		var p api.SessionMessagesParams
		err := DecodeParams(json.RawMessage(raw), &p)
		if want == "" {
			if err != nil {
				t.Errorf("%s: unexpected %v", raw, err)
			}
			continue
		}
		var we *jsonrpc.Error
		if !errors.As(err, &we) || we.Code != jsonrpc.CodeInvalidParams || we.Message != want {
			t.Errorf("%s: got %v, want -32602 %q", raw, err, want)
		}
	}
	// Absent params are {}.
	var p api.SessionListParams
	if err := DecodeParams(nil, &p); err != nil || p != (api.SessionListParams{}) {
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

// A large field the method does not know costs a scan, not a copy: before, decoding copied the params twice
// (into a map, then re-encoded) and a max-size frame cost several times its size in heap.
func TestDecodeParamsDoesNotCopyUnknownFields(t *testing.T) {
	raw := json.RawMessage(`{"session_id":"s1","pad":"` + strings.Repeat("x", 4<<20) + `"}`)
	var p api.SessionIDParams
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	err := DecodeParams(raw, &p)
	runtime.ReadMemStats(&after)
	if err != nil || p.SessionID != "s1" {
		t.Fatalf("got %+v, %v", p, err)
	}
	if n := after.TotalAlloc - before.TotalAlloc; n > 64<<10 {
		t.Fatalf("decoding allocated %d bytes for 4 MiB of params the method ignores", n)
	}
}

// Absent and empty params, the common case of status, health and the other parameterless methods, cost no
// allocation; nor does a known field of a small object beyond its own value.
func TestDecodeParamsEmptyAllocatesNothing(t *testing.T) {
	for _, raw := range []string{"", "{}", " { \n } ", `{"unknown":1}`} {
		var p struct{}
		b := json.RawMessage(raw)
		if n := testing.AllocsPerRun(100, func() {
			if err := DecodeParams(b, &p); err != nil {
				t.Fatal(err)
			}
		}); n != 0 {
			t.Errorf("DecodeParams(%q) allocates %v times, want 0", raw, n)
		}
	}
	var q struct {
		Limit int `json:"limit"`
	}
	limit := json.RawMessage(`{"limit":5}`)
	if n := testing.AllocsPerRun(100, func() {
		if err := DecodeParams(limit, &q); err != nil || q.Limit != 5 {
			t.Fatal(err, q)
		}
	}); n > 1 {
		t.Errorf(`DecodeParams({"limit":5}) allocates %v times, want at most 1`, n)
	}
}

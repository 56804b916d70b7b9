package jsonrpc

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"reflect"
	"testing"
	"unicode/utf8"
)

// seedFrames are interesting frames for the fuzzers: every shape of the classification rules.
var seedFrames = []string{
	`{"jsonrpc":"2.0","method":"initialize","params":{"protocol_version":1},"id":1}`,
	`{"jsonrpc":"2.0","method":"status","params":{},"id":2}`,
	`{"jsonrpc":"2.0","id":0,"method":"status"}`,
	`{"jsonrpc":"2.0","id":"abc","method":"m","params":[1,"<&>",{"a":null}]}`,
	`{"jsonrpc":"2.0","id":1.50,"method":"m"}`,
	`{"jsonrpc":"2.0","id":-1e3,"method":"m"}`,
	`{"jsonrpc":"2.0","id":null,"method":"m"}`,
	`{"jsonrpc":"2.0","method":"session/update","params":{"type":"agent_message_chunk","text":"h\u00e9"}}`,
	`{"jsonrpc":"2.0","id":7,"method":"m","params":null}`,
	`{"jsonrpc":"1.0","id":3,"method":"m"}`,
	`{"jsonrpc":"2.0","id":true,"method":"m"}`,
	`{"jsonrpc":"2.0","id":1,"method":null}`,
	`{"jsonrpc":"2.0","id":1,"method":"m","result":1}`,
	`{"jsonrpc":"2.0","id":1,"id":2,"method":"x","method":"y"}`,
	`{"jsonrpc":"2.0","id":"zc-out-0","result":{"action":"accept","content":{"x":1}}}`,
	`{"jsonrpc":"2.0","id":"zc-out-1","result":null}`,
	`{"jsonrpc":"2.0","id":5,"error":{"code":-32601,"message":"nope","data":{"a":1}}}`,
	`{"jsonrpc":"2.0","id":5,"error":{"code":-32601,"message":"nope","data":null}}`,
	`{"jsonrpc":"2.0","id":1,"result":1,"error":{"code":1,"message":"x"}}`,
	`{"jsonrpc":"2.0","id":1,"error":{"code":1.5,"message":"x"}}`,
	`[{"jsonrpc":"2.0","id":1,"method":"m"}]`,
	`[]`, `null`, `42`, `"x"`, `{}`, `{"jsonrpc":"2.0",`,
	"{\"jsonrpc\":\"2.0\",\"method\":\"a\xffb\",\"id\":\"\xfe\"}",
}

// semEqual compares two raw JSON values by meaning (numbers kept as written).
func semEqual(t *testing.T, a, b json.RawMessage) bool {
	t.Helper()
	if (a == nil) != (b == nil) {
		return false
	}
	if a == nil {
		return true
	}
	decode := func(raw json.RawMessage) any {
		d := json.NewDecoder(bytes.NewReader(raw))
		d.UseNumber()
		var v any
		if err := d.Decode(&v); err != nil {
			t.Fatalf("decode %q: %v", raw, err)
		}
		return v
	}
	return reflect.DeepEqual(decode(a), decode(b))
}

func FuzzClassify(f *testing.F) {
	for _, s := range seedFrames {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, frame []byte) {
		in := Classify(frame)
		n := 0
		for _, b := range []bool{in.Request != nil, in.Response != nil, in.Reply != nil, in.Drop} {
			if b {
				n++
			}
		}
		if n != 1 {
			t.Fatalf("%d outcomes for %q", n, frame)
		}
		if in.Reply != nil && !validID(in.ReplyID) {
			t.Fatalf("reply id %q for %q", in.ReplyID, frame)
		}
		switch {
		case in.Request != nil:
			req := in.Request
			var params any
			if req.Params != nil {
				params = req.Params
			}
			out, err := appendRequest(nil, req.ID, req.Method, params)
			if err != nil {
				t.Fatalf("re-encode %+v: %v", req, err)
			}
			again := Classify(bytes.TrimSuffix(out, []byte("\n")))
			r2 := again.Request
			if r2 == nil {
				t.Fatalf("re-encoded request %s classified as %+v", out, again)
			}
			if r2.Method != req.Method || !bytes.Equal(r2.ID, req.ID) || (r2.ID == nil) != (req.ID == nil) ||
				!semEqual(t, r2.Params, req.Params) {
				t.Fatalf("round trip changed the request:\n %q\n %s", frame, out)
			}
		case in.Response != nil:
			resp := in.Response
			var out []byte
			if resp.Error != nil {
				out = EncodeError(resp.ID, resp.Error)
			} else {
				var err error
				if out, err = EncodeResponse(resp.ID, resp.Result); err != nil {
					t.Fatalf("re-encode %+v: %v", resp, err)
				}
			}
			again := Classify(out)
			r2 := again.Response
			if r2 == nil {
				t.Fatalf("re-encoded response %s classified as %+v", out, again)
			}
			if !bytes.Equal(r2.ID, resp.ID) || !semEqual(t, r2.Result, resp.Result) || (r2.Error == nil) != (resp.Error == nil) {
				t.Fatalf("round trip changed the response:\n %q\n %s", frame, out)
			}
			if resp.Error != nil {
				d1, _ := resp.Error.Data.(json.RawMessage)
				d2, _ := r2.Error.Data.(json.RawMessage)
				if r2.Error.Code != resp.Error.Code || r2.Error.Message != resp.Error.Message || !semEqual(t, d1, d2) {
					t.Fatalf("round trip changed the error:\n %q\n %s", frame, out)
				}
			}
		}
	})
}

func FuzzReader(f *testing.F) {
	for _, s := range seedFrames {
		f.Add([]byte(s+"\r\n\n  "+s+"\n"), uint16(64))
	}
	f.Add([]byte("\xff\xfe{\"a\":1}\n   \n"), uint16(4))
	f.Add([]byte("xxxxxxxxxxxxxxxxx\r\nyy\n"), uint16(16))
	f.Fuzz(func(t *testing.T, data []byte, limit uint16) {
		max := int(limit%4096) + 1
		r := NewReader(bytes.NewReader(data), max)
		for i := 0; ; i++ {
			frame, err := r.ReadFrame()
			if err != nil {
				if !errors.Is(err, io.EOF) && !errors.Is(err, ErrFrameTooLarge) {
					t.Fatalf("unexpected error %v", err)
				}
				return
			}
			if i > len(data) {
				t.Fatal("more frames than input bytes")
			}
			if len(frame) == 0 || len(frame) > max {
				t.Fatalf("frame of %d bytes with limit %d", len(frame), max)
			}
			if isSpace(frame[0]) || isSpace(frame[len(frame)-1]) || bytes.IndexByte(frame, '\n') >= 0 {
				t.Fatalf("frame not trimmed: %q", frame)
			}
			if !utf8.Valid(frame) {
				t.Fatalf("invalid UTF-8 in frame %q", frame)
			}
		}
	})
}

// Members must agree with encoding/json's map decoding (last value of a repeated key wins) on every valid object.
func FuzzMembers(f *testing.F) {
	for _, s := range seedFrames {
		f.Add([]byte(s))
	}
	f.Add([]byte(` { "a\u0062" : [1, {"x":"}]\""}] , "a":  -1.5e3 ,"\ud83d\ude00":true,"n":null, "s":"a\\\"b" } `))
	f.Add([]byte("{\"\xff\":1}"))
	f.Fuzz(func(t *testing.T, obj []byte) {
		if !json.Valid(obj) {
			return
		}
		var want map[string]json.RawMessage
		if err := json.Unmarshal(obj, &want); err != nil || want == nil {
			for k, v := range Members(obj) {
				t.Fatalf("Members of non-object %q yielded %q: %q", obj, k, v)
			}
			return
		}
		got := map[string]json.RawMessage{}
		for k, v := range Members(obj) {
			if cap(v) != len(v) {
				t.Fatalf("value %q of %q has spare capacity", v, k)
			}
			got[k] = v
		}
		if len(got) != len(want) {
			t.Fatalf("%q: Members gave %d keys, encoding/json %d", obj, len(got), len(want))
		}
		for k, v := range want {
			if !bytes.Equal(got[k], v) {
				t.Fatalf("%q: key %q: Members %q, encoding/json %q", obj, k, got[k], v)
			}
		}
	})
}

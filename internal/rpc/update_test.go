package rpc

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"

	"github.com/zeroclaw-go/zeroclaw/internal/api"
)

func stdJSON(t *testing.T, v any) []byte {
	t.Helper()
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
}

// A chunk update appends the bytes encoding/json writes for it.
func TestUpdateParamsChunkMatchesEncodingJSON(t *testing.T) {
	for _, u := range []api.SessionUpdate{
		{SessionID: "s-1", Type: api.UpdateAgentMessageChunk, Text: "tok1 "},
		{SessionID: "s-1", Type: api.UpdateAgentThoughtChunk, Text: "a \"quoted\" <b> & \n\t\x01 é \u2028 \xff"},
		{SessionID: "s-1", Type: api.UpdateAgentMessageChunk},
	} {
		got, ok := (*updateParams)(&u).AppendJSON([]byte("x"))
		if !ok {
			t.Fatalf("%+v: AppendJSON refused a chunk update", u)
		}
		if want := append([]byte("x"), stdJSON(t, u)...); !bytes.Equal(got, want) {
			t.Fatalf("AppendJSON = %s, encoding/json writes %s", got, want)
		}
	}
}

// Any update with a field beyond the session, the type and the text is left to encoding/json, including a field
// added to api.SessionUpdate later: every field is set in turn by reflection.
func TestUpdateParamsLeavesOtherUpdatesToEncodingJSON(t *testing.T) {
	typ := reflect.TypeFor[api.SessionUpdate]()
	for i := range typ.NumField() {
		f := typ.Field(i)
		switch f.Name {
		case "SessionID", "Type", "Text":
			continue
		}
		u := api.SessionUpdate{SessionID: "s-1", Type: api.UpdateToolCall, Text: "t"}
		v := reflect.ValueOf(&u).Elem().Field(i)
		switch v.Kind() {
		case reflect.String:
			v.SetString("x")
		case reflect.Bool:
			v.SetBool(true)
		case reflect.Int:
			v.SetInt(1)
		case reflect.Pointer:
			v.Set(reflect.New(f.Type.Elem()))
		case reflect.Slice:
			v.Set(reflect.MakeSlice(f.Type, 1, 1))
		default:
			t.Fatalf("field %s: kind %s not covered by this test", f.Name, v.Kind())
		}
		if out, ok := (*updateParams)(&u).AppendJSON([]byte("x")); ok || string(out) != "x" {
			t.Fatalf("field %s set: AppendJSON = %q, %v; want it left to encoding/json", f.Name, out, ok)
		}
	}
}

// A chunk update appends itself without allocating.
func TestUpdateParamsChunkDoesNotAllocate(t *testing.T) {
	u := &updateParams{SessionID: "s-1", Type: api.UpdateAgentMessageChunk, Text: "tok17 "}
	buf := make([]byte, 0, 256)
	allocs := testing.AllocsPerRun(200, func() {
		if _, ok := u.AppendJSON(buf[:0]); !ok {
			t.Fatal("refused")
		}
	})
	if allocs != 0 {
		t.Fatalf("AppendJSON allocated %.1f times, want 0", allocs)
	}
}

func BenchmarkUpdateEncode(b *testing.B) {
	u := api.SessionUpdate{SessionID: "01JD3Q8Z6X9W7V5T3R1P0N2M4K", Type: api.UpdateAgentMessageChunk, Text: "tok17 "}
	b.Run("encoding_json", func(b *testing.B) {
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		b.ReportAllocs()
		for b.Loop() {
			buf.Reset()
			_ = enc.Encode(u)
		}
	})
	b.Run("append", func(b *testing.B) {
		buf := make([]byte, 0, 256)
		b.ReportAllocs()
		for b.Loop() {
			buf, _ = (*updateParams)(&u).AppendJSON(buf[:0])
		}
	})
}

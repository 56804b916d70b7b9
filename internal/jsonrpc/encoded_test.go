package jsonrpc

import (
	"encoding/json"
	"testing"
)

// An Encoded result is sent exactly as the value it was encoded from would be, in a frame and in a JSON body.
func TestEncodedSendsTheSameBytes(t *testing.T) {
	v := struct {
		Path  string            `json:"path"`
		IDs   []string          `json:"ids"`
		Count int               `json:"count"`
		Tags  map[string]string `json:"tags"`
	}{Path: "/tmp/a<b>&c/\u00e9", IDs: []string{}, Count: 3, Tags: map[string]string{"z": "1", "a": "<2>"}}
	enc, err := Encode(v)
	if err != nil {
		t.Fatal(err)
	}
	id := json.RawMessage(`"x-1"`)
	want, err := EncodeResponse(id, v)
	if err != nil {
		t.Fatal(err)
	}
	got, err := EncodeResponse(id, enc)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != string(want) {
		t.Fatalf("frame with Encoded %s, want %s", got, want)
	}
	wantBody, _ := json.Marshal(map[string]any{"r": v})
	gotBody, err := json.Marshal(map[string]any{"r": enc})
	if err != nil || string(gotBody) != string(wantBody) {
		t.Fatalf("body with Encoded %s (%v), want %s", gotBody, err, wantBody)
	}
}

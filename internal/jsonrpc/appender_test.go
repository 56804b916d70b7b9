package jsonrpc

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"
)

// stdString is encoding/json's encoding of s with HTML escaping off, as frames are written.
func stdString(t *testing.T, s string) []byte {
	t.Helper()
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(s); err != nil {
		t.Fatal(err)
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
}

func TestAppendStringMatchesEncodingJSON(t *testing.T) {
	cases := []string{"", "tok1 ", `a"b\c`, "<html>&", "\x00\x01\b\f\n\r\t\x1f\x7f", "é漢字🙂", "\u2028\u2029",
		"bad \xff\xfe utf8 \xc3", "\xed\xa0\x80 surrogate", strings.Repeat("x", 300)}
	for b := 0; b < 256; b++ {
		cases = append(cases, string([]byte{byte(b)}), "a"+string([]byte{byte(b)})+"z")
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 2000 {
		n := rng.IntN(24)
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(rng.IntN(256))
		}
		cases = append(cases, string(b))
	}
	for _, s := range cases {
		if got, want := AppendString([]byte("x"), s), append([]byte("x"), stdString(t, s)...); !bytes.Equal(got, want) {
			t.Fatalf("AppendString(%q) = %s, encoding/json writes %s", s, got, want)
		}
	}
}

// chunkParams appends itself (marking the frame, so the test sees which encoder ran) unless refuse is set.
type chunkParams struct {
	Text   string `json:"text"`
	refuse bool
}

func (p *chunkParams) AppendJSON(dst []byte) ([]byte, bool) {
	if p.refuse {
		return append(dst, "garbage"...), false
	}
	return append(AppendString(append(dst, `{"text":`...), p.Text), `,"by":"AppendJSON"}`...), true
}

// A params value that is a JSONAppender is appended by its AppendJSON; when it refuses, encoding/json encodes it
// and what it appended is dropped.
func TestJSONAppenderParams(t *testing.T) {
	for refuse, want := range map[bool]string{
		false: `{"jsonrpc":"2.0","method":"session/update","params":{"text":"hi <b>\n","by":"AppendJSON"}}`,
		true:  `{"jsonrpc":"2.0","method":"session/update","params":{"text":"hi <b>\n"}}`,
	} {
		got, err := EncodeNotification("session/update", &chunkParams{Text: "hi <b>\n", refuse: refuse})
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != want {
			t.Fatalf("refuse=%v: got %s, want %s", refuse, got, want)
		}
	}
}

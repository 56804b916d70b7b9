package jsonrpc

import (
	"encoding/json"
	"strings"
	"testing"
)

var validSeeds = []string{
	``, ` `, `null`, `true`, `false`, `nul`, `truex`, `0`, `-0`, `01`, `-`, `1.`, `1.5`, `1e`, `1e+`, `1E-7`, `-12.5e10`,
	`""`, `"a"`, `"\"`, `"\u00e9"`, `"\u00g9"`, `"\x"`, "\"\x01\"", "\"\xff\xfe\"", `"\/\b\f\n\r\t"`,
	`{}`, `{"a":1}`, `{"a":1,}`, `{"a" 1}`, `{a:1}`, `{"a":[1,2,{"b":null}]}`, `[]`, `[1,]`, `[,]`, `[1 2]`,
	` {"jsonrpc":"2.0","method":"m","params":{"x":"` + strings.Repeat("QUJD", 64) + `"},"id":1} `, `{"a":1}}`,
	`[` + strings.Repeat(`[`, maxNesting) + strings.Repeat(`]`, maxNesting) + `]`,
	strings.Repeat(`[`, maxNesting) + strings.Repeat(`]`, maxNesting),
	strings.Repeat(`{"a":`, maxNesting) + `1` + strings.Repeat(`}`, maxNesting),
	strings.Repeat(`{"a":`, maxNesting+1) + `1` + strings.Repeat(`}`, maxNesting+1),
	`{"a":"` + strings.Repeat("QUJD", 80) + `\"` + strings.Repeat("QUJD", 80) + `"}`,
	`{"a":"` + strings.Repeat("QUJD", 80) + "\t" + strings.Repeat("QUJD", 80) + `"}`,
	`{"a":"` + strings.Repeat("QUJD", 80) + "\x01" + strings.Repeat("QUJD", 80) + `"}`,
	`{"a":"` + strings.Repeat("QUJD", 80) + `\u00e9` + strings.Repeat("QUJD", 80) + `\`,
}

// Valid agrees with encoding/json on every input.
func TestValidMatchesEncodingJSON(t *testing.T) {
	for _, s := range validSeeds {
		if got, want := Valid([]byte(s)), json.Valid([]byte(s)); got != want {
			t.Errorf("Valid(%.60q) = %v, encoding/json says %v", s, got, want)
		}
	}
}

// Every byte value at every position of a string, where the 8-byte fast path and the byte loop meet, and at the
// start, middle and end of a string long enough for the quote-to-quote path (longString).
func TestValidStringBytes(t *testing.T) {
	long := longString + 45
	var at []int
	for pos := range 20 {
		at = append(at, pos, long/2-10+pos, long-20+pos)
	}
	for c := range 256 {
		for pos := range 20 {
			s := []byte(`"` + strings.Repeat("A", 24) + `"`)
			s[1+pos] = byte(c)
			for _, in := range [][]byte{s, append([]byte(`{"k":`), append(s, '}')...)} {
				if got, want := Valid(in), json.Valid(in); got != want {
					t.Fatalf("Valid(%q) = %v, encoding/json says %v", in, got, want)
				}
			}
		}
		for _, pos := range at {
			s := []byte(`"` + strings.Repeat("A", long) + `"`)
			s[1+pos] = byte(c)
			for _, in := range [][]byte{s, append([]byte(`{"k":`), append(s, '}')...)} {
				if got, want := Valid(in), json.Valid(in); got != want {
					t.Fatalf("Valid(%q) = %v, encoding/json says %v", in, got, want)
				}
			}
		}
	}
}

func FuzzValid(f *testing.F) {
	for _, s := range validSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if got, want := Valid(b), json.Valid(b); got != want {
			t.Fatalf("Valid(%q) = %v, encoding/json says %v", b, got, want)
		}
	})
}

func BenchmarkValid(b *testing.B) {
	frame := []byte(`{"jsonrpc":"2.0","method":"file/upload/chunk","params":{"upload_id":"0123456789abcdef0123456789abcdef","offset":0,"data_b64":"` +
		strings.Repeat("QUJD", 1<<20/3) + `"},"id":3}`)
	b.Run("jsonrpc", func(b *testing.B) {
		b.SetBytes(int64(len(frame)))
		for b.Loop() {
			Valid(frame)
		}
	})
	b.Run("encoding_json", func(b *testing.B) {
		b.SetBytes(int64(len(frame)))
		for b.Loop() {
			json.Valid(frame)
		}
	})
}

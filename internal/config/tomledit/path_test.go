package tomledit

import (
	"errors"
	"reflect"
	"testing"
	"unicode/utf8"
)

func TestParsePath(t *testing.T) {
	good := map[string]Path{
		"users.example.uid":                       {"users", "example", "uid"},
		`providers.models.openai."gpt-4.1".model`: {"providers", "models", "openai", "gpt-4.1", "model"},
		`a."q\"uote\\d".b`:                        {"a", `q"uote\d`, "b"},
		`"".x`:                                    {"", "x"},
		"rpc.max-frame-bytes":                     {"rpc", "max-frame-bytes"},
	}
	for in, want := range good {
		got, err := ParsePath(in)
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("ParsePath(%q) = %q, %v", in, got, err)
		}
		if got.String() != in {
			t.Errorf("String() = %q, want %q", got.String(), in)
		}
	}
	for _, bad := range []string{"", "a..b", "a.", ".a", `a."b`, `a."b"c`, "a b", `a.b\c`, `"a\x"`} {
		if _, err := ParsePath(bad); !errors.Is(err, ErrInvalidPath) {
			t.Errorf("ParsePath(%q) err = %v", bad, err)
		}
	}
}

func FuzzParsePath(f *testing.F) {
	for _, s := range []string{"users.example.uid", `providers.models.openai."gpt-4.1".model`, `a."\\\"".b`, `""`, "a..b", "é.ü"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		p, err := ParsePath(s)
		if err != nil {
			return
		}
		q, err := ParsePath(p.String())
		if err != nil || !reflect.DeepEqual(p, q) {
			t.Fatalf("round trip %q -> %q -> %q, %v", s, p.String(), q, err)
		}
	})
}

func FuzzFormatPath(f *testing.F) {
	f.Add("users", "ex.ample", "uid")
	f.Add("", "\"\\", " x ")
	f.Fuzz(func(t *testing.T, a, b, c string) {
		p := Path{a, b, c}
		if !utf8.ValidString(p.String()) {
			return
		}
		q, err := ParsePath(p.String())
		if err != nil || !reflect.DeepEqual(p, q) {
			t.Fatalf("parse(format(%q)) = %q, %v", p, q, err)
		}
	})
}

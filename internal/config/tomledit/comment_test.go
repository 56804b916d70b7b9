package tomledit

import (
	"errors"
	"strings"
	"testing"
)

func TestComment(t *testing.T) {
	cases := []struct {
		name, in string
		path     Path
		comment  string
		want     string
	}{
		{"first comment", "[a]\nx = 1\n", Path{"a", "x"}, "why", "[a]\n# why\nx = 1\n"},
		{"replaces old, keeps blank line", "[a]\ny = 2\n\n# old\nx = 1\n", Path{"a", "x"}, "new",
			"[a]\ny = 2\n\n# new\nx = 1\n"},
		{"multi-line", "x = 1\n", Path{"x"}, "one\ntwo", "# one\n# two\nx = 1\n"},
		{"empty strips", "[a]\n# stale\nx = 1\n", Path{"a", "x"}, "", "[a]\nx = 1\n"},
		{"leaves the previous key's trailing comment", "[a]\ny = 2 # mine\nx = 1\n", Path{"a", "x"}, "c",
			"[a]\ny = 2 # mine\n# c\nx = 1\n"},
		{"comment above the header stays", "# section\n[a]\nx = 1\n", Path{"a", "x"}, "c",
			"# section\n[a]\n# c\nx = 1\n"},
		{"crlf", "[a]\r\nx = 1\r\n", Path{"a", "x"}, "c", "[a]\r\n# c\r\nx = 1\r\n"},
		{"looks like toml", "x = 1\n", Path{"x"}, "y = 2\n[b]", "# y = 2\n# [b]\nx = 1\n"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := Comment("f", []byte(c.in), c.path, c.comment)
			if err != nil || string(got) != c.want {
				t.Fatalf("Comment = %q, %v\nwant %q", got, err, c.want)
			}
		})
	}
	for _, c := range []struct {
		in, comment, want string
		path              Path
	}{
		{"[a]\nx = 1\n", "c", "not set in the file", Path{"a", "y"}},
		{"a = { x = 1 }\n", "c", "inline", Path{"a", "x"}},
		{"x = 1\n", "a\rb", "control character", Path{"x"}},
		{"x = 1\n", "a\x00b", "control character", Path{"x"}},
		{"x = 1\n", strings.Repeat("c", MaxCommentBytes+1), "longer than", Path{"x"}},
	} {
		_, err := Comment("f", []byte(c.in), c.path, c.comment)
		if !errors.Is(err, ErrNotEditable) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Comment(%q, %v, %q) err = %v, want ErrNotEditable saying %q", c.in, c.path, c.comment, err, c.want)
		}
	}
}

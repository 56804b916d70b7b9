package config

import (
	"reflect"
	"testing"

	"github.com/zeroclaw-go/zeroclaw/internal/config/tomledit"
)

// inlineLiteral writes back what it is given: any writable value a TOML document holds, written inline and
// parsed again, is the same value (the inline mcp.servers array is rewritten this way when its secrets are
// encrypted, so a difference would corrupt the user's servers).
func FuzzInlineLiteralRoundTrip(f *testing.F) {
	for _, s := range []string{`[{ name = "a", env = { K = "v" } }]`, `[1, 2.5, true, "x\n\"y"]`, `{ "a b" = { c = [[]] } }`, `-0.0`, `1e300`, `"\u00e9"`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := tomledit.Parse("f.toml", []byte("v = "+s+"\n"))
		if err != nil || len(d.Leaves) == 0 {
			return
		}
		var v any
		for _, l := range d.Leaves {
			if len(l.Path) == 1 && l.Path[0] == "v" && !l.Inline {
				v = l.Value
			}
		}
		if v == nil || !inlineWritable(v) {
			return
		}
		out := inlineLiteral(v)
		d2, err := tomledit.Parse("g.toml", []byte("v = "+out+"\n"))
		if err != nil {
			t.Fatalf("%q written as %q, which does not parse: %v", s, out, err)
		}
		for _, l := range d2.Leaves {
			if len(l.Path) == 1 && l.Path[0] == "v" && !l.Inline {
				if !reflect.DeepEqual(l.Value, v) {
					t.Fatalf("%q -> %q: %#v != %#v", s, out, l.Value, v)
				}
				return
			}
		}
		t.Fatalf("%q written as %q lost its value", s, out)
	})
}

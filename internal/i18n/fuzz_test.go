package i18n

import (
	"strings"
	"testing"
)

// FuzzParse: any input parses without panicking; every entry accepted formats without panicking, and a
// pattern without placeables formats to itself.
func FuzzParse(f *testing.F) {
	for _, l := range Locales() {
		b, _ := builtinFS.ReadFile("locales/" + l.Code + "/" + CatalogFile)
		f.Add(string(b))
	}
	f.Add("a = {\"\\\"\"}\nb = { $n ->\n *[other] x\n}\n")
	f.Add("k = {$x\n")
	f.Fuzz(func(t *testing.T, src string) {
		entries, _ := Parse(src)
		for _, e := range entries {
			if !validKey(e.Key) {
				t.Fatalf("bad key %q", e.Key)
			}
			if e.Var == "" {
				out := render(mustSegments(e.Pattern), map[string]any{})
				if !strings.ContainsAny(e.Pattern, "{}") && out != e.Pattern {
					t.Fatalf("%q formats to %q", e.Pattern, out)
				}
				continue
			}
			if _, ok := e.Variants["other"]; !ok {
				t.Fatalf("selector without other: %+v", e)
			}
		}
	})
}

package gateway

import (
	"regexp"
	"strings"
	"testing"
)

// sessionIDShaped accepts exactly what the regexp it replaced accepted.
func FuzzSessionIDShaped(f *testing.F) {
	shape := regexp.MustCompile(`^[A-Za-z0-9._-]{1,128}$`)
	for _, s := range []string{"", "a", "abc-DEF_0.9", strings.Repeat("a", 128), strings.Repeat("a", 129), "a b", "é", "a\n", "../x", "a/b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := sessionIDShaped(s), shape.MatchString(s); got != want {
			t.Fatalf("sessionIDShaped(%q) = %v, the regexp says %v", s, got, want)
		}
	})
}

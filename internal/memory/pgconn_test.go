package memory

import (
	"slices"
	"testing"
	"time"
)

// Text arrays go to the server in the array input form and come back in its output form, which quotes only
// elements that need it; both directions keep quotes, backslashes, commas, braces and spaces.
func TestPGArrayText(t *testing.T) {
	in := []string{"plain", `with "quotes"`, `back\slash`, "a,b", "{braces}", "two words", ""}
	got, err := pgParseArray(pgArrayLiteral(in))
	if err != nil || !slices.Equal(got, in) {
		t.Fatalf("round trip of %q: %q, %v", in, got, err)
	}
	// As PostgreSQL prints them: bare when it can, quoted otherwise.
	got, err = pgParseArray([]byte(`{agent_id,key,"two words","with \"q\"","back\\slash"}`))
	if want := []string{"agent_id", "key", "two words", `with "q"`, `back\slash`}; err != nil || !slices.Equal(got, want) {
		t.Fatalf("server form: %q, %v; want %q", got, err, want)
	}
	if got, err := pgParseArray([]byte(`{}`)); err != nil || len(got) != 0 {
		t.Fatalf("empty array: %q, %v", got, err)
	}
	for _, bad := range []string{``, `x`, `{"open}`, `{"a"b}`} {
		if _, err := pgParseArray([]byte(bad)); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

// timestamptz as the connection prints it (DateStyle ISO, TimeZone UTC), with and without fractional seconds.
func TestPGParseTime(t *testing.T) {
	for s, want := range map[string]time.Time{
		"2025-11-02 08:00:00+00":        time.Date(2025, 11, 2, 8, 0, 0, 0, time.UTC),
		"2025-11-02 08:00:00.123456+00": time.Date(2025, 11, 2, 8, 0, 0, 123456000, time.UTC),
	} {
		got, err := pgParseTime([]byte(s))
		if err != nil || !got.Equal(want) {
			t.Errorf("%s: %v, %v; want %v", s, got, err, want)
		}
	}
	if _, err := pgParseTime([]byte("Sun Nov 02 08:00:00 2025 UTC")); err == nil {
		t.Error("a non-ISO DateStyle parsed")
	}
}

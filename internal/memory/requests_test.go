package memory

import (
	"errors"
	"strings"
	"testing"
)

// The request layer's defaults: a store without agent or category writes the default agent's "user" memory, a
// search without a limit returns DefaultSearchLimit previews, and misses and bad input are sentinels.
func TestRequestDefaults(t *testing.T) {
	m := openManager(t, t.TempDir(), testConfig(nil))
	ctx := t.Context()
	long := strings.Repeat("é", PreviewBytes) // two bytes each: the cut lands on a character boundary
	for i := range DefaultSearchLimit + 2 {
		if err := m.Store(ctx, "", "k"+string(rune('a'+i)), "needle "+long, "", ""); err != nil {
			t.Fatal(err)
		}
	}
	e, err := m.Get(ctx, "default", "ka")
	if err != nil || e.Category != DefaultRequestCategory || e.Content != "needle "+long {
		t.Fatalf("get: %+v %v", e, err)
	}
	found, err := m.Search(ctx, "", Query{Text: "needle"})
	if err != nil || len(found) != DefaultSearchLimit {
		t.Fatalf("search: %d %v", len(found), err)
	}
	if c := found[0].Content; !strings.HasSuffix(c, "…") || len(c) > PreviewBytes+len("…") {
		t.Fatalf("preview: %q", c)
	}
	if _, err := m.Search(ctx, "", Query{Text: " "}); !errors.Is(err, ErrInvalid) {
		t.Fatalf("empty query: %v", err)
	}
	if _, err := m.Search(ctx, "", Query{Text: "x", Limit: -1}); !errors.Is(err, ErrInvalid) {
		t.Fatalf("negative limit: %v", err)
	}
	if err := m.Delete(ctx, "", "nope"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("delete of a missing key: %v", err)
	}
	if err := m.Delete(ctx, "other", "ka"); !errors.Is(err, ErrForeign) {
		t.Fatalf("delete of another agent's key: %v", err)
	}
	if err := m.Delete(ctx, "", "ka"); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Get(ctx, "", "ka"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("get after delete: %v", err)
	}
	var none *Manager
	if _, err := none.List(ctx, "", Filter{}); !errors.Is(err, ErrUnavailable) {
		t.Fatalf("nil manager: %v", err)
	}
}

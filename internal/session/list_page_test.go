package session

import (
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/zeroclaw-go/zeroclaw/internal/api"
)

// session/list pages with limit and offset (the dashboard's sessions page): consecutive pages are disjoint,
// together they are the whole list in its order, a page past the end is empty, and a negative offset is refused.
func TestListPagesWithOffset(t *testing.T) {
	e := newEnv(t, nil)
	for i := range 7 {
		e.open(admin, api.SessionNewParams{SessionID: fmt.Sprintf("s%d", i)})
	}
	ids := func(p api.SessionListParams) []string {
		t.Helper()
		res, err := e.m.List(t.Context(), admin, p)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, s := range res.Sessions {
			out = append(out, s.SessionID)
		}
		return out
	}
	all := ids(api.SessionListParams{})
	if len(all) != 7 {
		t.Fatalf("the whole list is %v, want 7 sessions", all)
	}
	var paged []string
	for off := 0; off < 9; off += 3 {
		page := ids(api.SessionListParams{Limit: 3, Offset: off})
		if len(page) > 3 {
			t.Fatalf("offset %d: %d rows past the limit 3", off, len(page))
		}
		paged = append(paged, page...)
	}
	if !slices.Equal(paged, all) {
		t.Fatalf("the pages joined are %v, want %v", paged, all)
	}
	if got := ids(api.SessionListParams{Limit: 3, Offset: 7}); len(got) != 0 {
		t.Fatalf("a page past the end holds %v", got)
	}
	if _, err := e.m.List(t.Context(), admin, api.SessionListParams{Limit: 2, Offset: -5}); !errors.Is(err, ErrInvalid) {
		t.Fatalf("a negative offset: %v, want ErrInvalid", err)
	}
	if got := ids(api.SessionListParams{Offset: 5}); !slices.Equal(got, all[5:]) {
		t.Fatalf("an offset without a limit gives %v, want %v", got, all[5:])
	}
}

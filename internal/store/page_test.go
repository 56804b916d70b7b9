package store

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

// Page reads back from the end within a byte budget, always returning at least one message, and Message reads
// one by index.
func TestPageByteBudget(t *testing.T) {
	s, _ := openTestChat(t)
	ctx := t.Context()
	sizes := []int{10, 500, 20, 30, 1000, 5}
	for i, n := range sizes {
		mustAppend(t, s, "k", "user", strings.Repeat(string(rune('a'+i)), n), t0)
	}
	for _, tc := range []struct {
		limit, before, max int
		want               []int
	}{
		{0, -1, 0, []int{0, 1, 2, 3, 4, 5}},
		{0, -1, 1005, []int{4, 5}},
		{0, -1, 1004, []int{5}},
		{0, -1, 1, []int{5}},
		{0, 5, 1, []int{4}},      // one message over the budget still comes alone
		{0, 4, 549, []int{2, 3}}, // 500 more would pass 549
		{2, 4, 0, []int{2, 3}},
		{0, 0, 100, nil},
	} {
		msgs, total, start, err := s.Page(ctx, "k", tc.limit, tc.before, tc.max)
		if err != nil {
			t.Fatal(err)
		}
		wantStart := tc.before
		if len(tc.want) > 0 {
			wantStart = tc.want[0]
		}
		if total != len(sizes) || start != wantStart || !slices.Equal(indices(msgs), tc.want) {
			t.Errorf("Page(limit %d, before %d, max %d) = %v start %d total %d, want %v", tc.limit, tc.before, tc.max,
				indices(msgs), start, total, tc.want)
		}
		for _, m := range msgs {
			if len(m.Content) != sizes[m.Index] {
				t.Errorf("message %d has %d bytes", m.Index, len(m.Content))
			}
		}
	}
	m, total, err := s.Message(ctx, "k", 4)
	if err != nil || m.Index != 4 || len(m.Content) != 1000 || total != len(sizes) {
		t.Fatalf("Message(4) = %d %d %d %v", m.Index, len(m.Content), total, err)
	}
	for _, i := range []int{-1, 6} {
		if _, total, err := s.Message(ctx, "k", i); !errors.Is(err, ErrNotFound) || total != len(sizes) {
			t.Errorf("Message(%d): %v (total %d), want ErrNotFound", i, err, total)
		}
	}
}
